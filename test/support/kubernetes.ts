import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Untyped } from './untyped.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/** Folder of the manifests, relative to the repository. */
export const KUBERNETES_DIR = 'deploy/kubernetes';

/** Every overlay of `deploy/kubernetes/overlays`, plus the base alone. */
export const OVERLAYS = ['base', 'overlays/single-redis', 'overlays/sentinel', 'overlays/redis-cluster'] as const;

/** A rendered Kubernetes object: only what the tests read is typed. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Untyped;
  data?: Record<string, string>;
}

/**
 * Finds a command: the variable `envName` when set, else the virtual
 * environment `scripts/install-k8s-tools.sh` fills (`.tools/k8s/bin`, which
 * holds a kubectl only when PATH had none recent enough), else PATH.
 * Undefined when none has it.
 */
export function findTool(name: string, envName: string): string | undefined {
  const given = process.env[envName];
  if (given) return existsSync(given) ? given : undefined;
  const dirs = [join(ROOT, '.tools/k8s/bin'), ...(process.env.PATH ?? '').split(delimiter)];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** `kubectl kustomize <dir>`: the overlay as the cluster would receive it, as text. */
export function renderOverlay(kubectl: string, overlay: string): string {
  return execFileSync(kubectl, ['kustomize', join(ROOT, KUBERNETES_DIR, overlay)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Parses a multi-document YAML stream, failing on the first syntax error. */
export function parseObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`YAML error: ${doc.errors[0]?.message}`);
      return doc.toJS() as K8sObject;
    })
    .filter((o) => o !== null);
}

/** Result of running kubernetes-validate over files. */
export interface ValidateRun {
  status: number | null;
  output: string;
}

/** `kubernetes-validate --strict -k <version> <files...>`: rejects unknown fields as well as wrong types. */
export function kubernetesValidate(tool: string, version: string, files: readonly string[]): ValidateRun {
  const run = spawnSync(tool, ['--strict', '-k', version, ...files], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout ?? ''}${run.stderr ?? ''}` };
}

/** The version kubectl's kustomize reports, e.g. `v5.5.0`, or undefined. */
export function kustomizeVersion(kubectl: string): string | undefined {
  const out = spawnSync(kubectl, ['version', '--client'], { encoding: 'utf8', timeout: 20_000 });
  return /Kustomize Version:\s*(v[\d.]+)/.exec(out.stdout ?? '')?.[1];
}
