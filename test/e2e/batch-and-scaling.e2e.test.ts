import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { bullPrefix } from '../../src/queue/job-contract.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Issue 7 through running processes: priorities, asynchronous jobs,
 * backpressure, upstream rate limits and graceful shutdown.
 */

const KEY = 'gw_batch_key_one_0123456789';
const OTHER_KEY = 'gw_batch_key_two_0123456789';
const prefix = uniquePrefix('batch');
const redis = testRedis();
let gateway: Gateway;
let upstream: FakeUpstream;
let limited: FakeUpstream;
let client: OpenAI;

interface JobView {
  id: string;
  object: string;
  status: string;
  model: string;
  result: OpenAI.ChatCompletion | null;
  error: { code: string; message: string } | null;
  created_at: number;
  completed_at: number | null;
}

async function api(
  path: string,
  init: RequestInit & { key?: string } = {},
): Promise<{ status: number; body: Untyped; headers: Headers }> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      'x-api-key': init.key ?? KEY,
      ...(init.headers as Record<string, string>),
    },
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Jobs waiting in a provider's BullMQ queue (every job has a priority, so they sit in its prioritized set). */
async function waiting(provider: string): Promise<number> {
  const queue = `${bullPrefix(prefix, provider)}:chat-${provider}`;
  const [prioritized, plain] = await Promise.all([redis.zcard(`${queue}:prioritized`), redis.llen(`${queue}:wait`)]);
  return prioritized + plain;
}

function lastUserText(body: unknown): string {
  const messages = (body as { messages: { role: string; content: string }[] }).messages;
  return messages[messages.length - 1]?.content ?? '';
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a' });
  limited = await startFakeUpstream({ format: 'openai', apiKey: 'up-b' });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: `${KEY},${OTHER_KEY}`,
      PROVIDER_A_API_KEY: 'up-a',
      PROVIDER_B_API_KEY: 'up-b',
      PROVIDER_X_API_KEY: 'up-a',
      DLP_ENABLED: 'false',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      SHUTDOWN_GRACE_MS: '10000',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          concurrency: 1,
        },
        {
          name: 'provider_b',
          api_key_env: 'PROVIDER_B_API_KEY',
          format: 'openai',
          base_url: limited.url,
          models: ['b-limited'],
          rate_limit: { max: 2, duration_ms: 1000 },
        },
        {
          name: 'provider_x',
          api_key_env: 'PROVIDER_X_API_KEY',
          format: 'openai',
          base_url: upstream.url,
          models: ['x-idle'],
          max_queue_depth: 2,
          queue_timeout_ms: 600000,
          rate_limit: { max: 1, duration_ms: 600000 },
        },
      ],
    },
    providers: ['provider_a', 'provider_b', 'provider_x'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  // provider_x's one upstream call per ten minutes, used up now: from here on its jobs wait in its queue.
  await client.chat.completions.create({
    model: 'x-idle',
    messages: [{ role: 'user', content: 'uses up the rate limit' }],
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await limited?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('priorities', () => {
  it('serves priority, then interactive, then flex, then batch work', async () => {
    upstream.reset();
    upstream.setBehavior({ latencyMs: 400 });
    // Occupies the only job slot (concurrency 1) while the others queue up.
    const blocker = client.chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content: 'blocker' }] });
    await expect.poll(() => upstream.requests.length).toBe(1);
    const batch = await api('/v1/chat/completions/jobs', {
      method: 'POST',
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'batch' }] }),
    });
    expect(batch.status).toBe(202);
    const flex = client.chat.completions.create({
      model: 'a-4o',
      service_tier: 'flex',
      messages: [{ role: 'user', content: 'flex' }],
    });
    await new Promise((r) => setTimeout(r, 50));
    const interactive = client.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'interactive' }],
    });
    await new Promise((r) => setTimeout(r, 50));
    const urgent = client.chat.completions.create({
      model: 'a-4o',
      service_tier: 'priority',
      messages: [{ role: 'user', content: 'urgent' }],
    });
    upstream.setBehavior({ latencyMs: 0 });
    await Promise.all([blocker, flex, interactive, urgent]);
    await expect.poll(() => upstream.requests.length, { timeout: 5_000 }).toBe(5);
    expect(upstream.requests.map((r) => lastUserText(r.body))).toEqual([
      'blocker',
      'urgent',
      'interactive',
      'flex',
      'batch',
    ]);
  });
});

describe('asynchronous jobs', () => {
  it('answers 202 at once, then the result can be polled', async () => {
    upstream.reset();
    const created = await api('/v1/chat/completions/jobs', {
      method: 'POST',
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'async hello' }] }),
    });
    expect(created.status).toBe(202);
    const job = created.body as JobView;
    expect(job.object).toBe('chat.completion.job');
    expect(job.status).toBe('queued');
    expect(job.id).toMatch(/^cjob_/);
    expect(created.headers.get('location')).toBe(`/v1/chat/completions/jobs/${job.id}`);
    let view: JobView = job;
    await expect
      .poll(
        async () => {
          view = (await api(`/v1/chat/completions/jobs/${job.id}`)).body as JobView;
          return view.status;
        },
        { timeout: 10_000 },
      )
      .toBe('completed');
    expect(view.result?.choices[0]?.message.content).toBe('Echo: async hello');
    expect(view.result?.usage?.total_tokens).toBeGreaterThan(0);
    expect(view.completed_at).toBeGreaterThanOrEqual(view.created_at);

    // Only the owner sees it; deleting forgets it.
    expect((await api(`/v1/chat/completions/jobs/${job.id}`, { key: OTHER_KEY })).status).toBe(404);
    const deleted = await api(`/v1/chat/completions/jobs/${job.id}`, { method: 'DELETE' });
    expect(deleted.body).toEqual({ id: job.id, object: 'chat.completion.job.deleted', deleted: true });
    expect((await api(`/v1/chat/completions/jobs/${job.id}`)).status).toBe(404);
  });

  it('records a failure with the catalog error', async () => {
    upstream.reset();
    upstream.setBehavior({ failNext: { count: 5, status: 401 } });
    const created = await api('/v1/chat/completions/jobs', {
      method: 'POST',
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'will fail' }] }),
    });
    let view = created.body as JobView;
    await expect
      .poll(
        async () => {
          view = (await api(`/v1/chat/completions/jobs/${view.id}`)).body as JobView;
          return view.status;
        },
        { timeout: 10_000 },
      )
      .toBe('failed');
    expect(view.error?.code).toBe('provider_error');
    expect(view.result).toBeNull();
    upstream.reset();
  });

  it('cancels a running job: the upstream call is aborted and the status stays cancelled', async () => {
    upstream.reset();
    upstream.setBehavior({ latencyMs: 1500 });
    const created = await api('/v1/chat/completions/jobs', {
      method: 'POST',
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'cancel me' }] }),
    });
    const id = (created.body as JobView).id;
    await expect.poll(() => upstream.requests.length, { timeout: 5_000 }).toBe(1);
    const cancelled = await api(`/v1/chat/completions/jobs/${id}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    expect((cancelled.body as JobView).status).toBe('cancelled');
    await expect.poll(() => upstream.closedEarly, { timeout: 5_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(((await api(`/v1/chat/completions/jobs/${id}`)).body as JobView).status).toBe('cancelled');
    upstream.setBehavior({ latencyMs: 0 });
  });

  it('cancelling a job that still waits takes it off the queue', async () => {
    // provider_x's rate limit is used up (beforeAll): the job stays queued until cancelled.
    const created = await api('/v1/chat/completions/jobs', {
      method: 'POST',
      body: JSON.stringify({ model: 'x-idle', messages: [{ role: 'user', content: 'wait, then cancel' }] }),
    });
    expect(await waiting('provider_x')).toBe(1);
    expect(
      (await api(`/v1/chat/completions/jobs/${(created.body as JobView).id}/cancel`, { method: 'POST' })).status,
    ).toBe(200);
    expect(await waiting('provider_x')).toBe(0);
  });

  it('rejects streamed jobs and unknown ids in the error envelope', async () => {
    const streamed = await api('/v1/chat/completions/jobs', {
      method: 'POST',
      body: JSON.stringify({ model: 'a-4o', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(streamed.status).toBe(400);
    expect(streamed.body.error.code).toBe('invalid_request');
    const missing = await api('/v1/chat/completions/jobs/cjob_nope');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });
});

describe('clients that give up', () => {
  it('a request whose client disconnects while it waits is taken off the queue and never reaches the upstream', async () => {
    upstream.reset();
    upstream.setBehavior({ latencyMs: 1000 });
    // provider_a runs one job at a time: the first request holds its worker, the second waits.
    let firstDone = false;
    const first = client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'holds the worker' }] })
      .finally(() => (firstDone = true));
    await expect.poll(() => upstream.requests.length, { timeout: 5_000 }).toBe(1);
    const controller = new AbortController();
    const second = client.chat.completions
      .create(
        { model: 'a-4o', messages: [{ role: 'user', content: 'gives up while waiting' }] },
        { signal: controller.signal },
      )
      .catch((e: unknown) => e);
    await expect.poll(() => waiting('provider_a'), { timeout: 5_000 }).toBe(1);
    controller.abort();
    expect(await second).toBeInstanceOf(Error);
    // Gone from the queue at once, not when the busy worker would have reached it.
    await expect.poll(() => waiting('provider_a'), { timeout: 5_000 }).toBe(0);
    expect(firstDone).toBe(false);
    expect((await first).choices[0]?.message.content).toBe('Echo: holds the worker');
    // The worker is free again and the queue is empty: the abandoned prompt was never sent.
    await new Promise((r) => setTimeout(r, 300));
    expect(upstream.requests.map((r) => lastUserText(r.body))).toEqual(['holds the worker']);
    upstream.setBehavior({ latencyMs: 0 });
  });
});

describe('backpressure and upstream rate limits', () => {
  it('answers 503 with Retry-After once a queue is over its configured depth', async () => {
    // provider_x's rate limit is used up (beforeAll): its jobs stay queued. Asynchronous jobs take only the places
    // interactive requests leave (src/queue/queue-places.ts), so the two that fill the queue are interactive.
    const job = await api('/v1/chat/completions/jobs', {
      method: 'POST',
      body: JSON.stringify({ model: 'x-idle', messages: [{ role: 'user', content: 'background' }] }),
    });
    expect(job.status).toBe(202);
    const leave = new AbortController();
    const fillers = Array.from({ length: 2 }, (_, i) =>
      fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        signal: leave.signal,
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ model: 'x-idle', messages: [{ role: 'user', content: `fill ${i}` }] }),
      }).catch(() => undefined),
    );
    await expect.poll(() => waiting('provider_x')).toBeGreaterThanOrEqual(3);
    const full = await api('/v1/chat/completions', {
      method: 'POST',
      body: JSON.stringify({ model: 'x-idle', messages: [{ role: 'user', content: 'one more' }] }),
    });
    leave.abort();
    await Promise.all(fillers);
    expect(full.status).toBe(503);
    expect(full.body.error.code).toBe('service_unavailable');
    expect(full.body.error.message).toContain('queue is full');
    expect(full.headers.get('retry-after')).toBe('1');
  });

  it('spaces upstream calls by the provider rate limit shared by its workers', async () => {
    limited.reset();
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        client.chat.completions.create({ model: 'b-limited', messages: [{ role: 'user', content: `limited ${i}` }] }),
      ),
    );
    expect(limited.requests).toHaveLength(4);
    const times = limited.requests.map((r) => r.receivedAt).sort((a, b) => a - b);
    // max 2 per second: the third call waits for the next window.
    expect((times[2] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(900);
  });
});

describe('graceful shutdown', () => {
  it('a worker given SIGTERM finishes its active job before it exits', async () => {
    upstream.reset();
    upstream.setBehavior({ latencyMs: 800 });
    const pending = client.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'finish me' }],
    });
    await expect.poll(() => upstream.requests.length).toBe(1);
    const [worker] = gateway.workers.get('provider_a') ?? [];
    const exitCode = worker?.kill('SIGTERM');
    const reply = await pending;
    expect(reply.choices[0]?.message.content).toBe('Echo: finish me');
    expect(await exitCode).toBe(0);
    upstream.setBehavior({ latencyMs: 0 });
    await gateway.addWorker('provider_a');
  });

  it('the API given SIGTERM finishes an in-flight stream, then exits', async () => {
    upstream.reset();
    upstream.setBehavior({ chunkDelayMs: 100 });
    const stream = await client.chat.completions.create({
      model: 'a-4o',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four five six' }],
    });
    const exited = gateway.api.kill('SIGTERM');
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe('Echo: one two three four five six');
    expect(await exited).toBe(0);
  });
});
