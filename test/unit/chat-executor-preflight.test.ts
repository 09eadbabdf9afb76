import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/gateway-config.ts';
import { ChatExecutor } from '../../src/execution/chat-executor.ts';
import { createLogger } from '../../src/observability/logger.ts';
import type { ChatJobData } from '../../src/queue/job-contract.ts';
import { cancelKey, entryFields, parseEntries, responseStreamKey } from '../../src/streams/protocol.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

// The executor's pre-flight against a real Redis and a real upstream stand-in:
// what it does with a job depends on whether the queue handed it out before.
const redis = testRedis();
const prefix = uniquePrefix('preflight');
let upstream: FakeUpstream;
let executor: ChatExecutor;
let n = 0;

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'pf-upstream-key' });
  const config = validateConfig({
    providers: [{ name: 'p', format: 'openai', api_key_env: 'PF_KEY', base_url: upstream.url, models: ['m'] }],
  });
  executor = new ChatExecutor({
    redis,
    prefix,
    streamTtlSeconds: 60,
    config: () => config,
    env: { PF_KEY: 'pf-upstream-key' },
    logger: createLogger({ LOG_LEVEL: 'error', LOG_FORMAT: 'json', DEBUG: false }, 'test'),
  });
});

afterAll(async () => {
  await upstream.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function job(stream: boolean): ChatJobData {
  const jobId = `job-${++n}`;
  const now = Date.now();
  return {
    v: 1,
    jobId,
    requestId: `req-${n}`,
    provider: 'p',
    request: { model: 'm', messages: [{ role: 'user', content: `hello ${n}` }], n: 1, stream, include_usage: false },
    streamKey: responseStreamKey(prefix, jobId),
    enqueuedAt: now,
    deadlineAt: now + 10_000,
  };
}

async function entries(key: string) {
  return (await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => parseEntries(id, fields));
}

describe('ChatExecutor pre-flight', () => {
  it('on a re-delivery, a stream a dead worker left half-written ends with a clear error and no upstream call', async () => {
    const j = job(true);
    await redis.xadd(j.streamKey, '*', ...entryFields('chunk', '{"partial":true}'));
    upstream.reset();
    const outcome = await executor.run(j, { first: false });
    expect(outcome.status).toBe('skipped');
    expect(upstream.requests).toHaveLength(0);
    const last = (await entries(j.streamKey)).at(-1);
    expect(last?.t).toBe('error');
    expect(JSON.parse(last?.d ?? '{}').code).toBe('provider_error');
  });

  it('on a re-delivery of a job already answered, writes nothing more', async () => {
    const j = job(false);
    await redis.xadd(j.streamKey, '*', ...entryFields('result', '{}'));
    upstream.reset();
    expect((await executor.run(j)).status).toBe('skipped');
    expect(await entries(j.streamKey)).toHaveLength(1);
    expect(upstream.requests).toHaveLength(0);
  });

  it('on a first delivery, calls the upstream and writes the result', async () => {
    const j = job(false);
    upstream.reset();
    const outcome = await executor.run(j, { first: true });
    expect(outcome.status).toBe('ok');
    expect(upstream.requests).toHaveLength(1);
    const written = await entries(j.streamKey);
    expect(written.map((e) => e.t)).toEqual(['result']);
    expect(JSON.parse(written[0]?.d ?? '{}').choices[0].message.content).toBe(`Echo: hello ${n}`);
  });

  it('on a re-delivery or for an asynchronous job, a cancelled job is skipped before any upstream call', async () => {
    for (const [first, record] of [
      [false, false],
      [true, true],
    ] as const) {
      const j = { ...job(false), ...(record ? { record: { key: `${prefix}:async:${n}`, ttlSeconds: 60 } } : {}) };
      await redis.set(cancelKey(prefix, j.jobId), '1', 'EX', 60);
      upstream.reset();
      expect((await executor.run(j, { first })).status).toBe('cancelled');
      expect(upstream.requests).toHaveLength(0);
      expect(await entries(j.streamKey)).toHaveLength(0);
    }
  });

  it('on a first delivery, the cancel mark is read alongside the upstream call and a marked job gets no reply', async () => {
    for (const stream of [false, true]) {
      const j = job(stream);
      await redis.set(cancelKey(prefix, j.jobId), '1', 'EX', 60);
      upstream.reset();
      // The upstream takes longer than the mark's read, so the call is aborted, not finished.
      upstream.setBehavior({ latencyMs: 300 });
      const started = Date.now();
      const outcome = await executor.run(j, { first: true });
      upstream.setBehavior({ latencyMs: 0 });
      expect(outcome.status).toBe('cancelled');
      expect(Date.now() - started).toBeLessThan(300);
      expect(await entries(j.streamKey)).toHaveLength(0);
    }
  });

  it('on a first delivery, a mark read after a fast upstream answered still keeps the result unwritten', async () => {
    const j = job(false);
    await redis.set(cancelKey(prefix, j.jobId), '1', 'EX', 60);
    upstream.reset();
    // A blocking command ahead of it on the executor's connection holds the mark's read back for 300 ms.
    const blocked = redis.blpop(`${prefix}:never`, 0.3);
    const outcome = await executor.run(j, { first: true });
    await blocked;
    expect(upstream.requests).toHaveLength(1);
    expect(outcome.status).toBe('cancelled');
    expect(await entries(j.streamKey)).toHaveLength(0);
  });
});

describe('ChatExecutor queue timeout', () => {
  it('refuses a first delivery that comes after its startBy with provider_timeout and no upstream call, streamed or not', async () => {
    for (const stream of [false, true]) {
      // Enqueued 5 s ago with a 1 s queue timeout: the API's own deadline (deadlineAt) is still ahead.
      const j = { ...job(stream), enqueuedAt: Date.now() - 5_000, startBy: Date.now() - 4_000 };
      upstream.reset();
      const outcome = await executor.run(j, { first: true });
      expect(outcome).toMatchObject({ status: 'error', errorCode: 'provider_timeout' });
      expect(upstream.requests).toHaveLength(0);
      const written = await entries(j.streamKey);
      expect(written.map((e) => [e.t, JSON.parse(e.d).code])).toEqual([['error', 'provider_timeout']]);
    }
  });

  it('runs a re-delivery of such a job while someone still waits for it (its first worker died after starting it in time)', async () => {
    const j = { ...job(false), enqueuedAt: Date.now() - 5_000, startBy: Date.now() - 4_000 };
    upstream.reset();
    expect((await executor.run(j, { first: false })).status).toBe('ok');
    expect(upstream.requests).toHaveLength(1);
  });
});
