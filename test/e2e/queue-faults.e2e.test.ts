import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The queues under faults, through real API and worker processes on a private
 * Redis (stopped and started again here): a Redis blip before the first job,
 * backpressure under a simultaneous burst, the longest wait in a queue, and
 * providers without a live worker.
 */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING queue-faults: no redis-server binary on PATH ***\n');

const KEY = 'gw_queue_faults_key_0123456789';
const ADMIN = 'gw_queue_faults_admin_0123456';

/** provider_a: one job at a time, at most 5 waiting. provider_b: one job at a time, 1.5 s in the queue at most. provider_c: never a worker. */
function configDoc(a: FakeUpstream, b: FakeUpstream, extra: object[] = []) {
  return {
    providers: [
      {
        name: 'provider_a',
        api_key_env: 'PROVIDER_A_API_KEY',
        base_url: a.url,
        models: ['a-4o'],
        concurrency: 1,
        max_queue_depth: 5,
        queue_timeout_ms: 10_000,
        timeout_ms: 8_000,
      },
      {
        name: 'provider_b',
        api_key_env: 'PROVIDER_B_API_KEY',
        format: 'openai',
        base_url: b.url,
        models: ['b-late'],
        concurrency: 1,
        queue_timeout_ms: 1_500,
        timeout_ms: 10_000,
        max_retries: 0,
      },
      {
        name: 'provider_c',
        api_key_env: 'PROVIDER_C_API_KEY',
        format: 'openai',
        base_url: a.url,
        models: ['c-idle'],
        queue_timeout_ms: 3_000,
        timeout_ms: 3_000,
      },
      ...extra,
    ],
  };
}

let redisServer: RedisServer;
let upstreamA: FakeUpstream;
let upstreamB: FakeUpstream;
let gateway: Gateway;
let replica: ApiReplica;
let env: Record<string, string>;

interface Reply {
  status: number;
  body: Untyped;
  headers: Headers;
  ms: number;
}

async function call(
  baseUrl: string,
  path: string,
  init: { method?: string; body?: unknown; key?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  const started = Date.now();
  const res = await fetch(`${baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', 'x-api-key': init.key ?? KEY, ...init.headers },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    signal: AbortSignal.timeout(init.timeoutMs ?? 20_000),
  });
  const text = await res.text();
  let body: Untyped = text;
  try {
    body = JSON.parse(text);
  } catch {
    // SSE or Prometheus text
  }
  return { status: res.status, body, headers: res.headers, ms: Date.now() - started };
}

function chat(
  baseUrl: string,
  model: string,
  content: string,
  options: { stream?: boolean; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  return call(baseUrl, '/v1/chat/completions', {
    method: 'POST',
    body: { model, stream: options.stream ?? false, messages: [{ role: 'user', content }] },
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
}

function submitJob(baseUrl: string, model: string, content: string): Promise<Reply> {
  return call(baseUrl, '/v1/chat/completions/jobs', {
    method: 'POST',
    body: { model, messages: [{ role: 'user', content }] },
  });
}

function sentTo(upstream: FakeUpstream, text: string): boolean {
  return upstream.requests.some((r) => JSON.stringify(r.body).includes(text));
}

describe.skipIf(!hasRedisServer)('queues under faults', () => {
  beforeAll(async () => {
    redisServer = await startRedisServer();
    upstreamA = await startFakeUpstream({ format: 'openai', apiKey: 'up-a' });
    upstreamB = await startFakeUpstream({ format: 'openai', apiKey: 'up-b' });
    env = {
      REDIS_PORT: String(redisServer.port),
      REDIS_KEY_PREFIX: 'gwqf',
      API_KEYS: KEY,
      ADMIN_API_KEYS: ADMIN,
      PROVIDER_A_API_KEY: 'up-a',
      PROVIDER_B_API_KEY: 'up-b',
      PROVIDER_C_API_KEY: 'up-a',
      PROVIDER_D_API_KEY: 'up-a',
      DLP_ENABLED: 'false',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '1000000',
      WORKER_HEARTBEAT_MS: '500',
      PROMETHEUS_METRICS_ENABLED: 'true',
    };
    gateway = await startGateway({
      env,
      config: configDoc(upstreamA, upstreamB),
      providers: ['provider_a', 'provider_b'],
    });
    replica = await startApiReplica(env, gateway.configPath);
  }, 60_000);

  afterAll(async () => {
    await replica?.stop();
    await gateway?.stop();
    await Promise.all([upstreamA?.close(), upstreamB?.close()]);
    await redisServer?.stop();
  });

  // First: no queue may exist in the API processes before the outage.
  describe('a Redis blip before the first job', () => {
    it('after a /health or /metrics call during the outage, chat and jobs succeed within 2 s of Redis returning, and readiness says so', async () => {
      await redisServer.stop();
      expect((await call(gateway.baseUrl, '/health')).status).toBe(503);
      await call(replica.baseUrl, '/metrics');
      await redisServer.start();
      const back = Date.now();

      const jobs: string[] = [];
      for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
        let last: Reply[] = [];
        await waitFor(
          async () => {
            const ready = await call(baseUrl, '/health/ready');
            // Ready must mean a job can be enqueued: checked right after it says so.
            if (ready.status !== 200) return false;
            last = [
              ready,
              await chat(baseUrl, 'a-4o', `after the blip ${baseUrl}`),
              await submitJob(baseUrl, 'a-4o', `job after the blip ${baseUrl}`),
            ];
            return last[1]?.status === 200 && last[2]?.status === 202;
          },
          2_000 - (Date.now() - back),
          `chat through ${baseUrl} after the blip`,
        ).catch((err: Error) => {
          throw new Error(`${err.message}; last replies: ${JSON.stringify(last.map((r) => [r.status, r.body]))}`);
        });
        expect(last[0]?.body.checks).toMatchObject({ cache_store: 'connected', queues: 'ready' });
        jobs.push(last[2]?.body.id);
      }
      expect(Date.now() - back).toBeLessThan(2_000);
      // Redis came back empty: the workers announce themselves again as soon as they reconnect, not a beat later.
      await waitFor(
        async () => {
          const health = await call(gateway.baseUrl, '/health');
          return (
            health.body.services?.providers.provider_a === 'available' &&
            health.body.services?.providers.provider_b === 'available'
          );
        },
        3_000 - (Date.now() - back),
        'the workers to be seen again',
      );
      // The jobs run too (and are out of the way of what follows).
      for (const id of jobs) {
        await expect
          .poll(async () => (await call(gateway.baseUrl, `/v1/chat/completions/jobs/${id}`)).body.status, {
            timeout: 10_000,
          })
          .toBe('completed');
      }
    });
  });

  describe('backpressure', () => {
    it.each([
      ['claimed through the response cache', {}],
      ['bypassing the response cache', { 'cache-control': 'no-store' }],
    ])('a simultaneous burst of 30 into a queue of depth 5 admits exactly 5 (%s)', async (_, headers) => {
      upstreamA.reset();
      upstreamA.setBehavior({ latencyMs: 3_000 });
      // The only job slot of provider_a is taken, so nothing leaves the queue during the burst.
      const blocker = chat(gateway.baseUrl, 'a-4o', `blocker ${Math.random()}`);
      await expect.poll(() => upstreamA.requests.length, { timeout: 5_000 }).toBe(1);
      upstreamA.setBehavior({ latencyMs: 0 });
      const tag = Math.random().toString(36).slice(2);
      const burst = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          chat(i % 2 === 0 ? gateway.baseUrl : replica.baseUrl, 'a-4o', `burst ${tag} ${i}`, { headers }),
        ),
      );
      const refused = burst.filter((r) => r.status === 503);
      const served = burst.filter((r) => r.status === 200);
      expect(refused).toHaveLength(25);
      expect(served).toHaveLength(5);
      for (const r of refused) {
        expect(r.body.error.code).toBe('service_unavailable');
        expect(r.body.error.message).toContain('queue is full');
        expect(r.headers.get('retry-after')).toBe('1');
      }
      expect((await blocker).status).toBe(200);
      // Only the admitted ones ever reached the upstream.
      expect(upstreamA.requests.filter((r) => JSON.stringify(r.body).includes(`burst ${tag}`))).toHaveLength(5);
    });
  });

  describe('the longest wait in a queue is queue_timeout_ms', () => {
    it('a request whose job no worker starts within queue_timeout_ms gets 504 provider_timeout then, and its prompt never reaches the upstream', async () => {
      upstreamB.reset();
      upstreamB.setBehavior({ latencyMs: 4_000 });
      const blocker = chat(gateway.baseUrl, 'b-late', 'holds the only slot');
      await expect.poll(() => upstreamB.requests.length, { timeout: 5_000 }).toBe(1);
      const sent = Promise.all([
        chat(gateway.baseUrl, 'b-late', 'waits too long, json'),
        // Identical: coalesced onto the job of the one before (whichever API process claims first), with no deadline of its own this short.
        chat(replica.baseUrl, 'b-late', 'waits too long, json'),
        chat(replica.baseUrl, 'b-late', 'waits too long, stream', { stream: true }),
      ]);
      // Two jobs wait, not three: the identical requests share one.
      const waitingJobs = async () =>
        (await call(gateway.baseUrl, '/health')).body.details.providers.provider_b.waiting_jobs as number;
      await expect.poll(waitingJobs, { timeout: 1_000 }).toBeGreaterThanOrEqual(2);
      await new Promise((r) => setTimeout(r, 300));
      expect(await waitingJobs()).toBe(2);
      const waiting = await sent;
      for (const r of waiting) {
        expect(r.status).toBe(504);
        expect(r.body.error.code).toBe('provider_timeout');
        // queue_timeout_ms is 1500: answered then, not when the busy worker would have reached the job.
        expect(r.ms).toBeGreaterThanOrEqual(1_400);
        expect(r.ms).toBeLessThan(2_500);
      }
      expect((await blocker).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
      expect(upstreamB.requests).toHaveLength(1);
    });

    it('a worker refuses a job that waited longer than queue_timeout_ms even when its API process died and could not take it back', async () => {
      const orphan = await startApiReplica(env, gateway.configPath);
      upstreamB.reset();
      upstreamB.setBehavior({ latencyMs: 3_000 });
      const blocker = chat(gateway.baseUrl, 'b-late', 'holds the only slot again');
      await expect.poll(() => upstreamB.requests.length, { timeout: 5_000 }).toBe(1);
      const lost = chat(orphan.baseUrl, 'b-late', 'orphaned while waiting').catch((err: unknown) => err);
      await new Promise((r) => setTimeout(r, 300));
      await orphan.process.kill('SIGKILL');
      await lost;
      upstreamB.setBehavior({ latencyMs: 0 });
      expect((await blocker).status).toBe(200);
      // The worker is free again: it takes the orphan (which waited about 3 s) first and must refuse it.
      const after = await chat(gateway.baseUrl, 'b-late', 'served after the orphan');
      expect(after.status).toBe(200);
      expect(sentTo(upstreamB, 'served after the orphan')).toBe(true);
      expect(sentTo(upstreamB, 'orphaned while waiting')).toBe(false);
    });
  });

  describe('a provider without a live worker', () => {
    it('answers 503 service_unavailable with Retry-After at once for chat and streams; a batch job waits for a worker', async () => {
      for (const send of [
        () => chat(gateway.baseUrl, 'c-idle', 'nobody serves this'),
        () => chat(replica.baseUrl, 'c-idle', 'nobody streams this', { stream: true }),
      ]) {
        const r = await send();
        expect(r.status).toBe(503);
        expect(r.body.error.code).toBe('service_unavailable');
        expect(r.body.error.message).toContain('provider_c');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(r.ms).toBeLessThan(1_000);
      }
      // Asynchronous work is tolerant of queuing: accepted, it waits in the queue for a worker.
      const job = await submitJob(gateway.baseUrl, 'c-idle', 'a worker may come');
      expect(job.status).toBe(202);
    });

    it('a provider added by a reload without a worker: the reload result names it, and its requests answer 503 at once', async () => {
      writeFileSync(
        gateway.configPath,
        stringify(
          configDoc(upstreamA, upstreamB, [
            {
              name: 'provider_d',
              api_key_env: 'PROVIDER_D_API_KEY',
              format: 'openai',
              base_url: upstreamA.url,
              models: ['d-new'],
            },
          ]),
        ),
      );
      const reload = await call(gateway.baseUrl, '/admin/reload-config', { method: 'POST', key: ADMIN });
      expect(reload.status).toBe(200);
      expect(reload.body.providers_without_workers).toEqual(['provider_c', 'provider_d']);
      expect(reload.body.message).toContain('provider_d');
      const r = await chat(replica.baseUrl, 'd-new', 'a new provider');
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('service_unavailable');
      expect(r.ms).toBeLessThan(1_000);
    });

    it('a provider whose workers all die mid-traffic answers 503 within seconds, and serves again once a worker is back', async () => {
      expect((await chat(gateway.baseUrl, 'a-4o', 'served before the kill')).status).toBe(200);
      const [worker] = gateway.workers.get('provider_a') ?? [];
      await worker!.kill('SIGKILL');
      gateway.workers.set('provider_a', []);
      const killedAt = Date.now();
      // Heartbeats count for 3 x 500 ms, and each API process refreshes its view of them every second or so.
      const flippedAt = new Map<string, number>();
      while (flippedAt.size < 2 && Date.now() - killedAt < 6_000) {
        for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
          if (flippedAt.has(baseUrl)) continue;
          const at = Date.now();
          // A probe that still got enqueued gives up after 500 ms (and its job is cancelled).
          const reply = await chat(baseUrl, 'a-4o', `probe ${at}`, { timeoutMs: 500 }).catch(() => undefined);
          if (reply?.status === 503) {
            expect(reply.body.error).toMatchObject({
              code: 'service_unavailable',
              message: expect.stringContaining('provider_a'),
            });
            flippedAt.set(baseUrl, at);
          }
        }
      }
      expect([...flippedAt.keys()].sort(), 'API processes answering 503 within 6 s of the last worker dying').toEqual(
        [gateway.baseUrl, replica.baseUrl].sort(),
      );
      for (const at of flippedAt.values()) expect(at - killedAt).toBeLessThan(4_000);
      for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
        const r = await chat(baseUrl, 'a-4o', 'after the flip');
        expect(r.status).toBe(503);
        expect(r.ms).toBeLessThan(1_000);
      }

      await gateway.addWorker('provider_a');
      for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
        await waitFor(
          async () => (await chat(baseUrl, 'a-4o', `recovered ${Date.now()}`)).status === 200,
          3_000,
          `provider_a to serve again through ${baseUrl}`,
        );
      }
    });
  });
});
