import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from '../../test/support/processes.ts';
import { answers, startService, until, type Service } from './service-process.ts';

/** One server the peer benchmark drives, with what a request to it needs. */
export interface BenchTarget {
  /** Row label, with the version. */
  label: string;
  /** Its chat-completions URL. */
  url: string;
  headers: Record<string, string>;
  /** Resident memory after load, MiB, of what the row's memory figure covers. */
  memory?: () => Promise<number>;
  /** What that memory figure covers. */
  memoryOf?: string;
  /** Its processes, for telling when it has gone quiet. */
  pids?: () => number[];
  stop(): Promise<void>;
}

export const ROOT = resolve(import.meta.dirname, '../..');
const PEERS = join(ROOT, '.tools', 'peers');
const PORTKEY_ENTRY = join(PEERS, 'portkey', 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
const LITELLM_BIN = join(PEERS, 'litellm', 'bin', 'litellm');

export type PeerName = 'portkey' | 'litellm';

/** The installed version of a peer, or undefined when it is not installed. */
export function peerVersion(peer: PeerName): string | undefined {
  if (peer === 'portkey') {
    const pkg = join(PEERS, 'portkey', 'node_modules', '@portkey-ai', 'gateway', 'package.json');
    return existsSync(PORTKEY_ENTRY) && existsSync(pkg)
      ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version
      : undefined;
  }
  if (!existsSync(LITELLM_BIN)) return undefined;
  const run = spawnSync(
    join(PEERS, 'litellm', 'bin', 'python'),
    ['-c', 'import importlib.metadata as m; print(m.version("litellm"))'],
    { encoding: 'utf8', timeout: 30_000 },
  );
  return run.status === 0 ? run.stdout.trim() : undefined;
}

/**
 * Runs `scripts/install-bench-peers.sh <peer>` (pinned versions into
 * .tools/peers/, bounded in time); true when the peer is there afterwards.
 */
export function installPeer(peer: PeerName, timeoutS: number): boolean {
  process.stdout.write(
    `peers: installing ${peer} (bash scripts/install-bench-peers.sh ${peer}, at most ${timeoutS} s)\n`,
  );
  spawnSync('bash', [join(ROOT, 'scripts', 'install-bench-peers.sh'), peer], {
    stdio: 'inherit',
    env: { ...process.env, PEERS_INSTALL_TIMEOUT_S: String(timeoutS) },
    timeout: (timeoutS + 60) * 1000,
  });
  return peerVersion(peer) !== undefined;
}

/** Options of the peers' start functions. */
export interface PeerOptions {
  /** The fake upstream's OpenAI base URL (ending in `/v1`). */
  upstreamUrl: string;
  upstreamKey: string;
  /** Core the peer runs on; undefined when the run is not pinned. */
  core: number | undefined;
  /** Folder for its log and configuration. */
  workDir: string;
}

function failure(service: Service, what: string): Error {
  return new Error(
    `${service.name} ${what} (${service.exit() ?? 'still running'}); the end of its log, ${service.logPath}:\n${service.log().slice(-2000)}`,
  );
}

/**
 * Portkey's gateway as its README starts it on Node (`npx @portkey-ai/gateway`:
 * one process), headless, sending every request to the fake upstream as a
 * custom OpenAI host named in the request's headers.
 */
export async function startPortkey(options: PeerOptions): Promise<BenchTarget> {
  const version = peerVersion('portkey') ?? '?';
  const port = await freePort();
  const service = startService({
    name: 'Portkey',
    command: process.execPath,
    args: [PORTKEY_ENTRY, `--port=${port}`, '--headless'],
    cwd: options.workDir,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    logPath: join(options.workDir, 'portkey.log'),
    ...(options.core !== undefined ? { core: options.core } : {}),
  });
  const base = `http://127.0.0.1:${port}`;
  if (
    !(await until(
      () => answers(`${base}/`),
      60_000,
      () => service.exit() !== undefined,
    ))
  ) {
    await service.stop();
    throw failure(service, 'did not answer within 60 s');
  }
  return {
    label: `Portkey ${version} (Node, one process)`,
    url: `${base}/v1/chat/completions`,
    headers: {
      authorization: `Bearer ${options.upstreamKey}`,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': options.upstreamUrl,
    },
    memory: () => service.rss(),
    memoryOf: 'its process',
    pids: () => [...service.tree().keys()],
    stop: () => service.stop(),
  };
}

/**
 * LiteLLM's proxy as its docs start it (`litellm --config`), one worker, the
 * fake upstream as an OpenAI-compatible `api_base`. The model cost map is read
 * from the package rather than fetched (there is no network to fetch it from).
 */
export async function startLiteLLM(options: PeerOptions): Promise<BenchTarget> {
  const version = peerVersion('litellm') ?? '?';
  const port = await freePort();
  // The proxy refuses to start without a strong master key; one per run, so none is written down.
  const masterKey = `sk-${randomBytes(24).toString('hex')}`;
  const config = join(options.workDir, 'litellm.yaml');
  writeFileSync(
    config,
    [
      'model_list:',
      '  - model_name: a-4o',
      '    litellm_params:',
      '      model: openai/a-4o',
      `      api_base: ${options.upstreamUrl}`,
      `      api_key: ${options.upstreamKey}`,
      'litellm_settings:',
      '  telemetry: false',
      '',
    ].join('\n'),
  );
  const service = startService({
    name: 'LiteLLM',
    command: LITELLM_BIN,
    args: ['--config', config, '--host', '127.0.0.1', '--port', String(port), '--num_workers', '1'],
    cwd: options.workDir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      LITELLM_MASTER_KEY: masterKey,
      LITELLM_LOCAL_MODEL_COST_MAP: 'True',
    },
    logPath: join(options.workDir, 'litellm.log'),
    ...(options.core !== undefined ? { core: options.core } : {}),
  });
  const base = `http://127.0.0.1:${port}`;
  if (
    !(await until(
      () => answers(`${base}/health/liveliness`),
      180_000,
      () => service.exit() !== undefined,
    ))
  ) {
    await service.stop();
    throw failure(service, 'did not answer within 180 s');
  }
  return {
    label: `LiteLLM ${version} (1 worker)`,
    url: `${base}/v1/chat/completions`,
    headers: { authorization: `Bearer ${masterKey}` },
    memory: () => service.rss(),
    memoryOf: 'its processes',
    pids: () => [...service.tree().keys()],
    stop: () => service.stop(),
  };
}
