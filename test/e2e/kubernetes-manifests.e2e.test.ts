import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { parseConfig, type GatewayConfig } from '../../src/config/gateway-config.ts';
import { loadSettings } from '../../src/config/settings.ts';
import {
  findTool,
  kubernetesValidate,
  kustomizeVersion,
  OVERLAYS,
  parseObjects,
  renderOverlay,
  type K8sObject,
} from '../support/kubernetes.ts';
import { freePort, spawnNode, waitFor, type GatewayProcess } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * deploy/kubernetes rendered by `kubectl kustomize` (every overlay), validated against the
 * Kubernetes schemas (kubernetes-validate, strict) and KEDA's (@kubernetes-models/keda), and held
 * to what the processes read: env names and values (src/config/settings.ts, config.yaml's
 * api_key_env), probe paths and ports (src/http/routes/health.ts), start commands (Procfile),
 * secret names (the walk in docs/deployment.md), and the series the ScaledObjects query. Then the
 * API and a worker are started with a rendered container's command and environment and probed as
 * the kubelet would.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const kubectl = findTool('kubectl', 'KUBECTL');
const validator = findTool('kubernetes-validate', 'KUBERNETES_VALIDATE');
if (!kubectl)
  console.warn(
    '\n*** SKIPPED: kubectl is not installed (bash scripts/install-k8s-tools.sh): the Kubernetes manifests are not rendered or checked ***\n',
  );
if (kubectl && !validator)
  console.warn(
    '\n*** SKIPPED: kubernetes-validate is not installed (bash scripts/install-k8s-tools.sh): the manifests are not validated against the Kubernetes schemas ***\n',
  );

/** Kubernetes versions validated against: the oldest this deployment claims and kubernetes-validate's newest. */
const KUBERNETES_VERSIONS = ['1.29', '1.37'];
const KEYS_SECRET = 'llm-gateway-keys';
const REDIS_SECRET = 'llm-gateway-redis';
/** The stand-in for API_KEYS when the rendered containers run. */
const API_KEY = 'gw_k8s_contract_key_0123456789';

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  envFrom?: { configMapRef?: { name: string } }[];
  volumeMounts?: { name: string; mountPath: string }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Record<string, string> };
  securityContext?: Record<string, unknown>;
}
interface Probe {
  httpGet?: { path: string; port: string | number };
}

const rendered = new Map<string, K8sObject[]>();
const renderedFiles = new Map<string, string>();

beforeAll(() => {
  if (!kubectl) return;
  const dir = mkdtempSync(join(tmpdir(), 'gw-k8s-'));
  for (const overlay of OVERLAYS) {
    const text = renderOverlay(kubectl, overlay);
    const file = join(dir, `${overlay.replaceAll('/', '-')}.yaml`);
    writeFileSync(file, text);
    renderedFiles.set(overlay, file);
    rendered.set(overlay, parseObjects(text));
  }
});

function objects(overlay: string, kind?: string): K8sObject[] {
  const all = rendered.get(overlay) ?? [];
  return kind ? all.filter((o) => o.kind === kind) : all;
}

function one(overlay: string, kind: string, name: string): K8sObject {
  const found = objects(overlay, kind).find((o) => o.metadata.name === name);
  if (!found) throw new Error(`${overlay}: no ${kind} ${name}`);
  return found;
}

/** The gateway's Deployments (the API and the workers), not Redis. */
function gatewayDeployments(overlay: string): K8sObject[] {
  return objects(overlay, 'Deployment').filter((d) => d.metadata.labels?.['app.kubernetes.io/name'] === 'llm-gateway');
}

function container(deployment: K8sObject): Container {
  return deployment.spec.template.spec.containers[0] as Container;
}

/** The plain values a container's environment gets: its ConfigMaps through envFrom, then its own `value`s. */
function literalEnv(overlay: string, c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of c.envFrom ?? []) {
    if (!source.configMapRef) throw new Error(`${c.name}: envFrom other than a ConfigMap`);
    Object.assign(env, one(overlay, 'ConfigMap', source.configMapRef.name).data);
  }
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

function secretRefs(c: Container): { env: string; name: string; key: string; optional: boolean }[] {
  return (c.env ?? []).flatMap((e) =>
    e.valueFrom?.secretKeyRef
      ? [
          {
            env: e.name,
            name: e.valueFrom.secretKeyRef.name,
            key: e.valueFrom.secretKeyRef.key,
            optional: e.valueFrom.secretKeyRef.optional === true,
          },
        ]
      : [],
  );
}

/** config.yaml as the containers see it: the file CONFIG_PATH names, in the ConfigMap mounted at its folder. */
function mountedConfig(overlay: string, deployment: K8sObject): GatewayConfig {
  const c = container(deployment);
  const configPath = loadSettings(literalEnv(overlay, c)).CONFIG_PATH;
  const mount = (c.volumeMounts ?? []).find((m) => m.mountPath === posix.dirname(configPath));
  if (!mount) throw new Error(`${deployment.metadata.name}: nothing mounted at ${posix.dirname(configPath)}`);
  const volume = (deployment.spec.template.spec.volumes as { name: string; configMap?: { name: string } }[]).find(
    (v) => v.name === mount.name,
  );
  if (!volume?.configMap) throw new Error(`${deployment.metadata.name}: ${mount.name} is not a ConfigMap`);
  const text = one(overlay, 'ConfigMap', volume.configMap.name).data?.[posix.basename(configPath)];
  if (text === undefined)
    throw new Error(
      `${deployment.metadata.name}: ConfigMap ${volume.configMap.name} has no ${posix.basename(configPath)}`,
    );
  return parseConfig(text);
}

function namedPort(c: Container, port: string | number): number {
  if (typeof port === 'number') return port;
  const found = c.ports?.find((p) => p.name === port);
  if (!found) throw new Error(`${c.name}: no port named ${port}`);
  return found.containerPort;
}

/** The Procfile's commands, split as a container's `command`. */
function procfile(): Map<string, string[]> {
  const lines = readFileSync(join(ROOT, 'Procfile'), 'utf8')
    .split('\n')
    .filter((l) => l.includes(':'));
  return new Map(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).trim(),
      l
        .slice(l.indexOf(':') + 1)
        .trim()
        .split(/\s+/),
    ]),
  );
}

/** Keys of `kubectl create secret generic <name> --from-literal=KEY=...` in docs/deployment.md. */
function documentedSecretKeys(name: string): Set<string> {
  const text = readFileSync(join(ROOT, 'docs/deployment.md'), 'utf8').replace(/\\\n/g, ' ');
  const line = text.split('\n').find((l) => l.includes(`create secret generic ${name} `));
  return new Set([...(line ?? '').matchAll(/--from-literal=([A-Za-z_][A-Za-z0-9_]*)=/g)].map((m) => m[1] as string));
}

/** Whether the settings read `name`: set to `value`, it comes out of loadSettings defined (optional ones are absent unless set). */
function isSetting(name: string, value: string): boolean {
  try {
    return (loadSettings({ [name]: value }) as Record<string, unknown>)[name] !== undefined;
  } catch {
    return true; // refused as invalid: read, and the value check below names it
  }
}
/** Read outside settings.ts: by the worker entry point (workers/provider-worker.ts). */
const OTHER_NAMES = new Set(['WORKER_PROVIDERS']);

describe.skipIf(!kubectl)('kubectl kustomize renders every overlay', () => {
  it('with a kustomize that reads the manifests (v5 or newer)', () => {
    const version = kustomizeVersion(kubectl as string);
    expect(version, 'kubectl reports no kustomize version').toBeDefined();
    expect(Number(/^v(\d+)/.exec(version ?? '')?.[1])).toBeGreaterThanOrEqual(5);
  });

  it.each(OVERLAYS)(
    '%s: the API, its Service, HPA and PDB, and a worker Deployment, PDB and ScaledObject per provider',
    (overlay) => {
      const kinds = objects(overlay).map((o) => `${o.kind}/${o.metadata.name}`);
      for (const expected of [
        'Deployment/llm-gateway-api',
        'Service/llm-gateway-api',
        'HorizontalPodAutoscaler/llm-gateway-api',
        'PodDisruptionBudget/llm-gateway-api',
      ]) {
        expect(kinds).toContain(expected);
      }
      const providers = mountedConfig(overlay, one(overlay, 'Deployment', 'llm-gateway-api')).providers.map(
        (p) => p.name,
      );
      expect(providers.length).toBeGreaterThan(0);
      const workers = gatewayDeployments(overlay).filter(
        (d) => d.metadata.labels?.['app.kubernetes.io/component'] === 'worker',
      );
      expect(workers.map((d) => d.metadata.labels?.['llm-gateway/provider']).sort()).toEqual([...providers].sort());
      for (const w of workers) {
        expect(kinds).toContain(`PodDisruptionBudget/${w.metadata.name}`);
        expect(kinds).toContain(`ScaledObject/${w.metadata.name}`);
      }
    },
  );

  it("the base's config.yaml is the repository's (the same providers, models and key variables)", () => {
    const shipped = parseConfig(readFileSync(join(ROOT, 'config.yaml'), 'utf8'));
    const mounted = mountedConfig('base', one('base', 'Deployment', 'llm-gateway-api'));
    const shape = (c: GatewayConfig) =>
      c.providers.map((p) => ({ name: p.name, key: p.api_key_env, models: p.models }));
    expect(shape(mounted)).toEqual(shape(shipped));
  });

  it('the overlays differ only in where Redis is', () => {
    const redisEnv = (overlay: string) => {
      const env = literalEnv(overlay, container(one(overlay, 'Deployment', 'llm-gateway-api')));
      return Object.fromEntries(
        Object.entries(env).filter(([k]) => k.startsWith('REDIS_') && k !== 'REDIS_KEY_PREFIX'),
      );
    };
    expect(redisEnv('overlays/single-redis')).toEqual({ REDIS_HOST: 'llm-gateway-redis', REDIS_PORT: '6379' });
    expect(
      loadSettings(
        literalEnv('overlays/sentinel', container(one('overlays/sentinel', 'Deployment', 'llm-gateway-api'))),
      ).REDIS_SENTINELS.length,
    ).toBeGreaterThan(0);
    expect(
      loadSettings(
        literalEnv('overlays/redis-cluster', container(one('overlays/redis-cluster', 'Deployment', 'llm-gateway-api'))),
      ).REDIS_CLUSTER_NODES.length,
    ).toBeGreaterThan(0);
    for (const overlay of OVERLAYS.slice(1)) {
      for (const d of gatewayDeployments(overlay)) {
        expect(
          secretRefs(container(d)).find((r) => r.env === 'REDIS_PASSWORD'),
          `${overlay} ${d.metadata.name}`,
        ).toEqual({ env: 'REDIS_PASSWORD', name: REDIS_SECRET, key: 'password', optional: false });
      }
    }
  });
});

describe.skipIf(!kubectl || !validator)('the rendered manifests validate against the schemas', () => {
  it.each(KUBERNETES_VERSIONS)(
    'Kubernetes %s (kubernetes-validate --strict): every object but the KEDA ones passes',
    (version) => {
      const run = kubernetesValidate(validator as string, version, [...renderedFiles.values()]);
      expect(run.status, run.output).toBe(0);
      const total = [...rendered.values()].flat().length;
      const scaledObjects = [...rendered.values()].flat().filter((o) => o.kind === 'ScaledObject').length;
      expect(run.output.match(/^INFO .* passed for resource/gm) ?? []).toHaveLength(total - scaledObjects);
      // The only objects without a Kubernetes schema are KEDA's, checked below.
      const warnings = run.output.split('\n').filter((l) => l.startsWith('WARN'));
      expect(
        warnings.every((l) => l.includes('kind ScaledObject with api version keda.sh/v1alpha1')),
        warnings.join('\n'),
      ).toBe(true);
      expect(run.output).not.toMatch(/^ERROR/m);
    },
  );

  it('a misspelt field fails the strict check (the validator is not a formality)', () => {
    const api = structuredClone(one('overlays/single-redis', 'Deployment', 'llm-gateway-api'));
    api.spec.template.spec.containers[0].livenessprobe = api.spec.template.spec.containers[0].livenessProbe;
    const file = join(mkdtempSync(join(tmpdir(), 'gw-k8s-bad-')), 'bad.yaml');
    writeFileSync(file, stringify(api));
    const run = kubernetesValidate(validator as string, '1.37', [file]);
    expect(run.status, run.output).not.toBe(0);
    expect(run.output).toContain('livenessprobe');
  });
});

describe.skipIf(!kubectl)("KEDA's ScaledObject schema (@kubernetes-models/keda)", () => {
  it.each(OVERLAYS)('%s: every ScaledObject validates', (overlay) => {
    const scaled = objects(overlay, 'ScaledObject');
    expect(scaled.length).toBeGreaterThan(0);
    for (const so of scaled) expect(() => new ScaledObject(so as never).validate(), so.metadata.name).not.toThrow();
  });

  it('a wrong type fails it', () => {
    const so = structuredClone(objects('base', 'ScaledObject')[0] as K8sObject);
    so.spec.minReplicaCount = 'one';
    expect(() => new ScaledObject(so as never).validate()).toThrow(/minReplicaCount/);
  });
});

describe.skipIf(!kubectl)('the manifests match what the processes read', () => {
  it.each(OVERLAYS)(
    '%s: every variable is one the gateway reads, and every plain value passes its validation',
    (overlay) => {
      for (const d of gatewayDeployments(overlay)) {
        const c = container(d);
        const providerKeys = new Set(mountedConfig(overlay, d).providers.map((p) => p.api_key_env));
        const env = literalEnv(overlay, c);
        const names = [...Object.keys(env), ...secretRefs(c).map((r) => r.env)];
        const unknown = names.filter(
          (n) => !isSetting(n, env[n] ?? 'stand-in') && !providerKeys.has(n) && !OTHER_NAMES.has(n),
        );
        expect(unknown, `${d.metadata.name} sets variables nothing reads`).toEqual([]);
        expect(() => loadSettings(literalEnv(overlay, c)), d.metadata.name).not.toThrow();
      }
    },
  );

  it.each(OVERLAYS)(
    "%s: start commands are the Procfile's, and each worker serves a provider of config.yaml",
    (overlay) => {
      const commands = procfile();
      expect(container(one(overlay, 'Deployment', 'llm-gateway-api')).command).toEqual(commands.get('web'));
      for (const d of gatewayDeployments(overlay).filter(
        (x) => x.metadata.labels?.['app.kubernetes.io/component'] === 'worker',
      )) {
        const provider = d.metadata.labels?.['llm-gateway/provider'] as string;
        const command = [...(container(d).command ?? []), ...(container(d).args ?? [])];
        expect(command.at(-1)).toBe(provider);
        expect(mountedConfig(overlay, d).providers.map((p) => p.name)).toContain(provider);
        expect(command).toEqual(commands.get(`worker_${provider.replace('provider_', '')}`));
      }
    },
  );

  it.each(OVERLAYS)(
    '%s: probes use the health routes on the ports the processes listen on, without a key',
    (overlay) => {
      const api = container(one(overlay, 'Deployment', 'llm-gateway-api'));
      const settings = loadSettings(literalEnv(overlay, api));
      expect(api.livenessProbe?.httpGet?.path).toBe('/health/live');
      expect(api.startupProbe?.httpGet?.path).toBe('/health/live');
      expect(api.readinessProbe?.httpGet?.path).toBe('/health/ready');
      for (const probe of [api.livenessProbe, api.startupProbe, api.readinessProbe]) {
        expect(namedPort(api, probe?.httpGet?.port ?? -1)).toBe(settings.PORT);
        // The kubelet sends no key: a probe path outside PUBLIC_PATHS would get 401 and fail.
        expect(settings.PUBLIC_PATHS).toContain(probe?.httpGet?.path);
      }
      expect(namedPort(api, 'http')).toBe(settings.PORT);
      expect(namedPort(api, 'metrics')).toBe(settings.METRICS_PORT);
      // Metrics stay behind a key (docs/decisions/metrics-endpoint.md): Prometheus sends one.
      expect(settings.PUBLIC_PATHS).not.toContain('/metrics');
      for (const d of gatewayDeployments(overlay).filter(
        (x) => x.metadata.labels?.['app.kubernetes.io/component'] === 'worker',
      )) {
        const worker = container(d);
        const ws = loadSettings(literalEnv(overlay, worker));
        expect(worker.livenessProbe?.httpGet?.path).toBe('/metrics');
        expect(namedPort(worker, worker.livenessProbe?.httpGet?.port ?? -1)).toBe(ws.WORKER_METRICS_PORT);
        expect(ws.PROMETHEUS_METRICS_ENABLED).toBe(true);
      }
    },
  );

  it.each(OVERLAYS)('%s: the Service, PDBs and HPA select the pods they mean', (overlay) => {
    const api = one(overlay, 'Deployment', 'llm-gateway-api');
    const podLabels = (d: K8sObject) => d.spec.template.metadata.labels as Record<string, string>;
    const selects = (selector: Record<string, string>, d: K8sObject) =>
      Object.entries(selector).every(([k, v]) => podLabels(d)[k] === v);
    const service = one(overlay, 'Service', 'llm-gateway-api');
    expect(
      gatewayDeployments(overlay)
        .filter((d) => selects(service.spec.selector, d))
        .map((d) => d.metadata.name),
    ).toEqual(['llm-gateway-api']);
    for (const port of service.spec.ports as { targetPort: string }[])
      expect(() => namedPort(container(api), port.targetPort)).not.toThrow();
    for (const pdb of objects(overlay, 'PodDisruptionBudget')) {
      const matched = objects(overlay, 'Deployment').filter((d) => selects(pdb.spec.selector.matchLabels, d));
      expect(
        matched.map((d) => d.metadata.name),
        pdb.metadata.name,
      ).toEqual([pdb.metadata.name]);
    }
    const hpa = one(overlay, 'HorizontalPodAutoscaler', 'llm-gateway-api');
    expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'llm-gateway-api' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    // Utilization is measured against the request: without one the HPA cannot act.
    expect(container(api).resources?.requests?.cpu).toBeDefined();
    expect(api.spec.replicas, 'the HPA owns the count').toBeUndefined();
  });

  it.each(OVERLAYS)('%s: one ScaledObject per worker on its own queue, never to zero', (overlay) => {
    for (const d of gatewayDeployments(overlay).filter(
      (x) => x.metadata.labels?.['app.kubernetes.io/component'] === 'worker',
    )) {
      const provider = d.metadata.labels?.['llm-gateway/provider'] as string;
      const so = one(overlay, 'ScaledObject', d.metadata.name);
      expect(so.spec.scaleTargetRef.name).toBe(d.metadata.name);
      // A provider without a live worker is answered 503 at once, so its queue would never fill to wake one.
      expect(so.spec.minReplicaCount).toBeGreaterThanOrEqual(1);
      expect(d.spec.replicas, 'KEDA owns the count').toBeUndefined();
      const [trigger] = so.spec.triggers as { type: string; metadata: Record<string, string> }[];
      expect(trigger?.type).toBe('prometheus');
      expect(trigger?.metadata.query).toBe(`max(gateway_queue_depth{provider="${provider}"})`);
      expect(Number(trigger?.metadata.threshold)).toBeGreaterThan(0);
    }
  });

  it.each(OVERLAYS)('%s: secrets are referenced by the names the processes read and the walk creates', (overlay) => {
    const documented = new Map([KEYS_SECRET, REDIS_SECRET].map((name) => [name, documentedSecretKeys(name)]));
    expect(documented.get(KEYS_SECRET)?.size, 'docs/deployment.md creates llm-gateway-keys').toBeGreaterThan(0);
    expect(documented.get(REDIS_SECRET)?.has('password'), 'docs/deployment.md creates llm-gateway-redis').toBe(true);
    const api = one(overlay, 'Deployment', 'llm-gateway-api');
    const providers = mountedConfig(overlay, api).providers;
    const apiRefs = secretRefs(container(api));
    for (const p of providers)
      expect(
        apiRefs.map((r) => r.env),
        `the API reads ${p.api_key_env}`,
      ).toContain(p.api_key_env);
    for (const d of gatewayDeployments(overlay)) {
      const refs = secretRefs(container(d));
      for (const ref of refs) {
        expect(documented.has(ref.name), `${d.metadata.name}: secret ${ref.name}`).toBe(true);
        if (ref.name === KEYS_SECRET) expect(ref.key, 'keys are named after their variable').toBe(ref.env);
        if (!ref.optional)
          expect(
            documented.get(ref.name)?.has(ref.key),
            `docs/deployment.md creates ${ref.name} without ${ref.key}`,
          ).toBe(true);
      }
      const provider = d.metadata.labels?.['llm-gateway/provider'];
      if (provider) {
        const keyEnv = providers.find((p) => p.name === provider)?.api_key_env;
        expect(
          refs.map((r) => r.env),
          `${d.metadata.name} reads its provider's key`,
        ).toContain(keyEnv);
        // A worker gets its own provider's key, not the others'.
        const others = providers.filter((p) => p.name !== provider).map((p) => p.api_key_env);
        expect(refs.filter((r) => others.includes(r.env))).toEqual([]);
      }
    }
    for (const keys of documented.values()) {
      const referenced = new Set(
        OVERLAYS.flatMap((o) => gatewayDeployments(o).flatMap((d) => secretRefs(container(d)).map((r) => r.key))),
      );
      for (const key of keys)
        expect(referenced.has(key), `docs/deployment.md creates ${key}, which nothing reads`).toBe(true);
    }
  });

  it.each(OVERLAYS)('%s: non-root as the image, and time to drain before the kill', (overlay) => {
    expect(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/^USER node$/m);
    for (const d of gatewayDeployments(overlay)) {
      const pod = d.spec.template.spec;
      const c = container(d);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
      const graceMs = loadSettings(literalEnv(overlay, c)).SHUTDOWN_GRACE_MS;
      const preStop = c.lifecycle?.preStop?.exec?.command;
      const preStopMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
      expect(pod.terminationGracePeriodSeconds * 1000, d.metadata.name).toBeGreaterThan(graceMs + preStopMs);
    }
  });
});

describe.skipIf(!kubectl)('the rendered containers, run as processes, answer their probes', () => {
  const overlay = 'overlays/single-redis';
  const prefix = uniquePrefix('k8s-manifests');
  const redis = testRedis();
  const running: GatewayProcess[] = [];

  afterAll(async () => {
    await Promise.all(running.map((p) => p.kill('SIGKILL')));
    await deletePrefix(redis, prefix);
    redis.disconnect();
  });

  /**
   * Runs a rendered container's command with its environment: ConfigMap values as rendered,
   * secrets stood in for, and only what cannot be the cluster's moved to this machine (Redis on
   * loopback, free ports, the mounted config.yaml written to a file, SQLite for the database).
   */
  async function runContainer(deployment: K8sObject, ports: Record<string, string>): Promise<GatewayProcess> {
    const c = container(deployment);
    const dir = mkdtempSync(join(tmpdir(), 'gw-k8s-run-'));
    const configPath = join(dir, 'config.yaml');
    const configMap = (deployment.spec.template.spec.volumes as { configMap?: { name: string } }[]).find(
      (v) => v.configMap,
    )?.configMap?.name as string;
    writeFileSync(configPath, one(overlay, 'ConfigMap', configMap).data?.['config.yaml'] as string);
    const env: Record<string, string> = { ...literalEnv(overlay, c) };
    for (const ref of secretRefs(c)) env[ref.env] = ref.env === 'API_KEYS' ? API_KEY : `stand-in-${ref.key}`;
    delete env.DATABASE_URL;
    delete env.REDIS_PASSWORD;
    Object.assign(env, ports, {
      CONFIG_PATH: configPath,
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: '6379',
      REDIS_KEY_PREFIX: prefix,
      KEY_DB_PATH: join(dir, 'keys.sqlite'),
      SEMANTIC_CACHE_ENABLED: 'false',
    });
    const [node, ...args] = [...(c.command ?? []), ...(c.args ?? [])];
    expect(node).toBe('node');
    const flags = args.filter((a) => a.startsWith('--'));
    const [script, ...rest] = args.filter((a) => !a.startsWith('--'));
    const proc = spawnNode(script as string, rest, env, {
      nodeFlags: flags.filter((f) => f !== '--experimental-strip-types'),
    });
    running.push(proc);
    return proc;
  }

  it('the API: startup, liveness and readiness answer 200 without a key; the worker: its liveness answers 200 and the API counts it; /metrics (with a key) carries the series KEDA queries, SIGTERM ends it and the worker within their grace', async () => {
    const deployment = one(overlay, 'Deployment', 'llm-gateway-api');
    const c = container(deployment);
    const http = await freePort();
    const metrics = await freePort();
    const api = await runContainer(deployment, { PORT: String(http), METRICS_PORT: String(metrics) });
    const byName: Record<string, number> = { http, metrics };
    const url = (probe: Probe | undefined) =>
      `http://127.0.0.1:${byName[String(probe?.httpGet?.port)]}${probe?.httpGet?.path}`;
    await waitFor(
      async () => (await fetch(url(c.startupProbe))).status === 200,
      30_000,
      `the API's startup probe:\n${api.output()}`,
    );
    for (const probe of [c.livenessProbe, c.readinessProbe]) {
      const res = await fetch(url(probe));
      expect(res.status, `${probe?.httpGet?.path}: ${await res.clone().text()}`).toBe(200);
    }
    // A path the manifests do not open still needs a key: PUBLIC_PATHS opened only what it lists.
    expect((await fetch(`http://127.0.0.1:${http}/v1/models`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${metrics}/metrics`)).status, 'a scrape without a key').toBe(401);
    const scrape = await (
      await fetch(`http://127.0.0.1:${metrics}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } })
    ).text();
    for (const so of objects(overlay, 'ScaledObject')) {
      const provider = /provider="([^"]+)"/.exec(
        (so.spec.triggers[0] as { metadata: { query: string } }).metadata.query,
      )?.[1];
      expect(scrape).toMatch(new RegExp(`^gateway_queue_depth\\{provider="${provider}"\\} 0$`, 'm'));
    }

    const workerDeployment = one(overlay, 'Deployment', 'llm-gateway-worker-provider-a');
    const workerProbe = container(workerDeployment).livenessProbe;
    const workerMetrics = await freePort();
    const worker = await runContainer(workerDeployment, { WORKER_METRICS_PORT: String(workerMetrics) });
    await waitFor(() => worker.output().includes('worker started'), 30_000, `the worker to start:\n${worker.output()}`);
    expect(workerProbe?.httpGet?.port).toBe('metrics');
    expect((await fetch(`http://127.0.0.1:${workerMetrics}${workerProbe?.httpGet?.path}`)).status).toBe(200);
    // The worker joined the API's Redis and prefix: the API counts it among provider_a's live workers.
    await waitFor(
      async () =>
        /^gateway_live_workers\{provider="provider_a"\} 1$/m.test(
          await (
            await fetch(`http://127.0.0.1:${metrics}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } })
          ).text(),
        ),
      15_000,
      'the API to see the worker',
    );

    // SIGTERM, as the kubelet sends it after the preStop hook: each process is gone before the kill.
    const started = Date.now();
    const [apiCode, workerCode] = await Promise.all([api.kill('SIGTERM'), worker.kill('SIGTERM')]);
    const preStopMs = Number(c.lifecycle?.preStop?.exec?.command[1] ?? 0) * 1000;
    expect(apiCode).toBe(0);
    expect(workerCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(
      deployment.spec.template.spec.terminationGracePeriodSeconds * 1000 - preStopMs,
    );
    expect(Date.now() - started).toBeLessThan(workerDeployment.spec.template.spec.terminationGracePeriodSeconds * 1000);
  }, 90_000);
});
