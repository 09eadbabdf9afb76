import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ExactCache } from '../../src/cache/exact-cache.ts';
import { ENTRY_OVERHEAD_BYTES, LruBudget } from '../../src/cache/lru-budget.ts';
import { cacheKeys } from '../../src/cache/redis-keys.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

const prefix = uniquePrefix('lru-budget');
const keys = cacheKeys(prefix);
const redis = testRedis();
const reply = (n: number) => `{"id":"c${n}","text":"${'x'.repeat(1_000)}"}`;

afterEach(() => deletePrefix(redis, prefix));
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** Bytes one entry of {@link reply} counts (same length for every hash `h0N` stored at time N). */
async function countedPerEntry(): Promise<number> {
  const probe = new LruBudget({ redis, keys, maxBytes: Number.MAX_SAFE_INTEGER });
  await new ExactCache({ redis, keys, ttlSeconds: 60, budget: probe }).set('h00', reply(0), 0);
  const bytes = await probe.bytes();
  await probe.clear();
  await redis.del(keys.exact('h00'));
  return bytes;
}

describe('LruBudget with the exact cache', () => {
  it('keeps the counted bytes within the bound, evicting the least recently used first', async () => {
    const each = await countedPerEntry();
    expect(each).toBeGreaterThan(1_000 + ENTRY_OVERHEAD_BYTES);
    const budget = new LruBudget({ redis, keys, maxBytes: each * 3 });
    const cache = new ExactCache({ redis, keys, ttlSeconds: 60, budget });
    for (const n of [1, 2, 3]) await cache.set(`h0${n}`, reply(n), n);
    // h01 is read, so h02 is now the least recently used.
    await new Promise((r) => setTimeout(r, 5));
    expect((await cache.get('h01'))?.completion).toBe(reply(1));
    await new Promise((r) => setTimeout(r, 5));
    await cache.set('h04', reply(4), 4);
    expect(await cache.get('h02')).toBeUndefined();
    for (const n of [1, 3, 4]) expect((await cache.get(`h0${n}`))?.completion).toBe(reply(n));
    expect(await budget.bytes()).toBe(each * 3);
    expect(await redis.zcard(keys.lru)).toBe(3);
    expect(await redis.hlen(keys.lruSizes)).toBe(3);
  });

  it('counts a replaced entry once, and forgets everything when the cache is cleared', async () => {
    const each = await countedPerEntry();
    const budget = new LruBudget({ redis, keys, maxBytes: each * 10 });
    const cache = new ExactCache({ redis, keys, ttlSeconds: 60, budget });
    await cache.set('h01', reply(1), 1);
    await cache.set('h01', reply(1), 1);
    expect(await budget.bytes()).toBe(each);
    expect(await cache.clear()).toBe(1);
    expect(await budget.bytes()).toBe(0);
    expect(await redis.exists(keys.lru, keys.lruSizes)).toBe(0);
  });

  it('subtracts an entry that expired on its own when its turn to be evicted comes', async () => {
    const each = await countedPerEntry();
    const budget = new LruBudget({ redis, keys, maxBytes: each * 2 });
    const cache = new ExactCache({ redis, keys, ttlSeconds: 60, budget });
    await cache.set('h01', reply(1), 1);
    await redis.del(keys.exact('h01'));
    await cache.set('h02', reply(2), 2);
    await cache.set('h03', reply(3), 3);
    expect(await budget.bytes()).toBe(each * 2);
    expect(await redis.zrange(keys.lru, 0, -1)).toEqual([keys.exact('h02'), keys.exact('h03')]);
  });
});
