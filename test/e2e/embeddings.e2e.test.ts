import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeEmbedding } from '../support/fake-embeddings.ts';
import { startUpstreamTrio, type FakeUpstream, type ProviderLetter } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * `POST /v1/embeddings` through the real API and worker processes, with the
 * official `openai` client, against the loopback OpenAI-format (`/embeddings`)
 * and Gemini-format (`embedContent`, `batchEmbedContents`) upstreams: floats
 * and base64, `dimensions`, the upstream bodies, and the clear 400s for a chat
 * model, an Anthropic-format provider and token-id input.
 */

const KEY = 'gw_e2e_embeddings_key_0123456789';
const prefix = uniquePrefix('embeddings');
const redis = testRedis();
let gateway: Gateway;
let client: OpenAI;
let upstreams: Record<ProviderLetter, FakeUpstream>;

beforeAll(async () => {
  const trio = await startUpstreamTrio();
  upstreams = trio.upstreams;
  const fast = { timeout_ms: 3000, stream_idle_timeout_ms: 2000, queue_timeout_ms: 5000, max_retries: 1 };
  gateway = await startGateway({
    env: { REDIS_KEY_PREFIX: prefix, API_KEYS: KEY, ...trio.env, SEMANTIC_CACHE_ENABLED: 'false', RATE_LIMIT_REQUESTS: '100000' },
    config: {
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstreams.a.url, models: ['a-4o'], embedding_models: ['a-embed-small'], upstream_models: { 'a-embed-small': 'text-embedding-3-small' }, ...fast },
        { name: 'provider_b', api_key_env: 'PROVIDER_B_API_KEY', base_url: upstreams.b.url, models: ['b-2.5-flash'], embedding_models: ['b-embedding-001'], ...fast },
        { name: 'provider_c', api_key_env: 'PROVIDER_C_API_KEY', base_url: upstreams.c.url, models: ['c-sonnet-4'], embedding_models: ['c-embed'], ...fast },
      ],
    },
    providers: ['provider_a', 'provider_b', 'provider_c'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all(Object.values(upstreams ?? {}).map((u) => u.close()));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function close(actual: readonly number[], expected: readonly number[]): void {
  expect(actual).toHaveLength(expected.length);
  for (const [i, value] of actual.entries()) expect(value).toBeCloseTo(expected[i]!, 5);
}

describe('OpenAI-format upstream', () => {
  it('answers one string as floats, asking the upstream under its own model id', async () => {
    const result = await client.embeddings.create({ model: 'a-embed-small', input: 'capital of France', encoding_format: 'float' });
    expect(result).toMatchObject({ object: 'list', model: 'a-embed-small', data: [{ object: 'embedding', index: 0 }] });
    close(result.data[0]!.embedding, fakeEmbedding('capital of France'));
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    const sent = upstreams.a.requests.at(-1)!;
    expect(sent.path).toBe('/v1/embeddings');
    expect(sent.body).toEqual({ model: 'text-embedding-3-small', input: ['capital of France'], encoding_format: 'float' });
  });

  it('answers a list as base64 (the SDK default), decoded by the SDK, with dimensions forwarded', async () => {
    const result = await client.embeddings.create({ model: 'a-embed-small', input: ['red apples', 'green pears'], dimensions: 32 });
    expect(result.data.map((d) => d.index)).toEqual([0, 1]);
    close(result.data[0]!.embedding, fakeEmbedding('red apples', 32));
    close(result.data[1]!.embedding, fakeEmbedding('green pears', 32));
    expect(upstreams.a.requests.at(-1)!.body).toMatchObject({ input: ['red apples', 'green pears'], dimensions: 32, encoding_format: 'float' });
  });
});

describe('Gemini-format upstream', () => {
  it('sends one input to embedContent, floats back', async () => {
    const result = await client.embeddings.create({ model: 'b-embedding-001', input: 'blue sky', encoding_format: 'float', dimensions: 16 });
    close(result.data[0]!.embedding, fakeEmbedding('blue sky', 16));
    const sent = upstreams.b.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/b-embedding-001:embedContent');
    expect(sent.headers['x-goog-api-key']).toBe('upstream-b-secret');
    expect(sent.body).toEqual({ content: { parts: [{ text: 'blue sky' }] }, outputDimensionality: 16 });
    // Gemini counts no embedding tokens: the gateway's estimate, one per four characters.
    expect(result.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
  });

  it('sends several inputs to batchEmbedContents, base64 back in input order', async () => {
    const result = await client.embeddings.create({ model: 'b-embedding-001', input: ['one cat', 'two dogs', 'three birds'] });
    expect(result.data).toHaveLength(3);
    close(result.data[2]!.embedding, fakeEmbedding('three birds'));
    const sent = upstreams.b.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/b-embedding-001:batchEmbedContents');
    expect(sent.body).toEqual({
      requests: ['one cat', 'two dogs', 'three birds'].map((text) => ({ model: 'models/b-embedding-001', content: { parts: [{ text }] } })),
    });
  });
});

describe('DLP', () => {
  it('redacts personal data in every input before Redis and the upstream see it', async () => {
    await client.embeddings.create({ model: 'a-embed-small', input: ['plain text', 'write to jane.doe@example.com today'], encoding_format: 'float' });
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
