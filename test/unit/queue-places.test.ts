import { afterAll, describe, expect, it } from 'vitest';
import { WorkerHeartbeat } from '../../src/health/worker-heartbeat.ts';
import { WorkerPresence } from '../../src/health/worker-presence.ts';
import { placesKey, QueuePlaces } from '../../src/queue/queue-places.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

// Places in a queue (max_queue_depth) and the API's view of live workers, on the real Redis.
const redis = testRedis();
const prefix = uniquePrefix('queue-places');
const places = new QueuePlaces({ redis, prefix });

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('QueuePlaces', () => {
  it('of 30 simultaneous takes with a limit of 5, exactly 5 get a place; the others a 503 with Retry-After: 1', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => places.take('burst', `job-${i}`, 5, 60_000)),
    );
    const taken = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(taken).toHaveLength(5);
    expect(refused).toHaveLength(25);
    for (const err of refused)
      expect(err).toMatchObject({
        code: 'service_unavailable',
        headers: { 'Retry-After': '1' },
        message: expect.stringContaining('queue is full (5 waiting jobs)'),
      });
    expect(await redis.zcard(placesKey(prefix, 'burst'))).toBe(5);
  });

  it('a place given back is free for the next job; giving back a place not held changes nothing', async () => {
    await places.take('release', 'a', 1, 60_000);
    await expect(places.take('release', 'b', 1, 60_000)).rejects.toMatchObject({ code: 'service_unavailable' });
    await places.release('release', 'never-held');
    await expect(places.take('release', 'b', 1, 60_000)).rejects.toMatchObject({ code: 'service_unavailable' });
    await places.release('release', 'a');
    await expect(places.take('release', 'b', 1, 60_000)).resolves.toEqual({ provider: 'release', jobId: 'b' });
  });

  it('background places take only what interactive ones leave; interactive ones never count them', async () => {
    for (let i = 0; i < 3; i++) await places.take('tiers', `batch-${i}`, 3, 60_000, 'background');
    await expect(places.take('tiers', 'batch-4', 3, 60_000, 'background')).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    // The queue holds 3 background jobs, yet all 3 interactive places are free.
    for (let i = 0; i < 3; i++) await places.take('tiers', `chat-${i}`, 3, 60_000);
    await expect(places.take('tiers', 'chat-4', 3, 60_000)).rejects.toMatchObject({ code: 'service_unavailable' });
    // Releasing needs no tier. Background work gets room only once interactive jobs leave it some.
    await places.release('tiers', 'batch-0');
    await expect(places.take('tiers', 'batch-5', 3, 60_000, 'background')).rejects.toMatchObject({
      code: 'service_unavailable',
    });
    for (let i = 0; i < 3; i++) await places.release('tiers', `chat-${i}`);
    await expect(places.take('tiers', 'batch-5', 3, 60_000, 'background')).resolves.toEqual({
      provider: 'tiers',
      jobId: 'batch-5',
    });
    expect(await redis.zrange(placesKey(prefix, 'tiers', 'background'), 0, -1)).toEqual(
      expect.arrayContaining(['batch-1', 'batch-2', 'batch-5']),
    );
  });

  it('a place never given back lapses when its longest wait is over, so the count cannot drift', async () => {
    await places.take('lapse', 'lost', 1, 200);
    await expect(places.take('lapse', 'next', 1, 60_000)).rejects.toMatchObject({ code: 'service_unavailable' });
    await expect
      .poll(
        () =>
          places.take('lapse', 'next', 1, 60_000).then(
            () => true,
            () => false,
          ),
        { timeout: 3_000 },
      )
      .toBe(true);
    expect(await redis.zrange(placesKey(prefix, 'lapse'), 0, -1)).toEqual(['next']);
  });
});

describe('WorkerPresence', () => {
  it('refuses a provider without a live worker with 503 and Retry-After, and lets it through as soon as one beats, without waiting for a refresh', async () => {
    // No periodic refresh at all: a view that says "none" is confirmed by a fresh read before refusing.
    const presence = new WorkerPresence({ redis, prefix, providers: () => ['served', 'idle'], retryAfterSeconds: 3 });
    await expect(presence.requireLiveWorker('served')).rejects.toMatchObject({
      code: 'service_unavailable',
      headers: { 'Retry-After': '3' },
      message: expect.stringContaining('served'),
    });
    const heartbeat = new WorkerHeartbeat({
      redis,
      prefix,
      workerId: 'w1',
      providers: () => ['served'],
      intervalMs: 60_000,
    });
    heartbeat.start();
    try {
      await expect
        .poll(() =>
          presence.requireLiveWorker('served').then(
            () => true,
            () => false,
          ),
        )
        .toBe(true);
      await expect(presence.requireLiveWorker('idle')).rejects.toMatchObject({ code: 'service_unavailable' });
      expect(await presence.withoutWorkers(['served', 'idle', 'added'])).toEqual(['idle', 'added']);
    } finally {
      await heartbeat.stop();
    }
    await expect(
      presence.requireLiveWorker('served').then(
        () => 'served',
        () => 'refused',
      ),
    ).resolves.toBe('served'); // the view still says live...
    const fresh = new WorkerPresence({ redis, prefix, providers: () => ['served'] });
    await expect(fresh.requireLiveWorker('served')).rejects.toMatchObject({ code: 'service_unavailable' }); // ...until it is refreshed
  });

  it('lets requests through when the heartbeats cannot be read: they meet Redis trouble where they need Redis', async () => {
    const down = testRedis();
    down.disconnect();
    const presence = new WorkerPresence({ redis: down, prefix, providers: () => ['served'] });
    await expect(presence.requireLiveWorker('served')).resolves.toBeUndefined();
  });
});
