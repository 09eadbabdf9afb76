import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CacheStats } from '../../src/cache/cache-stats.ts';
import { ExactCache } from '../../src/cache/exact-cache.ts';
import { readRedisInfo } from '../../src/cache/redis-info.ts';
import { cacheKeys } from '../../src/cache/redis-keys.ts';
import { RequestCoalescer } from '../../src/cache/request-coalescer.ts';
import { formatBytes } from '../../src/cache/byte-size.ts';
import type { ProviderConfig } from '../../src/config/gateway-config.ts';
import { entryFields, responseStreamKey } from '../../src/streams/protocol.ts';
import { StreamReader } from '../../src/streams/stream-reader.ts';
import { waitFor } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { replyFollower } from '../support/reply-follower.ts';

const prefix = uniquePrefix('exact-cache');
const keys = cacheKeys(prefix);
const redis = testRedis();

const provider = {
  name: 'provider_a',
  api_key_env: 'X',
  models: ['a-4o'],
  format: 'openai',
  timeout_ms: 2_000,
  stream_idle_timeout_ms: 1_000,
  queue_timeout_ms: 1_000,
  max_retries: 0,
  concurrency: 1,
} as unknown as ProviderConfig;

afterEach(() => deletePrefix(redis, prefix));
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('ExactCache', () => {
  it('stores with the TTL, reads back the same JSON and its age, and clears with a count', async () => {
    const cache = new ExactCache({ redis, keys, ttlSeconds: 120 });
    expect(await cache.get('k1')).toBeUndefined();
    const json = '{"id":"chatcmpl-1","choices":[{"message":{"content":"line1\\nline2"}}]}';
    await cache.set('k1', json, Date.now() - 5_000);
    await cache.set('k2', json);
    const hit = await cache.get('k1');
    expect(hit?.completion).toBe(json);
    expect(Date.now() - (hit?.storedAt ?? 0)).toBeGreaterThanOrEqual(5_000);
    const ttl = await redis.ttl(keys.exact('k1'));
    expect(ttl).toBeGreaterThan(110);
    expect(ttl).toBeLessThanOrEqual(120);
    expect(await cache.clear()).toBe(2);
    expect(await cache.get('k1')).toBeUndefined();
    expect(await cache.clear()).toBe(0);
  });

  it('expires entries after CACHE_TTL', async () => {
    const cache = new ExactCache({ redis, keys, ttlSeconds: 1 });
    await cache.set('short', '{}');
    expect(await cache.get('short')).toBeDefined();
    await waitFor(async () => (await cache.get('short')) === undefined, 3_000, 'the entry to expire');
  });
});

describe('RequestCoalescer', () => {
  it('makes one leader; followers read its stream; release reports followers', async () => {
    const reader = new StreamReader({ connect: testRedis });
    const coalescer = new RequestCoalescer({ redis, keys, prefix, graceMs: 100 });
    const replies = replyFollower({ reader, redis, prefix, graceMs: 100 });
    try {
      const leader = await coalescer.joinOrLead('same', provider, 'job-1');
      expect(leader).toEqual({ role: 'leader', jobId: 'job-1' });
      const follower = await coalescer.joinOrLead('same', provider, 'job-2');
      expect(follower).toEqual({ role: 'follower', jobId: 'job-1' });
      expect(await coalescer.joinOrLead('other', provider, 'job-3')).toEqual({ role: 'leader', jobId: 'job-3' });

      const dispatch = replies.follow('job-1', provider, new AbortController().signal);
      const stream = responseStreamKey(prefix, 'job-1');
      await redis.xadd(
        stream,
        '*',
        ...entryFields('result', '{"ok":true}', { q: 1, u: 2 }, { prompt_tokens: 1, completion_tokens: 1 }),
      );
      const seen = [];
      for await (const entry of dispatch.entries) seen.push(entry);
      expect(seen.map((e) => [e.t, e.d])).toEqual([['result', '{"ok":true}']]);

      // Only the claim's own job may release it; it reports one follower.
      expect(await coalescer.release('same', 'job-2')).toBe(-1);
      expect(await coalescer.release('same', 'job-1')).toBe(1);
      expect(await coalescer.joinOrLead('same', provider, 'job-4')).toEqual({ role: 'leader', jobId: 'job-4' });
      expect(await coalescer.release('same', 'job-4')).toBe(0);
      // The claim expires by itself after the provider's deadlines.
      expect(await redis.pttl(keys.inflight('other'))).toBeGreaterThan(2_000);
    } finally {
      await reader.close();
    }
  });
});

describe('CacheStats and Redis INFO', () => {
  it('counts lookups in Redis, shared by every instance', async () => {
    const a = new CacheStats(redis, keys);
    const b = new CacheStats(redis, keys);
    expect(await a.read()).toEqual({
      exact: { hits: 0, misses: 0, hit_rate: 0 },
      semantic: { hits: 0, misses: 0, hit_rate: 0, queries: 0, avg_similarity: 0 },
    });
    a.record('exact', true);
    b.record('exact', false);
    b.record('exact', true);
    a.record('semantic', true, 0.96);
    b.record('semantic', true, 0.98);
    a.record('semantic', false);
    await waitFor(
      async () => (await b.read()).semantic.queries === 3 && (await b.read()).exact.hits === 2,
      2_000,
      'counters',
    );
    const counters = await b.read();
    expect(counters.exact).toEqual({ hits: 2, misses: 1, hit_rate: 2 / 3 });
    expect(counters.semantic.hits).toBe(2);
    expect(counters.semantic.misses).toBe(1);
    expect(counters.semantic.avg_similarity).toBeCloseTo(0.97, 5);
  });

  it('reads memory, keys, hits, misses and evictions from INFO', async () => {
    await redis.set(`${prefix}:probe`, '1');
    await redis.get(`${prefix}:probe`);
    await redis.get(`${prefix}:absent`);
    const info = await readRedisInfo(redis);
    expect(info.connected).toBe(true);
    expect(info.usedMemory).toBeGreaterThan(0);
    expect(info.keys).toBeGreaterThanOrEqual(1);
    expect(info.keyspaceHits).toBeGreaterThanOrEqual(1);
    expect(info.keyspaceMisses).toBeGreaterThanOrEqual(1);
    expect(info.evictedKeys).toBeGreaterThanOrEqual(0);
    const down = testRedis();
    down.disconnect();
    expect((await readRedisInfo(down)).connected).toBe(false);
  });

  it('formats sizes with units', () => {
    expect(formatBytes(0)).toBe('0B');
    expect(formatBytes(1536)).toBe('1.50KiB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.00MiB');
    expect(formatBytes(300 * 1024)).toBe('300KiB');
  });
});
