import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { callJobs, submitJob, waitForJobStatus } from '../support/async-jobs.ts';
import { killAll, TRIO_MODELS, upstreamCallsByText } from '../support/batches.ts';
import { databaseBackends, startOnRig, useDurabilityRig } from '../support/durability-rig.ts';
import type { Gateway } from '../support/processes.ts';
import { uniquePrefix } from '../support/redis.ts';

/**
 * Asynchronous jobs survive the loss of everything but their database:
 * queued jobs (their providers have no worker yet), a finished one and a
 * cancelled one are in place when Redis (no persistence: every queue entry,
 * record and reply stream is gone), the API and the worker are SIGKILLed.
 * Started again, with a worker per provider, every queued job completes with
 * its prompt sent upstream exactly once; the finished one keeps its result
 * without a second call; the cancelled one stays cancelled and never runs.
 * On SQLite and on PostgreSQL.
 */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING job-durability: no redis-server binary on PATH ***\n');

const KEY = 'gw_job_durable_key_0123456789';
const QUEUED = 6;

const rig = useDurabilityRig('job_durability');

function start(database: Record<string, string>, prefix: string, providers: string[]): Promise<Gateway> {
  return startOnRig(rig, {
    key: KEY,
    prefix,
    database,
    provider: { timeout_ms: 5000, queue_timeout_ms: 10000 },
    providers,
  });
}

async function submit(gateway: Gateway, model: string, text: string): Promise<string> {
  const created = await submitJob(gateway.baseUrl, KEY, model, text);
  expect(created.status).toBe(202);
  return created.body.id ?? '';
}

const backends = databaseBackends(rig);

describe.skipIf(!hasRedisServer).each(backends)('on $name', (backend) => {
  it('queued jobs complete after Redis, the API and every worker are killed, each prompt sent once; finished and cancelled jobs stay as they were', async (ctx) => {
    const database = backend.env();
    if (!database) return ctx.skip();
    for (const u of Object.values(rig.upstreams)) u.reset();
    const prefix = uniquePrefix('job-durable');
    const text = (name: string | number) => `line-job-${backend.name}-${name}`;

    // Only provider_a has a worker: jobs for b and c wait in their queues.
    let gateway = await start(database, prefix, ['provider_a']);
    const finished = await submit(gateway, TRIO_MODELS.a, text('finished'));
    await waitForJobStatus(gateway.baseUrl, KEY, finished, 'completed');
    const queued: string[] = [];
    for (let i = 0; i < QUEUED; i++)
      queued.push(await submit(gateway, i % 2 === 0 ? TRIO_MODELS.b : TRIO_MODELS.c, text(i)));
    const cancelled = await submit(gateway, TRIO_MODELS.b, text('cancelled'));
    expect(
      (await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${cancelled}/cancel`, { method: 'POST' })).body
        .status,
    ).toBe('cancelled');
    for (const id of queued)
      expect((await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`)).body.status).toBe('queued');

    await killAll(gateway);
    await rig.redis.stop('SIGKILL');
    await rig.redis.start();
    gateway = await start(database, prefix, ['provider_a', 'provider_b', 'provider_c']);
    try {
      for (const id of queued) await waitForJobStatus(gateway.baseUrl, KEY, id, 'completed');
      for (const [i, id] of queued.entries()) {
        const job = await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${id}`);
        expect(job.body.result?.choices[0]?.message.content).toContain(text(i));
      }
      const done = await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${finished}`);
      expect(done.body.status).toBe('completed');
      expect(done.body.result?.choices[0]?.message.content).toContain(text('finished'));
      expect((await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${cancelled}`)).body.status).toBe(
        'cancelled',
      );

      const calls = upstreamCallsByText(Object.values(rig.upstreams));
      expect(Object.fromEntries(calls)).toEqual(
        Object.fromEntries([text('finished'), ...queued.map((_, i) => text(i))].map((t) => [t, 1])),
      );
    } finally {
      await gateway.stop();
    }
  });
});
