import type { Redis } from 'ioredis';
import type { CachedReply } from './cached-reply.ts';
import type { CacheKeys } from './redis-keys.ts';
import { scanDelete } from './scan-delete.ts';

/** Options of {@link ExactCache}. */
export interface ExactCacheOptions {
  /** Command connection. */
  redis: Redis;
  keys: CacheKeys;
  /** Entry lifetime, seconds (`CACHE_TTL`). */
  ttlSeconds: number;
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
    const value = await this.options.redis.get(this.options.keys.exact(hash));
    if (value === null) return undefined;
    const newline = value.indexOf('\n');
    const storedAt = Number(value.slice(0, newline));
    if (newline < 0 || !Number.isFinite(storedAt)) return undefined;
    return { completion: value.slice(newline + 1), storedAt };
  }

  async set(hash: string, completion: string, storedAt = Date.now()): Promise<void> {
    await this.options.redis.set(this.options.keys.exact(hash), `${storedAt}\n${completion}`, 'EX', this.options.ttlSeconds);
  }

  /** Removes every exact entry; returns how many there were. */
  clear(): Promise<number> {
    return scanDelete(this.options.redis, this.options.keys.exactPattern);
  }
}
