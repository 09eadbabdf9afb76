import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { createKeyWithCli } from '../support/gateway-cli.ts';
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from '../support/postgres.ts';
import { freePort, startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * /health, /health/ready and /health/live reflect real state. The gateway
 * runs on a private redis-server this test stops and restarts, and reaches
 * PostgreSQL through a TCP proxy it cuts and restores; workers are stopped
 * gracefully and killed.
 */

const KEY = 'health-static-key-01';
const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const CONFIG = {
  providers: [
    { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models: ['a-4o'] },
    { name: 'provider_b', api_key_env: 'PROVIDER_B_API_KEY', models: ['b-2.5-flash'] },
    { name: 'provider_c', api_key_env: 'PROVIDER_C_API_KEY', models: ['c-sonnet-4-20250514'] },
  ],
};

let redisServer: RedisServer;
let database: TestDatabase;
let proxy: TcpProxy;
let gateway: Gateway;
let env: Record<string, string>;

async function probe(
  path: string,
  key: string | null = KEY,
  baseUrl = gateway.baseUrl,
): Promise<{ status: number; body: Untyped }> {
  const res = await fetch(`${baseUrl}${path}`, { headers: key ? { 'x-api-key': key } : {} });
  return { status: res.status, body: await res.json() };
}

async function until(
  path: string,
  predicate: (reply: { status: number; body: Untyped }) => boolean,
  what: string,
  baseUrl = gateway.baseUrl,
) {
  let last: unknown;
  await waitFor(
    async () => {
      const reply = await probe(path, KEY, baseUrl);
      last = reply;
      return predicate(reply);
    },
    15_000,
    `${what}; last reply ${JSON.stringify(last)}`,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last reply ${JSON.stringify(last)}`);
  });
}

beforeAll(async () => {
  redisServer = await startRedisServer();
  database = await createTestDatabase('health');
  proxy = await startTcpProxy(Number(new URL(POSTGRES_URL).port || 5432));
  const url = new URL(database.url);
  url.port = String(proxy.port);
  env = {
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(redisServer.port),
    REDIS_KEY_PREFIX: uniquePrefix('health'),
    API_KEYS: KEY,
    PROVIDER_A_API_KEY: 'up-a',
    PROVIDER_B_API_KEY: 'up-b',
    DATABASE_URL: url.toString(),
    WORKER_HEARTBEAT_MS: '300',
    AUTH_CACHE_TTL_MS: '500',
    SEMANTIC_CACHE_ENABLED: 'false',
    RATE_LIMIT_REQUESTS: '100000',
  };
  gateway = await startGateway({ env, config: CONFIG, providers: ['provider_a'] });
});

afterAll(async () => {
  await gateway?.stop();
  await proxy?.close();
  await redisServer?.stop();
  await database?.drop();
});

describe('health probes', () => {
  it('report every dependency: Redis, database, and per provider its key and live workers', async () => {
    await until('/health', (r) => r.body.services?.providers?.provider_a === 'available', 'provider_a to be available');
    const { status, body } = await probe('/health');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'degraded',
      services: {
        cache_store: 'connected',
        database: 'connected',
        providers: { provider_a: 'available', provider_b: 'unavailable', provider_c: 'unavailable' },
      },
      version: VERSION,
      details: {
        database: { kind: 'postgres' },
        config: { loaded: true },
        providers: {
          provider_a: { key_configured: true, live_workers: 1, waiting_jobs: 0 },
          // Key set, but no worker consumes its queue.
          provider_b: { key_configured: true, live_workers: 0 },
          provider_c: { key_configured: false, live_workers: 0 },
        },
      },
    });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);

    expect(await probe('/health/ready')).toEqual({
      status: 200,
      body: {
        status: 'ready',
        timestamp: expect.any(String),
        checks: { cache_store: 'connected', config: 'loaded', database: 'connected', queues: 'ready' },
      },
    });
    expect(await probe('/health/live')).toEqual({ status: 200, body: { status: 'alive' } });
  });

  it('need a key like every endpoint (PUBLIC_PATHS unset)', async () => {
    for (const path of ['/health', '/health/ready', '/health/live']) {
      const reply = await probe(path, null);
      expect(reply.status).toBe(401);
      expect(reply.body.error.code).toBe('invalid_api_key');
    }
  });

  it('a provider is unavailable as soon as its last worker stops, and again available when one starts', async () => {
    const [worker] = gateway.workers.get('provider_a')!;
    await worker!.kill('SIGTERM');
    gateway.workers.set('provider_a', []);
    // A clean stop removes the heartbeat at once: no need to wait for its TTL.
    const reply = await probe('/health');
    expect(reply.body.services.providers.provider_a).toBe('unavailable');
    // No provider can serve: the gateway is unhealthy and says so with 503.
    expect(reply.status).toBe(503);
    expect(reply.body.status).toBe('unhealthy');

    await gateway.addWorker('provider_a');
    await until(
      '/health',
      (r) => r.status === 200 && r.body.services.providers.provider_a === 'available',
      'the new worker to be seen',
    );
  });

  it('a killed worker drops out once its heartbeat expires', async () => {
    const [worker] = gateway.workers.get('provider_a')!;
    await worker!.kill('SIGKILL');
    gateway.workers.set('provider_a', []);
    const killedAt = Date.now();
    await until('/health', (r) => r.body.services.providers.provider_a === 'unavailable', 'the dead worker to expire');
    // Heartbeat TTL is 3 x 300 ms.
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    await gateway.addWorker('provider_a');
    await until('/health', (r) => r.body.services.providers.provider_a === 'available', 'the replacement worker');
  });

  it('the database going away is degraded, not unready; a seen key keeps working, an unseen one gets 503', async () => {
    const seen = await createKeyWithCli(env, 'dora');
    const unseen = await createKeyWithCli(env, 'eve');
    expect((await probe('/v1/models', seen.key)).status).toBe(200);

    await proxy.cut();
    await until('/health', (r) => r.body.services?.database === 'disconnected', 'the database to be disconnected');
    const health = await probe('/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('degraded');
    const ready = await probe('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.checks.database).toBe('disconnected');

    await new Promise((resolve) => setTimeout(resolve, 600)); // past AUTH_CACHE_TTL_MS
    expect((await probe('/v1/models', seen.key)).status).toBe(200);
    const unknown = await probe('/v1/models', unseen.key);
    expect(unknown.status).toBe(503);
    expect(unknown.body.error.code).toBe('service_unavailable');

    await proxy.restore();
    await until('/health', (r) => r.body.services?.database === 'connected', 'the database to reconnect');
    expect((await probe('/v1/models', unseen.key)).status).toBe(200);
  });

  it('Redis going away is unhealthy and not ready, /v1 answers 503, liveness stays; all recovers with Redis', async () => {
    await redisServer.stop();
    const health = await probe('/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({
      status: 'unhealthy',
      services: { cache_store: 'disconnected', providers: { provider_a: 'unavailable' } },
    });
    const ready = await probe('/health/ready');
    expect(ready).toMatchObject({
      status: 503,
      body: { status: 'not_ready', checks: { cache_store: 'disconnected', config: 'loaded', queues: 'failed' } },
    });
    expect(await probe('/health/live')).toEqual({ status: 200, body: { status: 'alive' } });
    const v1 = await probe('/v1/models');
    expect(v1.status).toBe(503);
    expect(v1.body.error).toMatchObject({ code: 'service_unavailable', type: 'api_error' });

    await redisServer.start();
    await until('/health/ready', (r) => r.status === 200, 'readiness after Redis is back');
    await until('/health', (r) => r.body.services.providers.provider_a === 'available', 'the worker to beat again');
    expect((await probe('/v1/models')).status).toBe(200);
  });
});

describe('health of an API started while its database is down', () => {
  let replica: ApiReplica;
  beforeAll(async () => {
    const deadPort = await freePort();
    replica = await startApiReplica(
      { ...env, DATABASE_URL: `postgres://postgres@127.0.0.1:${deadPort}/test` },
      gateway.configPath,
    );
  });
  afterAll(async () => {
    await replica?.stop();
  });

  it('starts anyway, reports the database disconnected and stays ready; static keys work', async () => {
    const health = await probe('/health', KEY, replica.baseUrl);
    expect(health.body.services.database).toBe('disconnected');
    expect(health.body.services.cache_store).toBe('connected');
    expect((await probe('/health/ready', KEY, replica.baseUrl)).status).toBe(200);
    expect((await probe('/v1/models', KEY, replica.baseUrl)).status).toBe(200);
  });
});
