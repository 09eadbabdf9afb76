import { afterAll, describe, expect, it } from 'vitest';
import { cacheKeys } from '../../src/cache/redis-keys.ts';
import { RequestCoalescer } from '../../src/cache/request-coalescer.ts';
import type { ProviderConfig } from '../../src/config/gateway-config.ts';
import { ReaderWatch } from '../../src/execution/reader-watch.ts';
import { jobReadersKey, readerLivenessKey, ReaderLiveness } from '../../src/streams/reader-liveness.ts';
import { waitFor } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

// Reader liveness against a real Redis: what API processes write, what workers conclude from it,
// and what the coalescer does with a claim whose job nobody reads any more.
const prefix = uniquePrefix('reader-liveness');
const redis = testRedis();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const provider = { name: 'p', queue_timeout_ms: 1_000, timeout_ms: 2_000 } as unknown as ProviderConfig;

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('ReaderLiveness (API side)', () => {
  it('touch() sets the key at once, then adds no command within the refresh period', async () => {
    const liveness = new ReaderLiveness({
      redis,
      prefix,
      id: 'api-touch',
      reading: () => false,
      ttlMs: 2_000,
      refreshMs: 300,
    });
    const key = readerLivenessKey(prefix, 'api-touch');
    liveness.touch();
    await waitFor(async () => (await redis.exists(key)) === 1, 1_000, 'the liveness key');
    expect(await redis.pttl(key)).toBeGreaterThan(1_000);
    // Requests within the period send nothing: the key deleted behind its back stays deleted.
    await redis.del(key);
    for (let i = 0; i < 50; i++) liveness.touch();
    await sleep(50);
    expect(await redis.exists(key)).toBe(0);
    await sleep(300);
    liveness.touch();
    await waitFor(async () => (await redis.exists(key)) === 1, 1_000, 'the key set again after the period');
    await liveness.close();
    expect(await redis.exists(key)).toBe(0);
    liveness.touch();
    await sleep(50);
    expect(await redis.exists(key)).toBe(0);
  });

  it('keeps the key alive while the process reads, and lets it lapse while it does not', async () => {
    let reading = true;
    const liveness = new ReaderLiveness({
      redis,
      prefix,
      id: 'api-timer',
      reading: () => reading,
      ttlMs: 300,
      refreshMs: 60,
    });
    const key = readerLivenessKey(prefix, 'api-timer');
    liveness.start();
    try {
      await waitFor(async () => (await redis.exists(key)) === 1, 1_000, 'the first refresh');
      await sleep(600); // twice the TTL: only refreshes keep it
      expect(await redis.exists(key)).toBe(1);
      reading = false;
      await waitFor(async () => (await redis.exists(key)) === 0, 1_000, 'the key to lapse');
    } finally {
      await liveness.close();
    }
  });
});

describe('ReaderWatch (worker side)', () => {
  const watchOptions = { redis, prefix, intervalMs: 50, misses: 2 };

  it('gives a job up only after its reader and every follower lost their keys, and only after two checks in a row', async () => {
    const watch = new ReaderWatch(watchOptions);
    const reader = readerLivenessKey(prefix, 'leader-api');
    const follower = readerLivenessKey(prefix, 'follower-api');
    await redis.set(reader, '1', 'PX', 10_000);
    await redis.set(follower, '1', 'PX', 10_000);
    await redis.sadd(jobReadersKey(prefix, 'job-w1'), 'follower-api');
    let gone = 0;
    const stop = watch.watch('job-w1', 'leader-api', () => gone++);
    try {
      await sleep(300);
      expect(gone).toBe(0);
      await redis.del(reader); // the leader's API process died; a follower still reads
      await sleep(300);
      expect(gone).toBe(0);
      await redis.del(follower);
      await waitFor(() => gone === 1, 2_000, 'the job to be given up');
      await sleep(200);
      expect(gone).toBe(1); // once
      expect(watch.size).toBe(0);
    } finally {
      stop();
      watch.close();
    }
  });

  it('a key missing at one check only (being re-written) does not give the job up', async () => {
    const watch = new ReaderWatch({ ...watchOptions, intervalMs: 100, misses: 2 });
    const reader = readerLivenessKey(prefix, 'flaky-api');
    let gone = false;
    const stop = watch.watch('job-w2', 'flaky-api', () => (gone = true));
    try {
      // Present, except for a window much shorter than one interval, again and again: a check may land in a
      // window, never two in a row (with misses: 1 this would give the job up in most runs).
      for (let i = 0; i < 10; i++) {
        await redis.del(reader);
        await sleep(30);
        await redis.set(reader, '1', 'PX', 10_000);
        await sleep(220);
      }
      expect(gone).toBe(false);
    } finally {
      stop();
      watch.close();
    }
  });

  it('a job that finished is not watched any more', async () => {
    const watch = new ReaderWatch(watchOptions);
    let gone = false;
    const stop = watch.watch('job-w3', 'never-alive-api', () => (gone = true));
    stop();
    await sleep(250);
    expect(gone).toBe(false);
    expect(watch.size).toBe(0);
  });
});

describe('RequestCoalescer with reader liveness', () => {
  const keys = cacheKeys(prefix);
  const live = (id: string) => ({ id, touch: () => void redis.set(readerLivenessKey(prefix, id), '1', 'PX', 10_000) });

  it('a follower joins a claim someone reads, and registers as a reader of its job', async () => {
    const a = new RequestCoalescer({ redis, keys, prefix, liveness: live('api-a') });
    const b = new RequestCoalescer({ redis, keys, prefix, liveness: live('api-b') });
    expect(await a.joinOrLead('q1', provider, 'job-c1')).toEqual({ role: 'leader', jobId: 'job-c1' });
    expect(await b.joinOrLead('q1', provider, 'job-c2')).toEqual({ role: 'follower', jobId: 'job-c1' });
    expect(await redis.smembers(jobReadersKey(prefix, 'job-c1'))).toEqual(['api-b']);
    expect(await redis.pttl(jobReadersKey(prefix, 'job-c1'))).toBeGreaterThan(300_000);
    // The leader's process died: its follower still reads, so the next one follows too.
    await redis.del(readerLivenessKey(prefix, 'api-a'));
    const c = new RequestCoalescer({ redis, keys, prefix, liveness: live('api-c') });
    expect(await c.joinOrLead('q1', provider, 'job-c3')).toEqual({ role: 'follower', jobId: 'job-c1' });
  });

  it('a claim whose job nobody reads any more is taken over, not followed', async () => {
    const a = new RequestCoalescer({ redis, keys, prefix, liveness: live('api-d') });
    expect(await a.joinOrLead('q2', provider, 'job-d1')).toEqual({ role: 'leader', jobId: 'job-d1' });
    await redis.del(readerLivenessKey(prefix, 'api-d'));
    const b = new RequestCoalescer({ redis, keys, prefix, liveness: live('api-e') });
    expect(await b.joinOrLead('q2', provider, 'job-d2')).toEqual({ role: 'leader', jobId: 'job-d2' });
    expect(await b.release('q2', 'job-d2')).toBe(0);
    expect(await a.release('q2', 'job-d1')).toBe(-1);
  });

  it('a claim made without reader liveness is followed as before', async () => {
    const old = new RequestCoalescer({ redis, keys, prefix });
    expect(await old.joinOrLead('q3', provider, 'job-o1')).toEqual({ role: 'leader', jobId: 'job-o1' });
    const b = new RequestCoalescer({ redis, keys, prefix, liveness: live('api-f') });
    expect(await b.joinOrLead('q3', provider, 'job-o2')).toEqual({ role: 'follower', jobId: 'job-o1' });
  });
});
