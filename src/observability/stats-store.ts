import type { Redis } from 'ioredis';
import { CounterBuffer } from '../redis/counter-buffer.ts';
import { maskApiKey } from '../auth/api-key.ts';
import { NANO_PER_USD } from '../usage/key-usage.ts';
import type { RequestSummary } from './request-summary.ts';
import type { CacheLookupStats, ProviderStats, StatsRecord, TopUser } from './stats-schema.ts';

/**
 * The counters behind `GET /stats`, kept in Redis so every process adds to
 * the same numbers and any API replica answers with the totals (never
 * per-process figures):
 *
 * - API processes count requests (`total_requests`) as they finish;
 * - worker processes count provider calls as jobs finish, so provider_stats
 *   covers every upstream call once: streamed, not streamed, asynchronous
 *   jobs, requests whose client left, and coalesced identical requests;
 * - the cache (src/cache) and the rate limiter (src/ratelimit) keep their own
 *   counters, read here through {@link CacheStatsSource} and
 *   {@link RateLimitStatsSource}.
 *
 * Keys of this store, under the gateway's prefix:
 *
 * | key | type | fields |
 * |---|---|---|
 * | `<prefix>:{stats}:counters` | hash | total_requests |
 * | `<prefix>:{stats}:providers` | hash | `<provider>:requests`, `:tokens`, `:latency_ms`, `:latency_n` |
 * | `<prefix>:{stats}:savings` | hash | `gateway_cache_nano_usd`, `gateway_cache_tokens`, `prompt_cache_nano_usd`, `prompt_cache_read_tokens`, `prompt_cache_write_tokens` |
 *
 * No key, key hash or request content is ever written.
 */

/** Exact and semantic cache lookups (src/cache `CacheStats` fits). */
export interface CacheStatsSource {
  read(): Promise<{ exact: { hits: number; misses: number }; semantic: { hits: number; misses: number } }>;
}

/**
 * Throttled requests and busiest keys, masked (src/ratelimit `RateLimitStats`
 * fits); with `keyHash`, that key's entry alone.
 */
export interface RateLimitStatsSource {
  read(options: { top?: number; keyHash?: string }): Promise<{ requests_throttled: number; top_users: TopUser[] }>;
}

/** Whose entries of `rate_limit_stats.top_users` a reader of /stats may see. */
export type TopUsersView = { all: true } | { keyHash: string } | { none: true };

/** One finished worker job, as the executor reports it (`ChatExecutor` `onFinished`). */
export interface FinishedJob {
  provider: string;
  status: 'ok' | 'error' | 'cancelled' | 'skipped';
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Time the worker spent on the job, upstream retries included, ms. */
  upstreamMs: number;
}

/** Spend saved by one request (API processes); nano-USD, as key spend is kept. */
export interface Savings {
  /** What a reply served from the gateway's cache cost when it was produced. */
  gatewayCacheNanoUsd?: number;
  gatewayCacheTokens?: number;
  /** What the provider's prompt cache saved on a call, less its write premium (may be negative). */
  promptCacheNanoUsd?: number;
  promptCacheReadTokens?: number;
  promptCacheWriteTokens?: number;
}

const SAVINGS_FIELDS = {
  gatewayCacheNanoUsd: 'gateway_cache_nano_usd',
  gatewayCacheTokens: 'gateway_cache_tokens',
  promptCacheNanoUsd: 'prompt_cache_nano_usd',
  promptCacheReadTokens: 'prompt_cache_read_tokens',
  promptCacheWriteTokens: 'prompt_cache_write_tokens',
} as const satisfies Record<keyof Savings, string>;

/** Options of {@link StatsStore}. */
export interface StatsStoreOptions {
  /** A connection for counters (the command connection in the API, the writer in a worker). */
  redis: Redis;
  /** REDIS_KEY_PREFIX. */
  prefix: string;
  /** Entries of `rate_limit_stats.top_users`. @defaultValue 10 */
  topUsers?: number;
  /** Cache counters; zeros without it (no cache configured). */
  cache?: CacheStatsSource;
  /** Rate limiter counters; zeros without it. */
  rateLimit?: RateLimitStatsSource;
  /** Called when a write fails (Redis down); the request or job itself is never affected. */
  onError?: (err: Error) => void;
}

/** Requests counted in total_requests: the API proper (`/v1/*`), as rate limiting scopes it. */
function isApiRequest(summary: RequestSummary): boolean {
  return summary.path === '/v1' || summary.path.startsWith('/v1/');
}

export class StatsStore {
  private readonly redis: Redis;
  private readonly keys: { counters: string; providers: string; savings: string };
  private readonly topUsers: number;
  private readonly options: StatsStoreOptions;
  /** Increments go out in batches (src/redis/counter-buffer.ts). */
  private readonly counters: CounterBuffer;

  constructor(options: StatsStoreOptions) {
    this.options = options;
    this.redis = options.redis;
    this.topUsers = options.topUsers ?? 10;
    const base = `${options.prefix}:{stats}`;
    this.keys = { counters: `${base}:counters`, providers: `${base}:providers`, savings: `${base}:savings` };
    const onError = options.onError;
    this.counters = new CounterBuffer({ redis: options.redis, ...(onError ? { onError } : {}) });
  }

  /** Counts one finished HTTP request (API processes). Fire-and-forget: never throws, never delays a reply. */
  recordRequest(summary: RequestSummary): void {
    if (!isApiRequest(summary)) return;
    this.counters.add(this.keys.counters, 'total_requests');
  }

  /**
   * Counts one provider call (worker processes). Jobs skipped or cancelled
   * before a reply are not provider requests; failed ones are, without
   * latency.
   */
  recordJob(job: FinishedJob): void {
    if (job.status !== 'ok' && job.status !== 'error') return;
    const key = this.keys.providers;
    const p = job.provider;
    this.counters.add(key, `${p}:requests`);
    const tokens = (job.usage?.prompt_tokens ?? 0) + (job.usage?.completion_tokens ?? 0);
    if (tokens > 0) this.counters.add(key, `${p}:tokens`, tokens);
    if (job.status === 'ok') {
      this.counters.add(key, `${p}:latency_ms`, Math.max(0, Math.round(job.upstreamMs)));
      this.counters.add(key, `${p}:latency_n`);
    }
  }

  /** Adds one request's saved spend (API processes). Fire-and-forget, like {@link recordRequest}. */
  recordSavings(savings: Savings): void {
    for (const [name, field] of Object.entries(SAVINGS_FIELDS) as Array<[keyof Savings, string]>) {
      const value = Math.round(savings[name] ?? 0);
      if (value !== 0) this.counters.add(this.keys.savings, field, value);
    }
  }

  /** Writes buffered counts (on shutdown). */
  async close(): Promise<void> {
    await this.counters.close();
  }

  /**
   * The statistics record; `providers` (from config.yaml) always appear, with
   * zeros before their first request. `topUsers` says whose entries of
   * `rate_limit_stats.top_users` are included. @defaultValue all
   */
  async read(providers: readonly string[], topUsers: TopUsersView = { all: true }): Promise<StatsRecord> {
    await this.counters.flush();
    const zero = { hits: 0, misses: 0 };
    const [total, providerValues, savings, cache, rateLimit] = await Promise.all([
      this.redis.hget(this.keys.counters, 'total_requests'),
      this.redis.hgetall(this.keys.providers),
      this.redis.hgetall(this.keys.savings),
      this.options.cache ? this.options.cache.read() : { exact: zero, semantic: zero },
      this.readRateLimit(topUsers),
    ]);

    const providerStats: Record<string, ProviderStats> = {};
    const names = new Set(providers);
    for (const field of Object.keys(providerValues)) names.add(field.slice(0, field.lastIndexOf(':')));
    for (const name of [...names].sort()) {
      const latencyN = toInt(providerValues[`${name}:latency_n`]);
      const latencyMs = toInt(providerValues[`${name}:latency_ms`]);
      providerStats[name] = {
        requests: toInt(providerValues[`${name}:requests`]),
        tokens: toInt(providerValues[`${name}:tokens`]),
        avg_latency: latencyN > 0 ? round(latencyMs / latencyN / 1000, 3) : 0,
      };
    }

    return {
      total_requests: toInt(total ?? undefined),
      cache_stats: { exact_cache: lookupStats(cache.exact), semantic_cache: lookupStats(cache.semantic) },
      provider_stats: providerStats,
      spend_saved: {
        gateway_cache_usd: toInt(savings[SAVINGS_FIELDS.gatewayCacheNanoUsd]) / NANO_PER_USD,
        gateway_cache_tokens: toInt(savings[SAVINGS_FIELDS.gatewayCacheTokens]),
        prompt_cache_usd: toInt(savings[SAVINGS_FIELDS.promptCacheNanoUsd]) / NANO_PER_USD,
        prompt_cache_read_tokens: toInt(savings[SAVINGS_FIELDS.promptCacheReadTokens]),
        prompt_cache_write_tokens: toInt(savings[SAVINGS_FIELDS.promptCacheWriteTokens]),
      },
      rate_limit_stats: {
        requests_throttled: Math.trunc(rateLimit.requests_throttled),
        // Masked again defensively: whatever a source holds, a full key never leaves through /stats.
        top_users: rateLimit.top_users.slice(0, this.topUsers).map((u) => ({
          api_key: u.api_key.length > 16 ? maskApiKey(u.api_key) : u.api_key,
          requests: Math.trunc(u.requests),
        })),
      },
    };
  }

  private async readRateLimit(view: TopUsersView): Promise<{ requests_throttled: number; top_users: TopUser[] }> {
    const source = this.options.rateLimit;
    if (!source) return { requests_throttled: 0, top_users: [] };
    if ('keyHash' in view) return source.read({ top: 1, keyHash: view.keyHash });
    const record = await source.read({ top: this.topUsers });
    return 'none' in view ? { ...record, top_users: [] } : record;
  }

  /** Deletes this store's counters (the cache's and the rate limiter's are theirs to reset). */
  async reset(): Promise<void> {
    await this.redis.del(this.keys.counters, this.keys.providers, this.keys.savings);
  }
}

function lookupStats(counts: { hits: number; misses: number }): CacheLookupStats {
  const lookups = counts.hits + counts.misses;
  return { hits: counts.hits, misses: counts.misses, hit_rate: lookups > 0 ? round(counts.hits / lookups, 4) : 0 };
}

function toInt(value: string | undefined): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) ? Math.trunc(n) : 0;
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
