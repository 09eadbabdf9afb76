import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cacheKeys } from '../../src/cache/redis-keys.ts';
import { SemanticCache, type SemanticCacheOptions } from '../../src/cache/semantic-cache.ts';
import { normalize } from '../../src/cache/vector-index.ts';
import { waitFor } from '../support/processes.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * The semantic cache's storage with real Redis: several SemanticCache
 * instances on one prefix stand for API replicas; each keeps its own index,
 * and they must agree through Redis and pub/sub.
 */

const prefix = uniquePrefix('semantic-cache');
const keys = cacheKeys(prefix);
const redis = testRedis();
const logger = pino({ level: 'silent' });
const open: SemanticCache[] = [];

function replica(overrides: Partial<SemanticCacheOptions> = {}): SemanticCache {
  const cache = new SemanticCache({ redis, subscriber: testRedis, keys, ttlSeconds: 60, logger, ...overrides });
  open.push(cache);
  return cache;
}

function vec(seed: number, dims = 16): Float32Array {
  return normalize(Float32Array.from({ length: dims }, (_, i) => Math.sin(seed * 7.1 + i * 1.3)));
}

function entry(text: string, seed: number, partition = 'p1') {
  return {
    partition,
    text,
    tokens: text.split(' '),
    guard: '[[],[],0]',
    size: text.split(' ').length,
    vector: vec(seed),
    completion: JSON.stringify({ text }),
  };
}

beforeAll(async () => {
  await redis.ping();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await deletePrefix(redis, prefix);
});

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('SemanticCache', () => {
  it('stores an entry in Redis with a TTL and finds it in its own index', async () => {
    const a = replica();
    await a.start();
    const id = await a.store(entry('capital of France', 1));
    const ttl = await redis.ttl(keys.semanticEntry(id));
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(await redis.zscore(keys.semanticIndex, id)).not.toBeNull();
    const result = a.search('p1', vec(1), 0.99, '[[],[],0]');
    expect(result.match?.id).toBe(id);
    const reply = await a.fetchReply(id);
    expect(JSON.parse(reply?.completion ?? '{}')).toEqual({ text: 'capital of France' });
    expect(Date.now() - (reply?.storedAt ?? 0)).toBeLessThan(5_000);
    // The canonical tokens are kept for the verifier; the entry is named by a hash.
    expect(await a.fetchTokens([id])).toEqual([['capital', 'of', 'France']]);
    const fields = await redis.hkeys(keys.semanticEntry(id));
    expect(fields.sort()).toEqual(['c', 'f', 'g', 'n', 'p', 'q', 't', 'v', 'x']);
  });

  it('loads existing entries at start and mirrors other replicas through pub/sub', async () => {
    const a = replica();
    await a.start();
    const first = await a.store(entry('one', 1));
    const b = replica();
    await b.start();
    expect(b.size).toBe(1);
    expect(b.search('p1', vec(1), 0.99, '[[],[],0]').match?.id).toBe(first);

    const second = await a.store(entry('two', 2, 'p2'));
    await waitFor(() => b.size === 2, 2_000, 'replica b to see the new entry');
    expect(b.search('p2', vec(2), 0.99, '[[],[],0]').match?.id).toBe(second);
    expect(b.byteSize).toBeGreaterThan(0);

    // Storing the same text again replaces the entry (same id) instead of adding one.
    expect(await a.store(entry('two', 3, 'p2'))).toBe(second);
    await waitFor(
      () => b.search('p2', vec(3), 0.99, '[[],[],0]').match?.id === second,
      2_000,
      'replica b to see the replacement',
    );
    expect(b.size).toBe(2);
    expect(a.size).toBe(2);
  });

  it('clear removes every entry from Redis and from every replica and counts them', async () => {
    const a = replica();
    const b = replica();
    await Promise.all([a.start(), b.start()]);
    for (let i = 0; i < 5; i++) await a.store(entry(`t${i}`, i));
    // A stray entry missing from the sorted set is found by SCAN.
    await redis.hset(keys.semanticEntry('stray'), 'p', 'p1');
    await waitFor(() => b.size === 5, 2_000, 'replica b to load 5 entries');
    expect(await b.clear()).toBe(6);
    expect(b.size).toBe(0);
    await waitFor(() => a.size === 0, 2_000, 'replica a to drop its index');
    expect(await keysUnder(redis, `${prefix}:cache:{s}`)).toEqual([]);
    expect(await b.clear()).toBe(0);
  });

  it('never serves an entry that expired in Redis, and sweeps it from the index', async () => {
    const a = replica({ ttlSeconds: 1, sweepIntervalMs: 100 });
    await a.start();
    const id = await a.store(entry('short-lived', 1));
    expect(a.search('p1', vec(1), 0.99, '[[],[],0]').match?.id).toBe(id);
    await waitFor(async () => (await redis.exists(keys.semanticEntry(id))) === 0, 3_000, 'Redis to expire the entry');
    expect(a.search('p1', vec(1), 0.99, '[[],[],0]').match).toBeUndefined();
    await waitFor(() => a.size === 0, 2_000, 'the sweep to drop the entry');
    // A replica starting now loads nothing expired.
    const b = replica();
    await b.start();
    expect(b.size).toBe(0);
  });

  it('fetch of an entry deleted behind its back is a miss and leaves the index', async () => {
    const a = replica();
    await a.start();
    const id = await a.store(entry('x', 1));
    const other = await a.store(entry('y', 2));
    await redis.del(keys.semanticEntry(id));
    expect(await a.fetchTokens([id])).toEqual([undefined]);
    expect(a.size).toBe(1);
    await redis.del(keys.semanticEntry(other));
    expect(await a.fetchReply(other)).toBeUndefined();
    expect(a.size).toBe(0);
  });

  it('keeps at most maxEntries, dropping the ones closest to expiry everywhere', async () => {
    const a = replica({ maxEntries: 3 });
    const b = replica({ maxEntries: 3 });
    await Promise.all([a.start(), b.start()]);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await a.store(entry(`t${i}`, i)));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await redis.zcard(keys.semanticIndex)).toBe(3);
    expect(a.size).toBe(3);
    await waitFor(
      () => b.size === 3 && !b.search('p1', vec(0), 0.99, '[[],[],0]').match,
      2_000,
      'replica b to apply the eviction',
    );
    expect(await redis.exists(keys.semanticEntry(ids[0] as string))).toBe(0);
    expect(await redis.exists(keys.semanticEntry(ids[4] as string))).toBe(1);
  });

  it('reloads its index after the pub/sub connection comes back', async () => {
    const a = replica();
    const b = replica();
    await Promise.all([a.start(), b.start()]);
    expect(b.loadCount).toBe(1);
    // Drop b's subscriber: events published meanwhile are lost, so b must reload from Redis when it reconnects.
    const subscriber = (b as unknown as { subscriber: { disconnect(reconnect: boolean): void } }).subscriber;
    subscriber.disconnect(true);
    await a.store(entry('while-away', 9));
    await waitFor(() => b.loadCount >= 2 && b.size === 1, 5_000, 'replica b to resync');
    expect(b.search('p1', vec(9), 0.99, '[[],[],0]').match).toBeDefined();
  });
});
