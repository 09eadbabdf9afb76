import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * The broker end to end: a real API process, real worker processes, real
 * Redis, loopback upstreams in the three wire formats, and the official
 * `openai` client.
 */

const KEY = 'gw_e2e_broker_key_0123456789';
const prefix = uniquePrefix('broker');
const redis = testRedis();
let gateway: Gateway;
let client: OpenAI;
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;

const MODELS = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4-20250514' } as const;

beforeAll(async () => {
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: { a: ['a-4o', 'a-4'], b: MODELS.b, c: MODELS.c },
    provider: { timeout_ms: 1500, stream_idle_timeout_ms: 1000, queue_timeout_ms: 5000, max_retries: 2 },
    env: {
      MAX_REQUEST_BYTES: '4096',
      WORKER_LOCK_DURATION_MS: '1500',
      WORKER_STALLED_INTERVAL_MS: '500',
      DLP_ENABLED: 'false',
    },
    moreProviders: (upstreams) => [
      {
        name: 'provider_d',
        api_key_env: 'PROVIDER_D_API_KEY_UNSET',
        format: 'openai',
        base_url: upstreams.a.url,
        models: ['d-model'],
      },
    ],
    workers: ['provider_a', 'provider_b', 'provider_c'],
  });
  ({ gateway, upstreams } = trio);
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function resetUpstreams(): void {
  for (const u of Object.values(upstreams)) u.reset();
}

/** Unique text per test, so no cache can answer for another test. */
function prompt(label: string): string {
  return `${label} ${Math.random().toString(36).slice(2, 8)}`;
}

describe.each(Object.entries(MODELS))('provider_%s through the queue', (letter, model) => {
  it('answers a non-streamed completion in OpenAI shape, with Server-Timing', async () => {
    resetUpstreams();
    const text = prompt('hello sync');
    const { data, response } = await client.chat.completions
      .create({
        model,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: text },
        ],
        max_tokens: 50,
        temperature: 0.5,
      })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe(model);
    expect(data.id).toMatch(/^chatcmpl-[A-Za-z0-9]+$/);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]?.message).toEqual({ role: 'assistant', content: `Echo: ${text}` });
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    expect(data.usage?.total_tokens).toBe((data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0));
    const timing = response.headers.get('server-timing') ?? '';
    expect(timing).toMatch(/queue;dur=\d+/);
    expect(timing).toMatch(/upstream;dur=\d+/);
    expect(timing).toMatch(/total;dur=[\d.]+/);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    // The upstream saw its own wire format with its own key.
    const upstream = upstreams[letter as 'a' | 'b' | 'c'];
    expect(upstream.requests).toHaveLength(1);
  });

  it('streams a completion as chat.completion.chunk events ending with usage', async () => {
    resetUpstreams();
    const text = prompt('hello stream');
    const stream = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: text }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined | null;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe(model);
      for (const choice of chunk.choices) {
        content += choice.delta.content ?? '';
        if (choice.finish_reason) finish = choice.finish_reason;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(content).toBe(`Echo: ${text}`);
    expect(finish).toBe('stop');
    expect(chunks).toBeGreaterThan(2);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });
});

describe('request mapping', () => {
  it('sends n > 1 as n choices (fanned out for provider_c)', async () => {
    resetUpstreams();
    const text = prompt('choices');
    const reply = await client.chat.completions.create({
      model: MODELS.c,
      messages: [{ role: 'user', content: text }],
      n: 2,
    });
    expect(reply.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(upstreams.c.requests).toHaveLength(2);
    const viaA = await client.chat.completions.create({
      model: MODELS.a,
      messages: [{ role: 'user', content: text }],
      n: 3,
    });
    expect(viaA.choices).toHaveLength(3);
    expect(upstreams.a.requests).toHaveLength(1);
  });

  it('lists every configured model on /v1/models', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id).sort();
    expect(ids).toEqual(['a-4', 'a-4o', 'b-2.5-flash', 'c-sonnet-4-20250514', 'd-model']);
  });
});

describe('typed errors through the SDK', () => {
  it('401 for a wrong key (AuthenticationError, code invalid_api_key)', async () => {
    const bad = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: 'wrong', maxRetries: 0 });
    const err = await bad.chat.completions
      .create({ model: MODELS.a, messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(err.status).toBe(401);
    expect(err.code).toBe('invalid_api_key');
    expect(err.type).toBe('authentication_error');
  });

  it('400 model_not_found for an unknown model', async () => {
    const err = await client.chat.completions
      .create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('model_not_found');
    expect(err.message).toContain('no-such-model');
  });

  it('400 invalid_request naming the bad field', async () => {
    const err = await client.chat.completions
      .create({ model: MODELS.a, messages: [{ role: 'user', content: 'x' }], temperature: 3 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.code).toBe('invalid_request');
    expect(err.message).toContain('temperature');
    const empty = await client.chat.completions.create({ model: MODELS.a, messages: [] }).catch((e) => e);
    expect(empty.code).toBe('invalid_request');
    expect(empty.message).toContain('messages');
  });

  it('400 when the provider cannot express a parameter (temperature > 1 on provider_c)', async () => {
    const err = await client.chat.completions
      .create({ model: MODELS.c, messages: [{ role: 'user', content: 'x' }], temperature: 1.5 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(err.message).toMatch(/temperature/);
  });

  it('502 provider_error after retries are exhausted, without the upstream key', async () => {
    resetUpstreams();
    upstreams.a.setBehavior({ failNext: { count: 10, status: 500, message: 'boom with upstream-a-secret inside' } });
    const err = await client.chat.completions
      .create({ model: MODELS.a, messages: [{ role: 'user', content: prompt('fail') }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(502);
    expect(err.code).toBe('provider_error');
    expect(err.message).toContain('HTTP 500');
    expect(err.message).toContain('3 attempts');
    expect(err.message).not.toContain('upstream-a-secret');
    expect(upstreams.a.requests).toHaveLength(3);
  });

  it('502 with a clear message for a provider whose key is not configured', async () => {
    const err = await client.chat.completions
      .create({ model: 'd-model', messages: [{ role: 'user', content: 'x' }] })
      .catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.code).toBe('provider_error');
    expect(err.message).toContain('PROVIDER_D_API_KEY_UNSET');
  });

  it('413 request_too_large for an oversized body', async () => {
    const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ model: MODELS.a, messages: [{ role: 'user', content: 'x'.repeat(8000) }] }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { code: string; type: string }; request_id: string; timestamp: string };
    expect(body.error.code).toBe('request_too_large');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  });

  it('400 for malformed JSON and 404 in the envelope for unknown routes', async () => {
    const bad = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: '{"model": ',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    const missing = await fetch(`${gateway.baseUrl}/v2/nothing`, { headers: { 'x-api-key': KEY } });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('honours a sane incoming X-Request-Id and replaces a hostile one', async () => {
    const ok = await fetch(`${gateway.baseUrl}/v1/models`, {
      headers: { 'x-api-key': KEY, 'x-request-id': 'trace-123.abc' },
    });
    expect(ok.headers.get('x-request-id')).toBe('trace-123.abc');
    const hostile = await fetch(`${gateway.baseUrl}/v1/models`, {
      headers: { 'x-api-key': KEY, 'x-request-id': 'a b<script>' },
    });
    expect(hostile.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('failure semantics', () => {
  it('retries 429 with Retry-After and 503 before the first token, then succeeds', async () => {
    resetUpstreams();
    upstreams.b.setBehavior({ failNext: { count: 1, status: 429, retryAfter: 0 } });
    const text = prompt('retry');
    const reply = await client.chat.completions.create({
      model: MODELS.b,
      messages: [{ role: 'user', content: text }],
    });
    expect(reply.choices[0]?.message.content).toBe(`Echo: ${text}`);
    expect(upstreams.b.requests).toHaveLength(2);

    resetUpstreams();
    upstreams.c.setBehavior({ failNext: { count: 2, status: 503 } });
    const stream = await client.chat.completions.create({
      model: MODELS.c,
      messages: [{ role: 'user', content: text }],
      stream: true,
    });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe(`Echo: ${text}`);
    expect(upstreams.c.requests).toHaveLength(3);
  });

  it('retries a connection reset before the first token', async () => {
    resetUpstreams();
    upstreams.a.setBehavior({ resetConnection: true });
    const pending = client.chat.completions
      .create({ model: MODELS.a, messages: [{ role: 'user', content: prompt('reset') }] })
      .catch((e) => e);
    // Let the first attempt hit the reset, then heal the upstream.
    await new Promise((r) => setTimeout(r, 100));
    upstreams.a.setBehavior({ resetConnection: false });
    const reply = await pending;
    expect(reply.choices?.[0]?.finish_reason).toBe('stop');
    expect(upstreams.a.requests.length).toBeGreaterThanOrEqual(2);
  });

  it('ends a stream cut after it started with an SSE error event and no [DONE]', async () => {
    resetUpstreams();
    upstreams.a.setBehavior({ cutStreamAfterChunks: 2, chunkDelayMs: 20 });
    const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({
        model: MODELS.a,
        stream: true,
        messages: [{ role: 'user', content: prompt('one two three four five six') }],
      }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('data: {');
    expect(text).toContain('event: error');
    expect(text).not.toContain('[DONE]');
    const errorData = text.split('event: error\ndata: ')[1]?.split('\n')[0] ?? '';
    const envelope = JSON.parse(errorData) as {
      error: { code: string; type: string; message: string };
      request_id: string;
    };
    expect(envelope.error.code).toBe('provider_error');
    expect(envelope.request_id).toBe(res.headers.get('x-request-id'));
    // No retry once tokens reached the client.
    expect(upstreams.a.requests).toHaveLength(1);

    // The SDK turns that event into an APIError.
    resetUpstreams();
    upstreams.a.setBehavior({ cutStreamAfterChunks: 2, chunkDelayMs: 20 });
    const stream = await client.chat.completions.create({
      model: MODELS.a,
      stream: true,
      messages: [{ role: 'user', content: prompt('one two three four') }],
    });
    const err = await (async () => {
      for await (const _ of stream) {
        // drain
      }
    })().catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.code).toBe('provider_error');
  });

  it('a malformed upstream chunk becomes provider_error, never a clean finish', async () => {
    resetUpstreams();
    upstreams.b.setBehavior({ malformedChunkAt: 1 });
    const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({
        model: MODELS.b,
        stream: true,
        messages: [{ role: 'user', content: prompt('one two three') }],
      }),
    });
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    expect(text).toContain('provider_error');
  });

  it('504 provider_timeout when the upstream hangs', async () => {
    resetUpstreams();
    upstreams.c.setBehavior({ hang: true });
    const started = Date.now();
    const err = await client.chat.completions
      .create({ model: MODELS.c, messages: [{ role: 'user', content: prompt('hang') }] })
      .catch((e) => e);
    upstreams.c.setBehavior({ hang: false });
    expect(err.status).toBe(504);
    expect(err.code).toBe('provider_timeout');
    expect(Date.now() - started).toBeLessThan(6_000);
  });

  it('aborts the upstream call when the client disconnects mid-stream', async () => {
    resetUpstreams();
    upstreams.a.setBehavior({ chunkDelayMs: 150 });
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: MODELS.a, stream: true, messages: [{ role: 'user', content: words }] },
      { signal: controller.signal },
    );
    let seen = 0;
    await (async () => {
      for await (const _ of stream) {
        if (++seen === 2) controller.abort();
      }
    })().catch(() => {});
    // The worker aborts its fetch, so the upstream sees its response closed long before 40 chunks.
    await expect.poll(() => upstreams.a.closedEarly, { timeout: 5_000 }).toBe(1);
    upstreams.a.setBehavior({ chunkDelayMs: 0 });
  });

  it('a killed worker does not lose the job: another worker re-runs it', async () => {
    resetUpstreams();
    upstreams.b.setBehavior({ latencyMs: 1200 });
    const text = prompt('survive');
    const pending = client.chat.completions.create({ model: MODELS.b, messages: [{ role: 'user', content: text }] });
    await expect.poll(() => upstreams.b.requests.length, { timeout: 5_000 }).toBe(1);
    const [victim] = gateway.workers.get('provider_b') ?? [];
    await victim?.kill('SIGKILL');
    upstreams.b.setBehavior({ latencyMs: 0 });
    await gateway.addWorker('provider_b');
    const reply = await pending;
    expect(reply.choices[0]?.message.content).toBe(`Echo: ${text}`);
    expect(upstreams.b.requests.length).toBeGreaterThanOrEqual(2);
  });
});

describe('housekeeping', () => {
  it('leaves no secrets in Redis: job data and reply streams carry neither gateway nor upstream keys', async () => {
    await client.chat.completions.create({ model: MODELS.a, messages: [{ role: 'user', content: prompt('secrets') }] });
    const keys = await keysUnder(redis, prefix);
    for (const key of keys) {
      const type = await redis.type(key);
      let dump = '';
      if (type === 'string') dump = (await redis.get(key)) ?? '';
      else if (type === 'hash') dump = JSON.stringify(await redis.hgetall(key));
      else if (type === 'stream') dump = JSON.stringify(await redis.xrange(key, '-', '+'));
      else if (type === 'list') dump = JSON.stringify(await redis.lrange(key, 0, -1));
      else if (type === 'zset') dump = JSON.stringify(await redis.zrange(key, 0, -1));
      for (const secret of [KEY, 'upstream-a-secret', 'upstream-b-secret', 'upstream-c-secret']) {
        expect(dump, `${key} leaks a key`).not.toContain(secret);
      }
    }
    const output =
      gateway.api.output() +
      [...gateway.workers.values()]
        .flat()
        .map((w) => w.output())
        .join('');
    for (const secret of [KEY, 'upstream-a-secret']) expect(output).not.toContain(secret);
  });
});
