import type { Redis } from 'ioredis';
import { rateLimitKeys, type RateLimitKeys } from './rate-limit-keys.ts';

/** `rate_limit_stats` of the `/stats` record. */
export interface RateLimitStatsRecord {
  requests_throttled: number;
  /** Keys with the most `/v1` requests (admitted and throttled), most first; keys masked. */
  top_users: Array<{ api_key: string; requests: number }>;
}

/** Options of {@link RateLimitStats}. */
export interface RateLimitStatsOptions {
  /** Command connection. */
  redis: Redis;
  /** Redis key prefix of the gateway. */
  prefix: string;
}

/**
 * Reads the counters the rate limiter keeps in Redis, shared by every
 * replica: throttled requests and per-key request counts since the last
 * {@link RateLimitStats.reset}. Only masked keys are stored.
 */
export class RateLimitStats {
  private readonly redis: Redis;
  private readonly keys: RateLimitKeys;

  constructor(options: RateLimitStatsOptions) {
    this.redis = options.redis;
    this.keys = rateLimitKeys(options.prefix);
  }

  /**
   * The `rate_limit_stats` record; `top` users at most (default 10). With
   * `keyHash`, `top_users` holds that key's entry alone (none before its
   * first counted request): what a non-admin key may see.
   */
  async read(options: { top?: number; keyHash?: string } = {}): Promise<RateLimitStatsRecord> {
    if (options.keyHash !== undefined) {
      const [throttled, score, label] = await Promise.all([
        this.redis.hget(this.keys.stats, 'throttled'),
        this.redis.zscore(this.keys.requestsByKey, options.keyHash),
        this.redis.hget(this.keys.labels, options.keyHash),
      ]);
      const own = score === null ? [] : [{ api_key: label ?? 'unknown', requests: Number(score) }];
      return { requests_throttled: Number(throttled ?? 0), top_users: own };
    }
    const top = Math.max(1, options.top ?? 10);
    const [throttled, ranked] = await Promise.all([
      this.redis.hget(this.keys.stats, 'throttled'),
      this.redis.zrevrange(this.keys.requestsByKey, 0, top - 1, 'WITHSCORES'),
    ]);
    const hashes = ranked.filter((_, i) => i % 2 === 0);
    const labels = hashes.length > 0 ? await this.redis.hmget(this.keys.labels, ...hashes) : [];
    const topUsers = hashes.map((_, i) => ({ api_key: labels[i] ?? 'unknown', requests: Number(ranked[i * 2 + 1]) }));
    return { requests_throttled: Number(throttled ?? 0), top_users: topUsers };
  }

  /** Zeroes the counters (windows are left alone). */
  async reset(): Promise<void> {
    await this.redis.del(this.keys.stats, this.keys.requestsByKey, this.keys.labels);
  }
}
