import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { callJobs, readJobOnceRedisAnswers, submitJob, waitForJobStatus } from '../support/async-jobs.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

/**
 * Asynchronous jobs across a Redis restart, on private redis-servers:
 *
 * - without persistence, every job is gone afterwards, and its owner is told
 *   so (410 `job_lost`), by any API process, instead of "no such job" (404);
 *   ids the gateway never minted, and other owners, still get 404; the API and
 *   the worker warned at start;
 * - with the Redis flags of docker-compose.yml (AOF), queued and finished jobs
 *   survive a crash of Redis, the queued ones then run, and nothing is warned.
 */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING redis-persistence: no redis-server binary on PATH ***\n');

const KEY = 'gw_persist_key_one_0123456789';
const OTHER_KEY = 'gw_persist_key_two_0123456789';
const WARNING = 'Redis may lose jobs';
const JOBS_PER_PROVIDER = 25;

/** The flags docker-compose.yml gives its Redis (`command` without the program name). */
function composeRedisArgs(): string[] {
  const compose = parse(readFileSync(resolve(import.meta.dirname, '../../docker-compose.yml'), 'utf8')) as { services: { redis: { command: string[] } } };
  const [program, ...args] = compose.services.redis.command;
  expect(program).toBe('redis-server');
  return args;
}

function gatewayEnv(redis: RedisServer, prefix: string): Record<string, string> {
  return {
    REDIS_PORT: String(redis.port),
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: `${KEY},${OTHER_KEY}`,
    PROVIDER_A_API_KEY: 'up',
    PROVIDER_X_API_KEY: 'up',
    DLP_ENABLED: 'false',
    CACHE_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    RATE_LIMIT_REQUESTS: '1000000',
    JOB_ID_SECRET: 'persistence-test-secret',
  };
}

/** provider_a has a worker (its jobs complete); provider_x has none (its jobs stay queued). */
function startGatewayOn(redis: RedisServer, upstream: FakeUpstream, prefix: string): Promise<Gateway> {
  return startGateway({
    env: gatewayEnv(redis, prefix),
    config: {
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] },
        { name: 'provider_x', api_key_env: 'PROVIDER_X_API_KEY', format: 'openai', base_url: upstream.url, models: ['x-idle'] },
      ],
    },
    providers: ['provider_a'],
  });
}

async function submit(gateway: Gateway, model: string, text: string): Promise<string> {
  const created = await submitJob(gateway.baseUrl, KEY, model, text);
  expect(created.status).toBe(202);
  return created.body.id ?? '';
}

/** Jobs that finished and jobs that wait in their queue. */
async function submitBatch(gateway: Gateway): Promise<{ finished: string[]; queued: string[] }> {
  const finished = await Promise.all(Array.from({ length: JOBS_PER_PROVIDER }, (_, i) => submit(gateway, 'a-4o', `finished ${i}`)));
  const queued = await Promise.all(Array.from({ length: JOBS_PER_PROVIDER }, (_, i) => submit(gateway, 'x-idle', `queued ${i}`)));
  for (const id of finished) await waitForJobStatus(gateway.baseUrl, KEY, id, 'completed');
  for (const id of queued) expect((await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`)).body.status).toBe('queued');
  return { finished, queued };
}

function warningLines(output: string): string[] {
  return output.split('\n').filter((line) => line.includes(WARNING));
}

describe.skipIf(!hasRedisServer)('asynchronous jobs and a Redis without persistence', () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let gateway: Gateway;
  let replica: ApiReplica | undefined;

  beforeAll(async () => {
    redis = await startRedisServer({ args: ['--save', '', '--appendonly', 'no'] });
    upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up' });
    gateway = await startGatewayOn(redis, upstream, 'gwvolatile');
  }, 60_000);

  afterAll(async () => {
    await replica?.stop();
    await gateway?.stop();
    await upstream?.close();
    await redis?.stop();
  });

  it('warns at start, once in the API and once in the worker, that a Redis restart loses jobs', () => {
    const [worker] = gateway.workers.get('provider_a') ?? [];
    for (const output of [gateway.api.output(), worker?.output() ?? '']) {
      const lines = warningLines(output);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('persistence is off');
    }
  });

  it('a job deleted by its owner answers 404, not job_lost', async () => {
    const id = await submit(gateway, 'a-4o', 'delete me');
    expect((await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`, { method: 'DELETE' })).status).toBe(200);
    const answer = await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`);
    expect(answer.status).toBe(404);
    expect(answer.body.error?.code).toBe('not_found');
  });

  it('after a restart, every job it held answers 410 job_lost to its owner, from any API process; other ids and owners get 404', async () => {
    const { finished, queued } = await submitBatch(gateway);
    await redis.stop();
    await redis.start();

    const lost = [...finished, ...queued];
    expect(lost).toHaveLength(2 * JOBS_PER_PROVIDER);
    for (const id of lost) {
      const answer = await readJobOnceRedisAnswers(gateway.baseUrl, KEY, id);
      expect(answer.status).toBe(410);
      expect(answer.body.error?.code).toBe('job_lost');
      expect(answer.body.error?.type).toBe('api_error');
      expect(answer.body.error?.message).toContain('resubmit');
    }
    // Cancel and delete say the same about a lost job.
    expect((await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${queued[0]}/cancel`, { method: 'POST' })).status).toBe(410);
    expect((await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${queued[1]}`, { method: 'DELETE' })).status).toBe(410);

    // Another owner cannot tell a lost job from one that never existed.
    const foreign = await callJobs(gateway.baseUrl, OTHER_KEY, `/v1/chat/completions/jobs/${finished[0]}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error?.code).toBe('not_found');
    // Ids the gateway never minted: a made-up one, an all-zero one, and a real one with its last digit changed.
    const id = finished[0] ?? '';
    const altered = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
    for (const unknown of ['cjob_nope', `cjob_${'0'.repeat(48)}`, altered]) {
      const answer = await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${unknown}`);
      expect(answer.status).toBe(404);
      expect(answer.body.error?.code).toBe('not_found');
    }

    // The API that minted the ids is gone; another one with the same JOB_ID_SECRET answers the same.
    await gateway.api.kill('SIGKILL');
    replica = await startApiReplica(gatewayEnv(redis, 'gwvolatile'), gateway.configPath);
    for (const id of lost) {
      const answer = await callJobs(replica.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`);
      expect(answer.status).toBe(410);
      expect(answer.body.error?.code).toBe('job_lost');
    }
  });
});

describe.skipIf(!hasRedisServer)('asynchronous jobs and the Redis of docker-compose.yml (AOF)', () => {
  let redis: RedisServer;
  let upstream: FakeUpstream;
  let gateway: Gateway;

  beforeAll(async () => {
    redis = await startRedisServer({ args: composeRedisArgs() });
    upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up' });
    gateway = await startGatewayOn(redis, upstream, 'gwdurable');
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
    await redis?.stop();
  });

  it('warns about nothing at start', () => {
    const [worker] = gateway.workers.get('provider_a') ?? [];
    expect(warningLines(gateway.api.output())).toEqual([]);
    expect(warningLines(worker?.output() ?? '')).toEqual([]);
  });

  it('queued and finished jobs survive a crash of Redis, and the queued ones then run', async () => {
    const { finished, queued } = await submitBatch(gateway);
    // appendfsync everysec: what was written more than a second before the crash is on disk.
    await new Promise((r) => setTimeout(r, 1_500));
    await redis.stop('SIGKILL');
    await redis.start();

    for (const id of finished) {
      const answer = await readJobOnceRedisAnswers(gateway.baseUrl, KEY, id);
      expect(answer.status).toBe(200);
      expect(answer.body.status).toBe('completed');
      expect(answer.body.result?.choices[0]?.message.content).toMatch(/^Echo: finished \d+$/);
    }
    for (const id of queued) expect((await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`)).body.status).toBe('queued');

    // The queue survived too: a worker for provider_x now runs every waiting job.
    await gateway.addWorker('provider_x');
    for (const id of queued) await waitForJobStatus(gateway.baseUrl, KEY, id, 'completed');
  });
});
