import { isAbsolute, join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import type { GatewayConfig } from '../config/gateway-config.ts';
import type { Settings } from '../config/settings.ts';
import type { Logger } from '../observability/logger.ts';
import { adapterFor } from '../providers/registry.ts';
import type { ReaderIdentity } from '../streams/reader-liveness.ts';
import { CacheStats, type CacheType } from './cache-stats.ts';
import { EmbeddingBatcher } from './embedders/embedding-batcher.ts';
import type { Embedder } from './embedders/embedder.ts';
import { EndpointEmbedder } from './embedders/endpoint-embedder.ts';
import { OnnxEmbedder } from './embedders/onnx-embedder.ts';
import { StaticEmbedder } from './embedders/static-embedder.ts';
import { ExactCache } from './exact-cache.ts';
import { LruBudget } from './lru-budget.ts';
import { cacheKeys } from './redis-keys.ts';
import { RequestCoalescer } from './request-coalescer.ts';
import { ResponseCache, type VerifyOutcome } from './response-cache.ts';
import { SemanticCache } from './semantic-cache.ts';
import { ProviderKeys } from '../providers/provider-keys.ts';

/** What {@link createResponseCache} is built from. */
export interface ResponseCacheDeps {
  settings: Settings;
  /** Command connection of the gateway's Redis: the coalescer's claims sit beside the reply streams they name. */
  redis: Redis;
  /**
   * Command connection of the Redis holding the entries and counters (`CACHE_REDIS_URL`).
   * @defaultValue `redis`
   */
  cacheRedis?: Redis;
  /** Makes the semantic index's pub/sub connection (on the caches' Redis). */
  subscriber: () => Redis;
  config: () => GatewayConfig;
  logger: Logger;
  /** Where provider keys are read. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Called on every lookup (the `gateway_cache_hits_total{cache_type}` metric). */
  onLookup?: (cacheType: CacheType, hit: boolean) => void;
  /** Called for every semantic candidate the verifier looked at (the `gateway_semantic_candidates_total` metric). */
  onVerify?: (outcome: VerifyOutcome) => void;
  /** This process as a reader of reply streams, for coalesced requests (see `RequestCoalescerOptions.liveness`). */
  liveness?: ReaderIdentity;
}

/** The embedder the settings ask for (not started). */
function createEmbedder(deps: Pick<ResponseCacheDeps, 'settings' | 'config' | 'env'>): Embedder {
  const { settings } = deps;
  if (settings.EMBEDDING_BACKEND === 'endpoint') {
    const env = deps.env ?? process.env;
    const name = settings.EMBEDDING_PROVIDER;
    return new EndpointEmbedder({
      model: settings.EMBEDDING_MODEL ?? 'text-embedding-3-small',
      timeoutMs: settings.EMBEDDING_TIMEOUT_MS,
      endpoint: () => {
        const provider = deps.config().providerIndex.get(name);
        if (!provider) return { name, baseUrl: '', apiKey: undefined };
        return {
          name,
          baseUrl: provider.base_url ?? adapterFor(provider.format).defaultBaseUrl,
          apiKey: new ProviderKeys(env).keyOf(provider),
        };
      },
    });
  }
  return new OnnxEmbedder({
    model: settings.EMBEDDING_MODEL ?? 'Xenova/all-MiniLM-L6-v2',
    localModelPath: modelRoot(settings),
    allowRemoteModels: settings.EMBEDDING_ALLOW_REMOTE,
    dtype: settings.EMBEDDING_DTYPE,
    threads: settings.EMBEDDING_THREADS,
  });
}

function modelRoot(settings: Settings): string {
  const path = settings.EMBEDDING_MODEL_PATH;
  return isAbsolute(path) ? path : resolve(path);
}

/** The first-stage retriever the settings ask for (not loaded): the static table beside the onnx model. */
export function createRetriever(settings: Settings): StaticEmbedder | undefined {
  if (settings.EMBEDDING_BACKEND !== 'onnx' || settings.EMBEDDING_RETRIEVER !== 'static') return undefined;
  const model = settings.EMBEDDING_MODEL ?? 'Xenova/all-MiniLM-L6-v2';
  return new StaticEmbedder({ modelDir: join(modelRoot(settings), model), id: `static:${model}` });
}

/** Builds the exact and semantic caches, the coalescer and the counters from the settings. Call `start()` on the result. */
export function createResponseCache(deps: ResponseCacheDeps): ResponseCache {
  const { settings, redis, logger } = deps;
  const entries = deps.cacheRedis ?? redis;
  const keys = cacheKeys(settings.REDIS_KEY_PREFIX);
  const embedder = settings.SEMANTIC_CACHE_ENABLED ? createEmbedder(deps) : undefined;
  const retriever = embedder ? createRetriever(settings) : undefined;
  const budget =
    settings.CACHE_MAX_BYTES > 0
      ? new LruBudget({ redis: entries, keys, maxBytes: settings.CACHE_MAX_BYTES })
      : undefined;
  return new ResponseCache({
    exact: new ExactCache({ redis: entries, keys, ttlSeconds: settings.CACHE_TTL, ...(budget ? { budget } : {}) }),
    semantic: new SemanticCache({
      redis: entries,
      subscriber: deps.subscriber,
      keys,
      ttlSeconds: settings.CACHE_TTL,
      maxEntries: settings.SEMANTIC_CACHE_MAX_ENTRIES,
      logger,
    }),
    stats: new CacheStats(entries, keys),
    logger,
    exactEnabled: settings.CACHE_ENABLED,
    semanticEnabled: settings.SEMANTIC_CACHE_ENABLED,
    threshold: settings.SEMANTIC_CACHE_THRESHOLD,
    retrieverThreshold: settings.SEMANTIC_CACHE_RETRIEVER_THRESHOLD,
    maxPromptChars: settings.SEMANTIC_CACHE_MAX_PROMPT_CHARS,
    ...(retriever ? { retriever } : {}),
    scope: settings.CACHE_SCOPE,
    ...(embedder
      ? { embedder, batcher: new EmbeddingBatcher(embedder, { maxBatchSize: settings.EMBEDDING_BATCH_SIZE }) }
      : {}),
    ...(settings.CACHE_COALESCE
      ? {
          coalescer: new RequestCoalescer({
            redis,
            keys,
            prefix: settings.REDIS_KEY_PREFIX,
            replyTtlMs: settings.RESPONSE_STREAM_TTL * 1000,
            ...(deps.liveness ? { liveness: deps.liveness } : {}),
          }),
        }
      : {}),
    ...(deps.onLookup ? { onLookup: deps.onLookup } : {}),
    ...(deps.onVerify ? { onVerify: deps.onVerify } : {}),
  });
}
