import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeEmbedding } from '../support/fake-embeddings.ts';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import { waitFor, type Gateway } from '../support/processes.ts';
import type { Untyped } from '../support/untyped.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * `POST /v1/embeddings` through the real API and worker processes, with the
 * official `openai` client, against the loopback OpenAI-format (`/embeddings`)
 * and Gemini-format (`embedContent`, `batchEmbedContents`) upstreams: floats
 * and base64, `dimensions`, the upstream bodies, and the clear 400s for a chat
 * model, an Anthropic-format provider and token-id input. Embeddings run the
 * one pipeline: the exact cache replays them (the semantic cache, on here,
 * never answers them), and an issued key's models, token limit, budget and
 * usage apply.
 */

const KEY = 'gw_e2e_embeddings_key_0123456789';
const ADMIN = 'gw_e2e_embeddings_admin_0123456789';
const prefix = uniquePrefix('embeddings');
const redis = testRedis();
let gateway: Gateway;
let client: OpenAI;
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;

beforeAll(async () => {
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4' },
    provider: { timeout_ms: 3000, stream_idle_timeout_ms: 2000, queue_timeout_ms: 5000, max_retries: 1 },
    perProvider: {
      a: { embedding_models: ['a-embed-small'], upstream_models: { 'a-embed-small': 'text-embedding-3-small' } },
      b: { embedding_models: ['b-embedding-001'] },
      c: { embedding_models: ['c-embed'] },
    },
    // One USD a token: a budget is spent within a few requests.
    config: { prices: { 'a-embed-small': { input_per_million: 1_000_000, output_per_million: 1_000_000 } } },
    env: {
      ADMIN_API_KEYS: ADMIN,
      KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-embeddings-')), 'keys.sqlite'),
      // The semantic cache is on (embedding through provider_a's /embeddings), so that it could answer if it were asked.
      SEMANTIC_CACHE_ENABLED: 'true',
      SEMANTIC_CACHE_THRESHOLD: '0.9',
      EMBEDDING_BACKEND: 'endpoint',
      EMBEDDING_PROVIDER: 'provider_a',
      EMBEDDING_MODEL: 'text-embedding-fake',
    },
  });
  ({ gateway, upstreams } = trio);
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
  await waitFor(
    async () => (await admin('GET', '/admin/cache/stats')).semantic_cache?.status === 'ready',
    20_000,
    'the semantic cache to be ready',
  );
}, 60_000);

async function admin(method: string, path: string, body?: unknown): Promise<Untyped> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

/** How many embeddings calls upstream A received with exactly these inputs. */
function upstreamCalls(input: readonly string[]): number {
  return upstreams.a.requests.filter(
    (r) =>
      r.path === '/v1/embeddings' && JSON.stringify((r.body as { input?: unknown }).input) === JSON.stringify(input),
  ).length;
}

afterAll(async () => {
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function close(actual: readonly number[], expected: readonly number[]): void {
  expect(actual).toHaveLength(expected.length);
  for (const [i, value] of actual.entries()) expect(value).toBeCloseTo(expected[i]!, 5);
}

describe('OpenAI-format upstream', () => {
  it('answers one string as floats, asking the upstream under its own model id', async () => {
    const result = await client.embeddings.create({
      model: 'a-embed-small',
      input: 'capital of France',
      encoding_format: 'float',
    });
    expect(result).toMatchObject({ object: 'list', model: 'a-embed-small', data: [{ object: 'embedding', index: 0 }] });
    close(result.data[0]!.embedding, fakeEmbedding('capital of France'));
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    const sent = upstreams.a.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toEqual({
      model: 'text-embedding-3-small',
      input: ['capital of France'],
      encoding_format: 'float',
    });
  });

  it('answers a list as base64 (the SDK default), decoded by the SDK, with dimensions forwarded', async () => {
    const result = await client.embeddings.create({
      model: 'a-embed-small',
      input: ['red apples', 'green pears'],
      dimensions: 32,
    });
    expect(result.data.map((d) => d.index)).toEqual([0, 1]);
    close(result.data[0]!.embedding, fakeEmbedding('red apples', 32));
    close(result.data[1]!.embedding, fakeEmbedding('green pears', 32));
    expect(upstreams.a.requests.at(-1)!.body).toMatchObject({
      input: ['red apples', 'green pears'],
      dimensions: 32,
      encoding_format: 'float',
    });
  });
});

describe('Gemini-format upstream', () => {
  it('sends one input to embedContent, floats back', async () => {
    const result = await client.embeddings.create({
      model: 'b-embedding-001',
      input: 'blue sky',
      encoding_format: 'float',
      dimensions: 16,
    });
    close(result.data[0]!.embedding, fakeEmbedding('blue sky', 16));
    const sent = upstreams.b.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/b-embedding-001:embedContent');
    expect(sent.headers['x-goog-api-key']).toBe('upstream-b-secret');
    expect(sent.body).toEqual({ content: { parts: [{ text: 'blue sky' }] }, outputDimensionality: 16 });
    // Gemini counts no embedding tokens: the gateway's estimate, one per four characters.
    expect(result.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
  });

  it('sends several inputs to batchEmbedContents, base64 back in input order', async () => {
    const result = await client.embeddings.create({
      model: 'b-embedding-001',
      input: ['one cat', 'two dogs', 'three birds'],
    });
    expect(result.data).toHaveLength(3);
    close(result.data[2]!.embedding, fakeEmbedding('three birds'));
    const sent = upstreams.b.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/b-embedding-001:batchEmbedContents');
    expect(sent.body).toEqual({
      requests: ['one cat', 'two dogs', 'three birds'].map((text) => ({
        model: 'models/b-embedding-001',
        content: { parts: [{ text }] },
      })),
    });
  });
});

describe('DLP', () => {
  it('redacts personal data in every input before Redis and the upstream see it', async () => {
    await client.embeddings.create({
      model: 'a-embed-small',
      input: ['plain text', 'write to jane.doe@example.com today'],
      encoding_format: 'float',
    });
    const sent = JSON.stringify(upstreams.a.requests.at(-1)!.body);
    expect(sent).toContain('plain text');
    expect(sent).not.toContain('jane.doe@example.com');
    expect(sent).toContain('write to');
  });
});

describe('errors', () => {
  it.each([
    [{ model: 'a-4o', input: 'x' }, /'a-4o' is a chat model/],
    [{ model: 'c-embed', input: 'x' }, /anthropic-format provider, which has no embeddings API/],
    [{ model: 'a-embed-small', input: [1, 2, 3] }, /token ids are not accepted/],
    [{ model: 'a-embed-small', input: '' }, /input/],
    [{ model: 'a-embed-small', input: 'x', encoding_format: 'int8' }, /encoding_format/],
  ])('answers %j with a clear 400', async (body, message) => {
    const before = upstreams.c.requests.length;
    const err = await client.embeddings.create(body as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(message);
    expect(upstreams.c.requests.length).toBe(before);
  });

  it('answers an unknown model with model_not_found', async () => {
    const err = await client.embeddings.create({ model: 'nope-embed', input: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, code: 'model_not_found' });
  });
});

describe('caching', () => {
  it('replays a repeated request from the exact cache: the upstream is called once, the vectors and usage are the same', async () => {
    const ask = () =>
      client.embeddings
        .create({ model: 'a-embed-small', input: ['cached words here'], encoding_format: 'float' })
        .withResponse();
    const miss = await ask();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    const hit = await ask();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.data.data).toEqual(miss.data.data);
    expect(hit.data.usage).toMatchObject({
      prompt_tokens: 3,
      total_tokens: 3,
      gateway_cache: { hit: true, type: 'exact' },
    });
    expect(upstreamCalls(['cached words here'])).toBe(1);
  });

  it('replays base64 as base64, decoded by the SDK to the same vectors', async () => {
    const first = await client.embeddings.create({ model: 'a-embed-small', input: 'base64 cached', dimensions: 8 });
    const again = await client.embeddings
      .create({ model: 'a-embed-small', input: 'base64 cached', dimensions: 8 })
      .withResponse();
    expect(again.response.headers.get('x-cache')).toBe('HIT');
    expect(again.data.data[0]!.embedding).toEqual(first.data[0]!.embedding);
    expect(upstreamCalls(['base64 cached'])).toBe(1);
  });

  it('keys on the exact input, dimensions and encoding: any difference is a miss', async () => {
    const base = { model: 'a-embed-small', input: 'keyed input', encoding_format: 'float' as const };
    await client.embeddings.create(base);
    const variants = [
      { ...base, dimensions: 16 },
      { ...base, encoding_format: 'base64' as const },
      // A space or a letter's case changes a vector; the semantic cache, on for chat, never folds them here.
      { ...base, input: 'keyed input ' },
      { ...base, input: 'Keyed Input' },
    ];
    for (const variant of variants) {
      const { response } = await client.embeddings.create(variant).withResponse();
      expect(response.headers.get('x-cache'), JSON.stringify(variant)).toBe('MISS');
    }
    expect(upstreamCalls(['keyed input'])).toBe(3);
    expect(upstreamCalls(['keyed input ']) + upstreamCalls(['Keyed Input'])).toBe(2);
  });

  it('Cache-Control: no-cache asks the upstream again', async () => {
    await client.embeddings.create({ model: 'a-embed-small', input: 'refresh me', encoding_format: 'float' });
    const { response } = await client.embeddings
      .create(
        { model: 'a-embed-small', input: 'refresh me', encoding_format: 'float' },
        { headers: { 'cache-control': 'no-cache' } },
      )
      .withResponse();
    expect(response.headers.get('x-cache')).not.toBe('HIT');
    expect(upstreamCalls(['refresh me'])).toBe(2);
  });

  it('is never answered for another key owner', async () => {
    const { key } = await admin('POST', '/admin/keys', { owner: 'other-owner' });
    const other = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    await client.embeddings.create({ model: 'a-embed-small', input: 'owner scoped', encoding_format: 'float' });
    const { response } = await other.embeddings
      .create({ model: 'a-embed-small', input: 'owner scoped', encoding_format: 'float' })
      .withResponse();
    expect(response.headers.get('x-cache')).toBe('MISS');
    expect(upstreamCalls(['owner scoped'])).toBe(2);
  });
});

describe('issued keys', () => {
  const keyed = (key: string) => new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });

  it("refuses a model outside the key's allowed models, before the upstream", async () => {
    const { key } = await admin('POST', '/admin/keys', { owner: 'chat-only', allowed_models: ['a-4o'] });
    const err = await keyed(key)
      .embeddings.create({ model: 'a-embed-small', input: 'not allowed here' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403, code: 'model_not_allowed' });
    expect(upstreamCalls(['not allowed here'])).toBe(0);
  });

  it("refuses once the key's token limit is used up, before the upstream", async () => {
    const { key } = await admin('POST', '/admin/keys', { owner: 'tpm-owner', tokens_per_minute: 10 });
    // Twelve words: the upstream counts 12 tokens, past the limit of 10 a minute.
    const first = 'one two three four five six seven eight nine ten eleven twelve';
    await keyed(key).embeddings.create({ model: 'a-embed-small', input: first, encoding_format: 'float' });
    const err = await keyed(key)
      .embeddings.create({ model: 'a-embed-small', input: 'one more' })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    expect(upstreamCalls(['one more'])).toBe(0);
  });

  it("charges the key's usage and budget what the upstream counted, and refuses once the budget is spent", async () => {
    // One USD a token: a 4-word input costs 4 USD; the third request starts under the budget (8 < 10) and ends past it.
    const { key, id } = await admin('POST', '/admin/keys', {
      owner: 'budget-owner',
      budget: { amount_usd: 10, period: 'day' },
    });
    const ask = (i: number) =>
      keyed(key).embeddings.create({
        model: 'a-embed-small',
        input: `budget words number ${i}`,
        encoding_format: 'float',
      });
    for (const i of [1, 2, 3]) await ask(i);
    let usage: Untyped;
    await waitFor(
      async () => (usage = await admin('GET', `/admin/keys/${id}/usage`)).total?.requests === 3,
      5_000,
      'usage rows',
    );
    expect(usage.total).toMatchObject({ requests: 3, prompt_tokens: 12, completion_tokens: 0, cost_usd: 12 });
    const err = await ask(4).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'budget_exceeded' });
    expect(upstreamCalls(['budget words number 4'])).toBe(0);
  });
});
