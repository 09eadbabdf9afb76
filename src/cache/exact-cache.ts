import type { Redis } from 'ioredis';
import type { CachedReply } from './cached-reply.ts';
import type { LruBudget } from './lru-budget.ts';
import type { CacheKeys } from './redis-keys.ts';
import { scanDelete } from './scan-delete.ts';

/** Options of {@link ExactCache}. */
export interface ExactCacheOptions {
  /** Command connection. */
  redis: Redis;
  keys: CacheKeys;
  /** Entry lifetime, seconds (`CACHE_TTL`). */
  ttlSeconds: number;
  /**
   * Bounds the entries by bytes, least recently used first (`CACHE_MAX_BYTES`).
   * @defaultValue none: entries only expire
   */
  budget?: LruBudget;
}

/**
 * The exact-match cache: one Redis string per canonical request, with a TTL.
 * The value is `storedAtMs\n<completion JSON>`, so a hit is one GET and the
 * JSON goes to the client without being parsed again.
 */
export class ExactCache {
  private readonly options: ExactCacheOptions;

  constructor(options: ExactCacheOptions) {
    this.options = options;
  }

  async get(hash: string): Promise<CachedReply | undefined> {
    const key = this.options.keys.exact(hash);
    const value = await this.options.redis.get(key);
    if (value === null) return undefined;
    this.options.budget?.touch(key);
    const newline = value.indexOf('\n');
    const storedAt = Number(value.slice(0, newline));
    if (newline < 0 || !Number.isFinite(storedAt)) return undefined;
    return { completion: value.slice(newline + 1), storedAt };
  }

  async set(hash: string, completion: string, storedAt = Date.now()): Promise<void> {
    const key = this.options.keys.exact(hash);
    const value = `${storedAt}\n${completion}`;
    if (this.options.budget) await this.options.budget.store(key, value, this.options.ttlSeconds);
    else await this.options.redis.set(key, value, 'EX', this.options.ttlSeconds);
  }

  /** Removes every exact entry; returns how many there were. */
  async clear(): Promise<number> {
    const removed = await scanDelete(this.options.redis, this.options.keys.exactPattern);
    await this.options.budget?.clear();
    return removed;
  }
}
