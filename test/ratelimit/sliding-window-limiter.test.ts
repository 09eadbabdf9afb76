import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.ts';
import { createRedis, waitForReady } from '../../src/redis/connections.ts';
import { RateLimitStats } from '../../src/ratelimit/rate-limit-stats.ts';
import { SlidingWindowLimiter } from '../../src/ratelimit/sliding-window-limiter.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * The Lua sliding window on the real Redis. A test clock (the limiter's
 * `now` option) makes window edges exact; the default Redis clock is
 * covered by the end-to-end test.
 */

const prefix = uniquePrefix('ratelimit');
const redis = testRedis();
const other = testRedis();
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  other.disconnect();
});

const WINDOW = 60_000;
let subjectCount = 0;
function subject(): string {
  return `subject-${++subjectCount}`;
}

function limiterAt(clock: { t: number }, connection = redis): SlidingWindowLimiter {
  return new SlidingWindowLimiter({ redis: connection, prefix, now: () => clock.t });
}

describe('SlidingWindowLimiter', () => {
  it('admits `limit` requests, then refuses, with remaining and reset', async () => {
    const clock = { t: 1_000_000 };
    const limiter = limiterAt(clock);
    const key = subject();
    const rule = { limit: 3, windowMs: WINDOW };
    const decisions = [];
    for (let i = 0; i < 4; i++) {
      decisions.push(await limiter.consume(key, rule));
      clock.t += 1_000;
    }
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    // The first request (t=1000000) frees its slot at t=1060000; the refusal came at t=1003000.
    expect(decisions[3]!.resetMs).toBe(57_000);
  });

  it('slides: each slot frees exactly one window after its own request', async () => {
    const clock = { t: 5_000_000 };
    const limiter = limiterAt(clock);
    const key = subject();
    const rule = { limit: 2, windowMs: WINDOW };
    await limiter.consume(key, rule); // t0
    clock.t += 20_000;
    await limiter.consume(key, rule); // t0 + 20 s
    clock.t = 5_000_000 + WINDOW - 1;
    expect((await limiter.consume(key, rule)).allowed).toBe(false);
    clock.t = 5_000_000 + WINDOW;
    const freed = await limiter.consume(key, rule);
    expect(freed.allowed).toBe(true);
    expect(freed.remaining).toBe(0);
    // Only one slot freed: the t0+20s request still counts.
    expect((await limiter.consume(key, rule)).allowed).toBe(false);
    clock.t = 5_000_000 + 20_000 + WINDOW;
    expect((await limiter.consume(key, rule)).allowed).toBe(true);
  });

  it('allows no burst at a window edge (a fixed window would admit 2x)', async () => {
    const clock = { t: 9_000_000 + WINDOW - 100 }; // 100 ms before a fixed-window boundary
    const limiter = limiterAt(clock);
    const key = subject();
    const rule = { limit: 10, windowMs: WINDOW };
    for (let i = 0; i < 10; i++) expect((await limiter.consume(key, rule)).allowed).toBe(true);
    clock.t += 200; // 100 ms after the boundary
    let admitted = 0;
    for (let i = 0; i < 10; i++) if ((await limiter.consume(key, rule)).allowed) admitted++;
    expect(admitted).toBe(0);
  });

  it('does not count refused requests, so retrying does not extend the wait', async () => {
    const clock = { t: 13_000_000 };
    const limiter = limiterAt(clock);
    const key = subject();
    const rule = { limit: 1, windowMs: 1_000 };
    await limiter.consume(key, rule);
    for (let i = 0; i < 5; i++) {
      clock.t += 150;
      expect((await limiter.consume(key, rule)).allowed).toBe(false);
    }
    clock.t = 13_000_000 + 1_000;
    expect((await limiter.consume(key, rule)).allowed).toBe(true);
  });

  it('is atomic: 60 concurrent requests over two connections admit exactly the limit', async () => {
    const key = subject();
    const rule = { limit: 25, windowMs: WINDOW };
    const a = new SlidingWindowLimiter({ redis, prefix });
    const b = new SlidingWindowLimiter({ redis: other, prefix });
    const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).consume(key, rule)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
    expect(Math.min(...decisions.map((d) => d.remaining))).toBe(0);
  });

  it('keeps separate windows per key and expires them in Redis', async () => {
    const clock = { t: 20_000_000 };
    const limiter = limiterAt(clock);
    const [k1, k2] = [subject(), subject()];
    const rule = { limit: 1, windowMs: 2_000 };
    expect((await limiter.consume(k1, rule)).allowed).toBe(true);
    expect((await limiter.consume(k2, rule)).allowed).toBe(true);
    expect((await limiter.consume(k1, rule)).allowed).toBe(false);
    const ttl = await redis.pttl(`${prefix}:rl:win:{${k1}}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2_000);
  });

  it('counts requests per masked key and throttled requests for /stats', async () => {
    const statsPrefix = `${prefix}:stats`;
    const limiter = new SlidingWindowLimiter({ redis, prefix: statsPrefix });
    const stats = new RateLimitStats({ redis, prefix: statsPrefix });
    const rule = { limit: 2, windowMs: WINDOW };
    for (let i = 0; i < 5; i++) await limiter.consume('hash-a', rule, 'gw_aaa…aaaa');
    await limiter.consume('hash-b', rule, 'gw_bbb…bbbb');
    await limiter.consume('hash-c', rule); // no label: not in the statistics

    expect(await stats.read()).toEqual({
      requests_throttled: 3,
      top_users: [
        { api_key: 'gw_aaa…aaaa', requests: 5 },
        { api_key: 'gw_bbb…bbbb', requests: 1 },
      ],
    });
    expect((await stats.read({ top: 1 })).top_users).toHaveLength(1);
    // Two short keys can share a mask (`sh…`); they are still counted apart.
    await limiter.consume('hash-d', rule, 'sh…');
    await limiter.consume('hash-e', rule, 'sh…');
    expect((await stats.read()).top_users.filter((u) => u.api_key === 'sh…')).toEqual([
      { api_key: 'sh…', requests: 1 },
      { api_key: 'sh…', requests: 1 },
    ]);
    const stored = (await keysUnder(redis, statsPrefix)).join(' ');
    expect(stored).toContain('hash-a'); // windows by hash
    await stats.reset();
    expect(await stats.read()).toEqual({ requests_throttled: 0, top_users: [] });
  });

  it('sendNow sends the script at once on a coalesced connection instead of at the end of the turn', async () => {
    const settings = loadSettings({
      REDIS_HOST: process.env.REDIS_HOST ?? '127.0.0.1',
      REDIS_PORT: process.env.REDIS_PORT ?? '6379',
      REDIS_KEY_PREFIX: prefix,
    });
    const coalesced = createRedis(settings, 'command', 'limiter-send-now');
    try {
      expect(await waitForReady(coalesced, 2_000)).toBe(true);
      const limiter = new SlidingWindowLimiter({ redis: coalesced, prefix });
      const socket = (coalesced as unknown as { stream: Duplex }).stream;
      const rule = { limit: 5, windowMs: WINDOW };
      const key = subject();
      const held = limiter.consume(key, rule);
      expect(socket.writableCorked).toBe(1);
      expect(socket.writableLength).toBeGreaterThan(0);
      expect((await held).remaining).toBe(4);

      const sent = limiter.consume(key, rule, '', { sendNow: true });
      expect(socket.writableCorked).toBe(0);
      expect(socket.writableLength).toBe(0);
      expect((await sent).remaining).toBe(3);
    } finally {
      coalesced.disconnect();
    }
  });
});
