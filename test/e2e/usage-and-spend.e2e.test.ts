import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-key.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startUsageUpstream, type UsageUpstream } from '../support/usage-upstream.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Usage and spend against loopback upstreams of the three wire formats that
 * report prompt caching and reasoning (test/support/usage-upstream.ts: 1000
 * prompt tokens of which 800 read from the prompt cache, Anthropic also 60 +
 * 40 written for 5 minutes and 1 hour; 300 completion tokens of which 200
 * reasoning for OpenAI and Gemini), through real API and worker processes,
 * the official OpenAI client and issued keys.
 *
 * Prices (USD per million tokens) and the resulting cost of one call:
 * - a-reason (OpenAI): input 1000, cached 100, output 1000 (reasoning at the
 *   output price): 200×1000 + 800×100 + 300×1000 = 0.58 USD.
 * - c-cache (Anthropic): input 1000, cached 100, write 1250 (5 min) and 2000
 *   (1 h), output 1000: 100×1000 + 800×100 + 60×1250 + 40×2000 + 300×1000 = 0.635 USD.
 * - b-think (Gemini): input 1000, cached 250, output 1000, reasoning 2000:
 *   200×1000 + 800×250 + 100×1000 + 200×2000 = 0.9 USD.
 * Without the prompt cache the same tokens would cost 1.3, 1.3 and 1.5 USD:
 * the prompt cache saved 0.72, 0.665 and 0.6 USD a call.
 */

const ADMIN = 'usage-admin-key';
const prefix = uniquePrefix('usage-and-spend');
const redis = testRedis();
const upstreams: Partial<Record<'openai' | 'anthropic' | 'gemini', UsageUpstream>> = {};
let gateway: Gateway;

const COST = { 'a-reason': 0.58, 'c-cache': 0.635, 'b-think': 0.9 } as const;
const SAVED = { 'a-reason': 0.72, 'c-cache': 0.665, 'b-think': 0.6 } as const;
const USAGE = {
  'a-reason': {
    prompt_tokens: 1000,
    completion_tokens: 300,
    total_tokens: 1300,
    prompt_tokens_details: { cached_tokens: 800 },
    completion_tokens_details: { reasoning_tokens: 200 },
  },
  'c-cache': {
    prompt_tokens: 1000,
    completion_tokens: 300,
    total_tokens: 1300,
    prompt_tokens_details: { cached_tokens: 800, cache_write_tokens: 100, cache_write_1h_tokens: 40 },
  },
  'b-think': {
    prompt_tokens: 1000,
    completion_tokens: 300,
    total_tokens: 1300,
    prompt_tokens_details: { cached_tokens: 800 },
    completion_tokens_details: { reasoning_tokens: 200 },
  },
} as const;
type Model = keyof typeof COST;

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: Untyped }> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

async function createKey(policy: Record<string, unknown> = {}): Promise<{ key: string; id: string }> {
  const created = await admin('POST', '/admin/keys', { owner: 'usage-e2e', ...policy });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

const client = (apiKey: string) => new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey, maxRetries: 0 });

let seq = 0;
const prompt = () => `usage question ${seq++} ${Date.now()}`;

/** One completion, sync or streamed with include_usage; resolves with the usage the client saw. */
async function usageOf(
  apiKey: string,
  model: string,
  stream: boolean,
  content = prompt(),
): Promise<Record<string, unknown>> {
  if (!stream) {
    const reply = await client(apiKey).chat.completions.create({
      model,
      messages: [{ role: 'user', content }],
      max_tokens: 50,
    });
    expect(reply.choices[0]?.message.content).toBe('cached answer');
    return reply.usage as unknown as Record<string, unknown>;
  }
  const chunks = await client(apiKey).chat.completions.create({
    model,
    messages: [{ role: 'user', content }],
    max_tokens: 50,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: unknown;
  for await (const chunk of chunks) {
    text += chunk.choices[0]?.delta.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  expect(text).toBe('cached answer');
  return usage as Record<string, unknown>;
}

/** Waits until no admitted call of `key` is still unsettled in Redis. */
async function settled(key: string): Promise<void> {
  const hash = hashApiKey(key);
  await waitFor(
    async () => {
      const reservations = await redis.keys(`${prefix}:vk:res:{${hash}}:*`);
      return reservations.length === 0 || (await redis.zcard(reservations[0]!)) === 0;
    },
    5_000,
    'calls to settle',
  );
}

/** The key's usage report once it shows `requests` requests (usage reaches the key store in batches). */
async function report(id: string, requests: number): Promise<Untyped> {
  let body: Untyped;
  await waitFor(
    async () => {
      body = (await admin('GET', `/admin/keys/${id}/usage`)).body;
      return body.total?.requests === requests;
    },
    10_000,
    `${requests} requests in the usage report`,
  );
  return body;
}

async function spendSaved(): Promise<Untyped> {
  const res = await admin('GET', '/stats');
  expect(res.status).toBe(200);
  return res.body.spend_saved;
}

async function metricValue(labels: string): Promise<number> {
  const text = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': ADMIN } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`gateway_tokens_used_total{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

beforeAll(async () => {
  upstreams.openai = await startUsageUpstream('openai');
  upstreams.anthropic = await startUsageUpstream('anthropic');
  upstreams.gemini = await startUsageUpstream('gemini');
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      ADMIN_API_KEYS: ADMIN,
      PROVIDER_A_API_KEY: 'up-a',
      PROVIDER_B_API_KEY: 'up-b',
      PROVIDER_C_API_KEY: 'up-c',
      RATE_LIMIT_REQUESTS: '1000',
      CACHE_ENABLED: 'true',
      SEMANTIC_CACHE_ENABLED: 'false',
      DLP_ENABLED: 'false',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          models: ['a-reason', 'a-reason-nocache'],
          base_url: upstreams.openai.url,
        },
        { name: 'provider_b', api_key_env: 'PROVIDER_B_API_KEY', models: ['b-think'], base_url: upstreams.gemini.url },
        {
          name: 'provider_c',
          api_key_env: 'PROVIDER_C_API_KEY',
          models: ['c-cache'],
          base_url: upstreams.anthropic.url,
        },
      ],
      prices: {
        'a-reason': { input_per_million: 1000, cached_input_per_million: 100, output_per_million: 1000 },
        'a-reason-nocache': { input_per_million: 1000, cached_input_per_million: 100, output_per_million: 1000 },
        'c-cache': {
          input_per_million: 1000,
          cached_input_per_million: 100,
          cache_write_per_million: 1250,
          cache_write_1h_per_million: 2000,
          output_per_million: 1000,
        },
        'b-think': {
          input_per_million: 1000,
          cached_input_per_million: 250,
          output_per_million: 1000,
          reasoning_per_million: 2000,
        },
      },
    },
    providers: ['provider_a', 'provider_b', 'provider_c'],
  });
});

afterAll(async () => {
  await gateway?.stop();
  await Promise.all(Object.values(upstreams).map((u) => u.close()));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('usage and spend by token type', () => {
  it('reports cached, cache-write and reasoning tokens from each format, sync and streamed; spend, metrics and saved spend agree with them', async () => {
    const { key, id } = await createKey();
    const before = await spendSaved();
    const models = Object.keys(COST) as Model[];
    for (const model of models) {
      for (const stream of [false, true]) {
        expect(await usageOf(key, model, stream), `${model} stream=${stream}`).toEqual(USAGE[model]);
      }
    }

    const usage = await report(id, 6);
    for (const model of models) {
      const row = usage.by_model[model];
      expect(row.requests).toBe(2);
      expect(row.prompt_tokens).toBe(2000);
      expect(row.cached_tokens).toBe(1600);
      expect(row.cache_write_tokens).toBe(model === 'c-cache' ? 200 : 0);
      expect(row.reasoning_tokens).toBe(model === 'c-cache' ? 0 : 400);
      expect(row.cost_usd).toBeCloseTo(2 * COST[model], 9);
    }
    expect(usage.total.cost_usd).toBeCloseTo(2 * (0.58 + 0.635 + 0.9), 9);

    const after = await spendSaved();
    expect(after.prompt_cache_usd - before.prompt_cache_usd).toBeCloseTo(2 * (0.72 + 0.665 + 0.6), 9);
    expect(after.prompt_cache_read_tokens - before.prompt_cache_read_tokens).toBe(6 * 800);
    expect(after.prompt_cache_write_tokens - before.prompt_cache_write_tokens).toBe(2 * 100);
    expect(SAVED['c-cache']).toBeCloseTo(1.3 - COST['c-cache'], 9);

    expect(await metricValue('provider="provider_a",model="a-reason",type="cached_input"')).toBe(1600);
    expect(await metricValue('provider="provider_a",model="a-reason",type="reasoning"')).toBe(400);
    expect(await metricValue('provider="provider_c",model="c-cache",type="cache_write"')).toBe(200);
    expect(await metricValue('provider="provider_b",model="b-think",type="reasoning"')).toBe(400);
    expect(await metricValue('provider="provider_b",model="b-think",type="prompt"')).toBe(2000);
  });

  it('reports the same tokens in the Messages and Responses doors, in their own fields, sync and streamed, and charges the key the same', async () => {
    const { key, id } = await createKey();
    const post = (path: string, body: unknown) =>
      fetch(`${gateway.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
      });
    /** The data of every SSE event of a stream, parsed. */
    const events = async (res: Response): Promise<Untyped[]> =>
      (await res.text())
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)));

    // Anthropic's usage: input_tokens leaves out the cache reads and writes; the writes split by retention.
    const anthropic = {
      input_tokens: 100,
      output_tokens: 300,
      cache_read_input_tokens: 800,
      cache_creation_input_tokens: 100,
      cache_creation: { ephemeral_5m_input_tokens: 60, ephemeral_1h_input_tokens: 40 },
    };
    const message: Untyped = await (
      await post('/v1/messages', { model: 'c-cache', max_tokens: 50, messages: [{ role: 'user', content: prompt() }] })
    ).json();
    expect(message.content).toEqual([{ type: 'text', text: 'cached answer' }]);
    expect(message.usage).toEqual(anthropic);
    const streamed = await events(
      await post('/v1/messages', {
        model: 'c-cache',
        max_tokens: 50,
        stream: true,
        messages: [{ role: 'user', content: prompt() }],
      }),
    );
    expect(streamed.find((e) => e.type === 'message_delta').usage).toEqual(anthropic);

    // OpenAI's Responses usage: input_tokens counts the cached ones, as chat completions do.
    const responses = {
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 800 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 200 },
      total_tokens: 1300,
    };
    const response: Untyped = await (
      await post('/v1/responses', { model: 'a-reason', input: prompt(), max_output_tokens: 50 })
    ).json();
    expect(response.output_text).toBe('cached answer');
    expect(response.usage).toEqual(responses);
    const completed = (
      await events(
        await post('/v1/responses', { model: 'a-reason', input: prompt(), max_output_tokens: 50, stream: true }),
      )
    ).find((e) => e.type === 'response.completed');
    expect(completed.response.usage).toEqual(responses);

    // A repeat is the gateway cache's: marked in each door's usage, and not charged.
    const repeat = {
      model: 'c-cache',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'the Messages door, asked twice' }],
    };
    expect((await post('/v1/messages', repeat)).headers.get('x-cache')).toBe('MISS');
    const hit = await post('/v1/messages', repeat);
    expect(hit.headers.get('x-cache')).toBe('HIT');
    expect(((await hit.json()) as Untyped).usage).toEqual({
      ...anthropic,
      gateway_cache: { hit: true, type: 'exact' },
    });
    const again = { model: 'a-reason', input: 'the Responses door, asked twice', max_output_tokens: 50, store: false };
    await post('/v1/responses', again);
    const responseHit = await post('/v1/responses', again);
    expect(responseHit.headers.get('x-cache')).toBe('HIT');
    expect(((await responseHit.json()) as Untyped).usage).toEqual({
      ...responses,
      gateway_cache: { hit: true, type: 'exact' },
    });

    // Charged by token type as on the chat door, the hits for nothing.
    const usage = await report(id, 6);
    expect(usage.by_model['c-cache'].cost_usd).toBeCloseTo(3 * COST['c-cache'], 9);
    expect(usage.by_model['a-reason'].cost_usd).toBeCloseTo(3 * COST['a-reason'], 9);
    expect(usage.by_model['c-cache'].cache_write_tokens).toBe(300);
    expect(usage.by_model['a-reason'].reasoning_tokens).toBe(600);
  });

  it("marks a reply from the gateway's cache in its usage, charges nothing for it and counts it as saved spend", async () => {
    const { key, id } = await createKey();
    const content = prompt();
    expect(await usageOf(key, 'a-reason', false, content)).toEqual(USAGE['a-reason']);
    const before = await spendSaved();
    const hit = await client(key)
      .chat.completions.create({ model: 'a-reason', messages: [{ role: 'user', content }], max_tokens: 50 })
      .withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.data.usage).toEqual({ ...USAGE['a-reason'], gateway_cache: { hit: true, type: 'exact' } });
    // The same stored reply replayed as a stream: the usage chunk carries the mark too.
    expect(await usageOf(key, 'a-reason', true, content)).toEqual({
      ...USAGE['a-reason'],
      gateway_cache: { hit: true, type: 'exact' },
    });

    await waitFor(
      async () => (await spendSaved()).gateway_cache_tokens - before.gateway_cache_tokens === 2 * 1300,
      5_000,
      'saved spend of the two hits',
    );
    const after = await spendSaved();
    expect(after.gateway_cache_usd - before.gateway_cache_usd).toBeCloseTo(2 * COST['a-reason'], 9);
    // The hits saved the whole call, so they add nothing to what the prompt cache saved.
    expect(after.prompt_cache_usd).toBeCloseTo(before.prompt_cache_usd, 9);
    // Only the first call reached the upstream and was charged.
    const usage = await report(id, 1);
    expect(usage.total.cost_usd).toBeCloseTo(COST['a-reason'], 9);
  });

  it('a budget lasts as much longer as cached tokens are cheaper: 4 calls without prompt caching, 9 with it', async () => {
    // 5 USD a day; a call costs 1.3 USD without the prompt cache and 0.58 USD with it.
    // A call is admitted while the day's spend is below the budget: 0, 1.3, 2.6, 3.9 (5.2 refused)
    // against 0, 0.58, ..., 4.64 (5.22 refused).
    const admitted: Record<string, number> = {};
    for (const model of ['a-reason-nocache', 'a-reason']) {
      const { key, id } = await createKey({ budget: { amount_usd: 5, period: 'day' } });
      let count = 0;
      for (;;) {
        try {
          await client(key).chat.completions.create({
            model,
            messages: [{ role: 'user', content: prompt() }],
            max_tokens: 50,
          });
          count++;
        } catch (err) {
          expect(err).toBeInstanceOf(OpenAI.APIError);
          expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
          expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('budget_exceeded');
          break;
        }
        await settled(key);
        expect(count).toBeLessThan(20);
      }
      admitted[model] = count;
      const usage = await report(id, count);
      expect(usage.total.cost_usd).toBeCloseTo(count * (model === 'a-reason' ? 0.58 : 1.3), 9);
    }
    expect(admitted).toEqual({ 'a-reason-nocache': 4, 'a-reason': 9 });
  });

  it('puts cache_control where Anthropic expects it, prompt_cache_key and prompt_cache_retention where OpenAI does, and drops and names them where they mean nothing', async () => {
    const { key } = await createKey();
    const post = (body: Record<string, unknown>) =>
      fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const unique = prompt();
    const messages = [
      {
        role: 'system',
        content: [
          { type: 'text', text: `You answer briefly. ${unique}` },
          { type: 'text', text: 'A long, stable instruction block.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A long document to cache.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'The question about it.' },
        ],
      },
    ];
    const cacheFields = {
      prompt_cache_key: 'tenant-7',
      prompt_cache_retention: '24h',
      cache_control: { type: 'ephemeral' },
    };

    // Another format's controls are dropped, never refused, and named like every dropped parameter.
    const dropped = (res: Response) => (res.headers.get('x-gateway-dropped-params') ?? '').split(', ').sort();
    const anthropic = upstreams.anthropic!;
    const toC = await post({ model: 'c-cache', messages, ...cacheFields, max_tokens: 50 });
    expect(toC.status).toBe(200);
    expect(dropped(toC)).toEqual(['prompt_cache_key', 'prompt_cache_retention']);
    const sent = anthropic.bodies.at(-1)!;
    expect(sent.system).toEqual([
      { type: 'text', text: `You answer briefly. ${unique}` },
      { type: 'text', text: 'A long, stable instruction block.', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A long document to cache.', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'The question about it.' },
        ],
      },
    ]);
    expect(sent.cache_control).toEqual({ type: 'ephemeral' });
    expect(Object.keys(sent)).not.toContain('prompt_cache_key');

    const openai = upstreams.openai!;
    const toA = await post({ model: 'a-reason', messages, ...cacheFields, max_tokens: 50 });
    expect(toA.status).toBe(200);
    expect(dropped(toA)).toEqual(['cache_control']);
    const toOpenAi = openai.bodies.at(-1)!;
    expect(toOpenAi.prompt_cache_key).toBe('tenant-7');
    expect(toOpenAi.prompt_cache_retention).toBe('24h');
    expect(JSON.stringify(toOpenAi)).not.toContain('cache_control');
    expect((toOpenAi.messages as Untyped[])[0].content).toEqual([
      { type: 'text', text: `You answer briefly. ${unique}` },
      { type: 'text', text: 'A long, stable instruction block.' },
    ]);

    const gemini = upstreams.gemini!;
    const toB = await post({ model: 'b-think', messages, ...cacheFields, max_tokens: 50 });
    expect(toB.status).toBe(200);
    expect(dropped(toB)).toEqual(['cache_control', 'prompt_cache_key', 'prompt_cache_retention']);
    const toGemini = JSON.stringify(gemini.bodies.at(-1));
    expect(toGemini).not.toContain('cache_control');
    expect(toGemini).not.toContain('prompt_cache');
    expect(toGemini).toContain('A long, stable instruction block.');

    // Bad values are the client's 400, in the error envelope, before any upstream call.
    const calls = anthropic.bodies.length;
    const five = Array.from({ length: 5 }, (_, i) => ({
      type: 'text',
      text: `part ${i}`,
      cache_control: { type: 'ephemeral' },
    }));
    const tooMany = await post({ model: 'c-cache', messages: [{ role: 'user', content: five }], max_tokens: 50 });
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as Untyped).error.message).toContain('at most 4 prompt-cache breakpoints');
    for (const bad of [
      { cache_control: { type: 'ephemeral', ttl: '2h' } },
      { prompt_cache_retention: 'forever' },
      { cache_control: { type: 'persistent' } },
    ]) {
      const res = await post({ model: 'c-cache', messages: [{ role: 'user', content: 'hi' }], ...bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(((await res.json()) as Untyped).error.code).toBe('invalid_request');
    }
    expect(anthropic.bodies.length).toBe(calls);
  });
});
