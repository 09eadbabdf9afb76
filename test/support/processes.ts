import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';

const ROOT = resolve(import.meta.dirname, '../..');

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Writes a config.yaml into a temp folder and returns its path. */
export function writeConfig(doc: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-config-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, stringify(doc));
  return path;
}

/** A child process of the gateway with its collected output. */
export interface GatewayProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Node flags of the gateway's own processes, as its Procfile, package.json,
 * Dockerfile and docker-compose start them: the young generation at its full
 * size from the start (docs/decisions/young-generation-size.md).
 */
const GATEWAY_NODE_FLAGS: readonly string[] = ['--min-semi-space-size=16'];

/** Options of {@link spawnNode}. */
export interface SpawnOptions {
  /** Checkout the script is relative to (another one, for A/B benchmarks). @defaultValue this repository */
  root?: string;
  /** Node flags after the type stripping. @defaultValue none */
  nodeFlags?: readonly string[];
}

/** Runs `script` (relative to the repository, or to `options.root`) with Node's type stripping. */
export function spawnNode(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  options: SpawnOptions = {},
): GatewayProcess {
  const root = options.root ?? ROOT;
  const child = spawn(
    process.execPath,
    ['--experimental-strip-types', ...(options.nodeFlags ?? []), join(root, script), ...args],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  return {
    child,
    output: () => out,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs one of the gateway's entry points (`src/server.ts`, `workers/provider-worker.ts`) with the Node flags its start commands use. */
export function spawnGatewayProcess(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  root?: string,
): GatewayProcess {
  return spawnNode(script, args, env, { nodeFlags: GATEWAY_NODE_FLAGS, ...(root ? { root } : {}) });
}

/** Polls until `check` resolves true, or throws after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** Environment for the API and the workers (PROVIDER_*_API_KEY, REDIS_KEY_PREFIX, API_KEYS...). */
  env: Record<string, string>;
  /** config.yaml document. */
  config: unknown;
  /** Provider names; one worker process each unless `workersPerProvider` says otherwise. */
  providers: readonly string[];
  workersPerProvider?: number;
  /** Extra env for the API only. */
  apiEnv?: Record<string, string>;
  /** Checkout whose code runs (A/B benchmarks against another commit). @defaultValue this repository */
  root?: string;
  /** How long a worker may take to log `worker started`, ms. @defaultValue 20000 */
  workerStartTimeoutMs?: number;
}

/** A running API process and its workers. */
export interface Gateway {
  baseUrl: string;
  port: number;
  configPath: string;
  api: GatewayProcess;
  workers: Map<string, GatewayProcess[]>;
  /** Starts one more worker for `provider`. */
  addWorker(provider: string): Promise<GatewayProcess>;
  stop(): Promise<void>;
}

/**
 * Starts a real API process and real worker processes, and waits until the API
 * answers and every worker has connected.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const configPath = writeConfig(options.config);
  const port = await freePort();
  // Each gateway gets its own SQLite key store next to its config, unless the test names one.
  const env = {
    LOG_LEVEL: 'warning',
    KEY_DB_PATH: join(dirname(configPath), 'keys.sqlite'),
    ...options.env,
    CONFIG_PATH: configPath,
  };
  const api = spawnGatewayProcess(
    'src/server.ts',
    [],
    { ...env, ...options.apiEnv, PORT: String(port), HOST: '127.0.0.1' },
    options.root,
  );
  const workers = new Map<string, GatewayProcess[]>();

  const addWorker = async (provider: string) => {
    const worker = spawnGatewayProcess(
      'workers/provider-worker.ts',
      [provider],
      { ...env, LOG_LEVEL: 'info' },
      options.root,
    );
    const list = workers.get(provider) ?? [];
    list.push(worker);
    workers.set(provider, list);
    await waitFor(
      () => worker.output().includes('worker started'),
      options.workerStartTimeoutMs ?? 20_000,
      `worker ${provider} to start:\n${worker.output()}`,
    );
    return worker;
  };

  const baseUrl = `http://127.0.0.1:${port}`;
  const gateway: Gateway = {
    baseUrl,
    port,
    configPath,
    api,
    workers,
    addWorker,
    async stop() {
      const all = [api, ...[...workers.values()].flat()];
      await Promise.all(all.map((p) => p.kill('SIGTERM')));
    },
  };
  try {
    await Promise.all(
      options.providers.flatMap((p) => Array.from({ length: options.workersPerProvider ?? 1 }, () => addWorker(p))),
    );
    await waitFor(
      async () => {
        if (api.child.exitCode !== null) throw new Error(`API exited:\n${api.output()}`);
        const res = await fetch(`${baseUrl}/v1/models`);
        return res.status === 401 || res.status === 200;
      },
      20_000,
      'the API to listen',
    );
  } catch (err) {
    await gateway.stop();
    throw new Error(`${(err as Error).message}\nAPI output:\n${api.output()}`, { cause: err });
  }
  return gateway;
}
