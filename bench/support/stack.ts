import { spawnNode, startGateway, type Gateway, type GatewayProcess } from '../../test/support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../../test/support/redis.ts';

/** A gateway (API + worker processes) in front of a fake upstream running as its own process. */
export interface BenchStack {
  upstreamUrl: string;
  /** Process id of the fake upstream (for CPU accounting). */
  upstreamPid: number | undefined;
  gateway: Gateway;
  key: string;
  stop(): Promise<void>;
}

export const BENCH_KEY = 'gw_bench_key_0123456789abcdefghijklmnopqrstuv';
export const UPSTREAM_KEY = 'bench-upstream-key';

/** Starts the fake OpenAI-format upstream as a separate process; resolves with its base URL. */
export async function startUpstreamProcess(
  latencyMs: number,
  chunkDelayMs = 0,
): Promise<{ url: string; proc: GatewayProcess }> {
  const proc = spawnNode(
    'test/support/fake-upstream-cli.ts',
    [
      '--format',
      'openai',
      '--port',
      '0',
      '--key',
      UPSTREAM_KEY,
      '--latency-ms',
      String(latencyMs),
      '--chunk-delay-ms',
      String(chunkDelayMs),
    ],
    {},
  );
  const until = Date.now() + 15_000;
  for (;;) {
    const match = /listening (\S+)/.exec(proc.output());
    if (match?.[1]) return { url: match[1], proc };
    if (Date.now() > until) throw new Error(`fake upstream did not start:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Options of {@link startStack}. */
export interface StackOptions {
  latencyMs?: number;
  workers?: number;
  env?: Record<string, string>;
  concurrency?: number;
  /** Another stack whose fake upstream this one shares (A/B runs that must differ only in the gateway). Default: its own. */
  shareUpstreamOf?: BenchStack;
  /** Checkout whose gateway code runs (A/B against another commit). Default: this repository. */
  root?: string;
  /**
   * config.yaml and the providers given a worker, from the upstream's URL.
   * @defaultValue provider_a serving `a-4o` from the fake upstream
   */
  configure?: (upstreamUrl: string) => { config: unknown; providers: string[] };
  /** Port of the Redis the gateway uses on loopback (a private `redis-server` for pinned runs). Default the tests' Redis. */
  redisPort?: number;
}

export async function startStack(options: StackOptions = {}): Promise<BenchStack> {
  const shared = options.shareUpstreamOf;
  const upstream = shared ? undefined : await startUpstreamProcess(options.latencyMs ?? 0);
  const upstreamUrl = shared?.upstreamUrl ?? (upstream?.url as string);
  const prefix = uniquePrefix('bench');
  const gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: BENCH_KEY,
      PROVIDER_A_API_KEY: UPSTREAM_KEY,
      RATE_LIMIT_REQUESTS: '100000000',
      LOG_LEVEL: 'error',
      ...(options.redisPort ? { REDIS_HOST: '127.0.0.1', REDIS_PORT: String(options.redisPort) } : {}),
      ...options.env,
    },
    ...(options.configure?.(upstreamUrl) ?? {
      config: {
        providers: [
          {
            name: 'provider_a',
            api_key_env: 'PROVIDER_A_API_KEY',
            base_url: upstreamUrl,
            models: ['a-4o'],
            concurrency: options.concurrency ?? 128,
          },
        ],
      },
      providers: ['provider_a'],
    }),
    workersPerProvider: options.workers ?? 1,
    ...(options.root ? { root: options.root } : {}),
  });
  return {
    upstreamUrl,
    upstreamPid: shared?.upstreamPid ?? upstream?.proc.child.pid,
    gateway,
    key: BENCH_KEY,
    async stop() {
      await gateway.stop();
      await upstream?.proc.kill();
      if (options.redisPort) return;
      const redis = testRedis();
      await deletePrefix(redis, prefix);
      redis.disconnect();
    },
  };
}

/** Resident memory of a process in MiB (Linux /proc). */
export async function rssMiB(pid: number | undefined): Promise<number> {
  if (!pid) return NaN;
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}
