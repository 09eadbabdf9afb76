import { createServer, type Server, type Socket } from 'node:net';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresKeyStore } from '../../src/auth/postgres-key-store.ts';
import { SqliteKeyStore } from '../../src/auth/sqlite-key-store.ts';
import { validateConfig } from '../../src/config/gateway-config.ts';
import { HealthService } from '../../src/health/health-service.ts';
import { countLiveWorkers, WorkerHeartbeat, workersKey } from '../../src/health/worker-heartbeat.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { bullPrefix } from '../../src/queue/job-contract.ts';

/** Health rules on the real Redis and real key stores: backlog, timeouts, heartbeat expiry. */

const prefix = uniquePrefix('health-service');
const redis = testRedis();
const queue = new Queue('chat-provider_a', { connection: testRedis(), prefix: bullPrefix(prefix, 'provider_a') });
const config = validateConfig({
  providers: [
    { name: 'provider_a', api_key_env: 'HS_KEY_A', models: ['a-4o'] },
    { name: 'provider_b', api_key_env: 'HS_KEY_B', models: ['b-2.5-flash'] },
  ],
});
const store = new SqliteKeyStore({ path: ':memory:' });
let blackhole: Server;
const held: Socket[] = [];

function service(options: Partial<ConstructorParameters<typeof HealthService>[0]> = {}) {
  return new HealthService({
    redis,
    prefix,
    keyStore: store,
    config: () => config,
    configError: () => undefined,
    waitingJobs: (provider) =>
      provider === 'provider_a' ? queue.getJobCountByTypes('wait', 'prioritized') : Promise.resolve(0),
    probeQueues: () => Promise.resolve(),
    backlogThreshold: 3,
    version: '9.9.9',
    env: { HS_KEY_A: 'a', HS_KEY_B: 'b' },
    ...options,
  });
}

beforeAll(async () => {
  // A server that accepts connections and never answers: a hung database.
  blackhole = createServer((socket) => held.push(socket));
  await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', () => resolve()));
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  blackhole.close();
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('HealthService', () => {
  it('a provider with live workers and a backlog at the threshold is degraded', async () => {
    const heartbeat = new WorkerHeartbeat({
      redis,
      prefix,
      workerId: 'w1',
      providers: () => ['provider_a', 'provider_b'],
      intervalMs: 1_000,
    });
    heartbeat.start();
    try {
      await expect.poll(async () => (await countLiveWorkers(redis, prefix, ['provider_a'])).get('provider_a')).toBe(1);
      expect((await service().health()).status).toBe('healthy');

      await queue.addBulk(Array.from({ length: 3 }, (_, i) => ({ name: 'chat', data: { i } })));
      const record = await service().health();
      expect(record.services.providers).toEqual({ provider_a: 'degraded', provider_b: 'available' });
      expect(record.details.providers.provider_a).toMatchObject({ waiting_jobs: 3, live_workers: 1 });
      expect(record.status).toBe('degraded');
      // 0 turns the backlog rule off.
      expect((await service({ backlogThreshold: 0 }).health()).services.providers.provider_a).toBe('available');
    } finally {
      await heartbeat.stop();
    }
    expect((await countLiveWorkers(redis, prefix, ['provider_a'])).get('provider_a')).toBe(0);
  });

  it('a heartbeat counts for its TTL only', async () => {
    const heartbeat = new WorkerHeartbeat({
      redis,
      prefix,
      workerId: 'w-brief',
      providers: () => ['provider_b'],
      intervalMs: 60_000,
      ttlMs: 300,
    });
    heartbeat.start();
    await expect.poll(async () => (await countLiveWorkers(redis, prefix, ['provider_b'])).get('provider_b')).toBe(1);
    await expect
      .poll(async () => (await countLiveWorkers(redis, prefix, ['provider_b'])).get('provider_b'), { timeout: 2_000 })
      .toBe(0);
    await heartbeat.stop();
  });

  it('a worker beats again as soon as its connection is back, so heartbeats a restarted Redis lost return without waiting a period', async () => {
    const connection = testRedis();
    const heartbeat = new WorkerHeartbeat({
      redis: connection,
      prefix,
      workerId: 'w-reconnect',
      providers: () => ['provider_c'],
      intervalMs: 60_000,
    });
    heartbeat.start();
    try {
      await expect.poll(async () => (await countLiveWorkers(redis, prefix, ['provider_c'])).get('provider_c')).toBe(1);
      await redis.del(workersKey(prefix, 'provider_c'));
      connection.disconnect(true);
      await expect
        .poll(async () => (await countLiveWorkers(redis, prefix, ['provider_c'])).get('provider_c'), { timeout: 5_000 })
        .toBe(1);
    } finally {
      await heartbeat.stop();
      connection.disconnect();
    }
  });

  it('a database that hangs is disconnected after the check timeout, without holding the probe', async () => {
    const address = blackhole.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const hung = new PostgresKeyStore({
      connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
      connectTimeoutMs: 30_000,
    });
    const started = Date.now();
    const ready = await service({ keyStore: hung, checkTimeoutMs: 300 }).readiness();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(ready).toMatchObject({ status: 'ready', checks: { database: 'disconnected', cache_store: 'connected' } });
    void hung.close();
  });

  it('is not ready while a job cannot be added to some queue, though Redis answers PING', async () => {
    const probed: string[][] = [];
    const stuck = service({
      probeQueues: async (providers) => (
        probed.push([...providers]),
        Promise.reject(new Error("Stream isn't writeable"))
      ),
    });
    expect(await stuck.readiness()).toMatchObject({
      status: 'not_ready',
      checks: { cache_store: 'connected', queues: 'failed' },
    });
    expect(probed).toEqual([['provider_a', 'provider_b']]);
    expect(await service().readiness()).toMatchObject({ status: 'ready', checks: { queues: 'ready' } });
  });

  it('no usable provider or no configuration is unhealthy; a missing key makes a provider unavailable', async () => {
    const noKeys = await service({ env: {} }).health();
    expect(noKeys.services.providers).toEqual({ provider_a: 'unavailable', provider_b: 'unavailable' });
    expect(noKeys.status).toBe('unhealthy');
    const failed = service({ configError: () => 'config.yaml is invalid: providers: too small' });
    expect(await failed.readiness()).toMatchObject({
      status: 'not_ready',
      checks: { config: 'failed' },
      config_error: expect.stringContaining('too small'),
    });
    expect((await failed.health()).status).toBe('unhealthy');
  });
});
