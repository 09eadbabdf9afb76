import type { Redis } from 'ioredis';
import type { CacheKeys } from './redis-keys.ts';

/**
 * What one entry is counted as beyond its key and value, bytes: Redis' own
 * structures for a key with an expiry, plus its place in the sorted set and
 * the hash below. An estimate; the bound is checked against Redis'
 * `used_memory` in `test/e2e/bounded-redis-memory.e2e.test.ts`.
 */
export const ENTRY_OVERHEAD_BYTES = 200;

// KEYS[1] entry, KEYS[2] lru sorted set, KEYS[3] sizes hash, KEYS[4] byte total. ARGV: value, ttl s, now ms, counted
// bytes, budget bytes. Stores the entry, then evicts the least recently used ones (entries that expired on their own
// are the oldest, so they go first and only their count is lost) until the total fits. Returns how many were evicted.
// Victims are keys named by the sorted set rather than KEYS: on one Redis node that is safe; a cluster takes ACCOUNT.
const STORE = `
local old = tonumber(redis.call('HGET', KEYS[3], KEYS[1]) or '0')
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], ARGV[4])
local total = redis.call('INCRBY', KEYS[4], tonumber(ARGV[4]) - old)
local budget = tonumber(ARGV[5])
local evicted = 0
while total > budget do
  local victim = redis.call('ZPOPMIN', KEYS[2])[1]
  if not victim then break end
  local size = tonumber(redis.call('HGET', KEYS[3], victim) or '0')
  redis.call('HDEL', KEYS[3], victim)
  redis.call('UNLINK', victim)
  total = redis.call('DECRBY', KEYS[4], size)
  evicted = evicted + 1
end
return evicted`;

// On a Redis Cluster the entry and its victims lie in other slots than the bookkeeping (`{x}`): the entry is SET on
// its own, then this script (bookkeeping keys only) counts it and returns the victims, which the caller unlinks one
// by one. KEYS[1] lru, KEYS[2] sizes, KEYS[3] total. ARGV: entry key, now ms, counted bytes, budget bytes.
const ACCOUNT = `
local old = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local total = redis.call('INCRBY', KEYS[3], tonumber(ARGV[3]) - old)
local budget = tonumber(ARGV[4])
local victims = {}
while total > budget do
  local victim = redis.call('ZPOPMIN', KEYS[1])[1]
  if not victim then break end
  local size = tonumber(redis.call('HGET', KEYS[2], victim) or '0')
  redis.call('HDEL', KEYS[2], victim)
  total = redis.call('DECRBY', KEYS[3], size)
  victims[#victims + 1] = victim
end
return victims`;

/** Options of {@link LruBudget}. */
export interface LruBudgetOptions {
  /** Command connection of the caches. */
  redis: Redis;
  keys: CacheKeys;
  /** Most bytes the entries may count together (`CACHE_MAX_BYTES`). */
  maxBytes: number;
}

/**
 * Bounds the exact cache by bytes, least recently used first, with the
 * gateway's own bookkeeping (a sorted set of last use, a hash of sizes and
 * their total) instead of Redis' eviction: the queue shares the Redis and
 * needs `maxmemory-policy noeviction`. A store is one script that also evicts;
 * a hit adds one `ZADD XX`, sent without waiting for it.
 */
export class LruBudget {
  private readonly options: LruBudgetOptions;

  constructor(options: LruBudgetOptions) {
    this.options = options;
    // Every miss stores: defineCommand sends EVALSHA, and the script's text once per connection.
    if (!('gatewayStoreBounded' in options.redis))
      options.redis.defineCommand('gatewayStoreBounded', { numberOfKeys: 4, lua: STORE });
    if (!('gatewayAccountBounded' in options.redis))
      options.redis.defineCommand('gatewayAccountBounded', { numberOfKeys: 3, lua: ACCOUNT });
  }

  /** Stores `value` under `key` for `ttlSeconds` and evicts what no longer fits; resolves to the number evicted. */
  async store(key: string, value: string, ttlSeconds: number): Promise<number> {
    const { redis, keys, maxBytes } = this.options;
    const counted = 3 * Buffer.byteLength(key) + Buffer.byteLength(value) + ENTRY_OVERHEAD_BYTES;
    const runner = redis as unknown as {
      gatewayStoreBounded(...args: (string | number)[]): Promise<unknown>;
      gatewayAccountBounded(...args: (string | number)[]): Promise<string[]>;
    };
    if (!redis.isCluster)
      return Number(
        await runner.gatewayStoreBounded(
          key,
          keys.lru,
          keys.lruSizes,
          keys.lruBytes,
          value,
          ttlSeconds,
          Date.now(),
          counted,
          maxBytes,
        ),
      );
    await redis.set(key, value, 'EX', ttlSeconds);
    const victims = await runner.gatewayAccountBounded(
      keys.lru,
      keys.lruSizes,
      keys.lruBytes,
      key,
      Date.now(),
      counted,
      maxBytes,
    );
    await Promise.all(victims.map((victim) => redis.unlink(victim)));
    return victims.length;
  }

  /** `key` was just read: it becomes the most recently used. Entries the budget does not know are left alone. */
  touch(key: string): void {
    this.options.redis.zadd(this.options.keys.lru, 'XX', Date.now(), key).catch(() => {});
  }

  /** Bytes the entries count now. */
  async bytes(): Promise<number> {
    return Number((await this.options.redis.get(this.options.keys.lruBytes)) ?? 0);
  }

  /** Forgets every entry (after the entries themselves were cleared). */
  async clear(): Promise<void> {
    const { redis, keys } = this.options;
    await redis.unlink(keys.lru, keys.lruSizes, keys.lruBytes);
  }
}
