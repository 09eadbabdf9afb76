import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callJobs, submitJob, type JobAnswer } from '../support/async-jobs.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

/**
 * A Redis that reaches maxmemory, on private redis-servers:
 *
 * - under `noeviction` (docker-compose.yml) it refuses writes: the gateway
 *   answers 503, drops nothing, and takes work again once memory is freed;
 * - under an evicting policy it drops keys, job records and queue entries
 *   among them: the API warned about it at start, and yet every job is still
 *   there (they live in the key-store database; Redis only said whether a
 *   worker had started them).
 */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING redis-memory: no redis-server binary on PATH ***\n');

const KEY = 'gw_memory_key_one_0123456789';
const MAXMEMORY = '8mb';
const JUNK = 'x'.repeat(100_000);

function startGatewayOn(redis: RedisServer, prefix: string): Promise<Gateway> {
  return startGateway({
    env: {
      REDIS_PORT: String(redis.port),
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_X_API_KEY: 'up',
      DLP_ENABLED: 'false',
      CACHE_ENABLED: 'false',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '1000000',
    },
    // No worker: the jobs wait in their queue, as a backlog does.
    config: {
      providers: [
        {
          name: 'provider_x',
          api_key_env: 'PROVIDER_X_API_KEY',
          format: 'openai',
          base_url: 'http://127.0.0.1:9',
          models: ['x-idle'],
        },
      ],
    },
    providers: [],
  });
}

async function submitQueued(gateway: Gateway, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = await submitJob(gateway.baseUrl, KEY, 'x-idle', `backlog ${i}`);
    expect(created.status).toBe(202);
    ids.push(created.body.id ?? '');
  }
  return ids;
}

describe.skipIf(!hasRedisServer)('Redis at maxmemory with noeviction', () => {
  let redis: RedisServer;
  let gateway: Gateway;
  let client: Redis;

  beforeAll(async () => {
    redis = await startRedisServer({
      args: ['--appendonly', 'yes', '--maxmemory', MAXMEMORY, '--maxmemory-policy', 'noeviction'],
    });
    gateway = await startGatewayOn(redis, 'gwfull');
    client = new Redis({ port: redis.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await gateway?.stop();
    await redis?.stop();
  });

  it('answers 503 while Redis is full, drops no job, and takes work again once memory is freed', async () => {
    const ids = await submitQueued(gateway, 10);
    // Big values first, then ever smaller ones, until not even a small write fits.
    let junk = 0;
    for (const size of [100_000, 1_000, 10]) {
      const full = await (async () => {
        for (; junk < 100_000; junk++) await client.set(`junk:${junk}`, JUNK.slice(0, size));
      })().then(
        () => undefined,
        (err: Error) => err,
      );
      expect(full?.message).toMatch(/^OOM /);
    }
    // Full stays full: a key expiring meanwhile (a worker heartbeat) must not make room for the small
    // writes a job needs, so the limit goes just below what Redis holds now.
    const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
    await client.config('SET', 'maxmemory', String(used - 64 * 1024));

    // A new job needs writes: refused as a full store, not a 500.
    const refused = await submitJob(gateway.baseUrl, KEY, 'x-idle', 'one too many');
    expect(refused.status).toBe(503);
    expect(refused.body.error?.code).toBe('service_unavailable');
    expect(refused.body.error?.message).toContain('full');
    // Reading a job may still work; if a write on its way is refused, that is the same 503.
    const reads: JobAnswer[] = [];
    for (const id of ids) reads.push(await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`));
    const outcomes = reads.map((a) =>
      a.status === 200 ? `200 ${a.body.status}` : `${a.status} ${a.body.error?.code}`,
    );
    expect(outcomes.filter((o) => o !== '200 queued' && o !== '503 service_unavailable')).toEqual([]);

    await client.config('SET', 'maxmemory', MAXMEMORY);
    await client.del(...Array.from({ length: junk }, (_, i) => `junk:${i}`));
    for (const id of ids) {
      const answer = await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`);
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('queued');
    }
    expect((await submitJob(gateway.baseUrl, KEY, 'x-idle', 'room again')).status).toBe(202);
  });
});

describe.skipIf(!hasRedisServer)('Redis at maxmemory with an evicting policy', () => {
  let redis: RedisServer;
  let gateway: Gateway;
  let client: Redis;

  beforeAll(async () => {
    redis = await startRedisServer({
      args: ['--appendonly', 'yes', '--maxmemory', MAXMEMORY, '--maxmemory-policy', 'allkeys-lru'],
    });
    gateway = await startGatewayOn(redis, 'gwevict');
    client = new Redis({ port: redis.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await gateway?.stop();
    await redis?.stop();
  });

  it('was warned about at start', () => {
    const lines = gateway.api
      .output()
      .split('\n')
      .filter((line) => line.includes('Redis may lose jobs'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('maxmemory-policy is allkeys-lru');
  });

  it('evicts job records under memory pressure; every job still answers, queued', async () => {
    const ids = await submitQueued(gateway, 20);
    // Four times maxmemory of fresh keys: the least recently used ones, the idle job records among them, are evicted.
    for (let i = 0; i < 4 * 80; i++) await client.set(`junk:${i}`, JUNK);
    const records = await Promise.all(ids.map((id) => client.exists(`gwevict:async:${id}`)));
    expect(records).toContain(0);

    const answers = await Promise.all(
      ids.map((id) => callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`)),
    );
    expect(answers.map((a) => `${a.status} ${a.body.status}`)).toEqual(ids.map(() => '200 queued'));
  });
});
