import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchLine, pollBatch, readOutput, submitBatch } from '../support/batches.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Every entry point runs the one request pipeline: where the four copies of
 * it had drifted, the same rule now holds on each of them. Real API and
 * worker processes, a loopback OpenAI-format upstream (which also serves the
 * semantic cache's embeddings), issued keys in SQLite, the official client.
 *
 * The upstream reports one prompt token per word of the prompt and one
 * completion token per word of its reply ('one two three four five': 5).
 */

const ADMIN = 'pipeline-admin-key';
const prefix = uniquePrefix('pipeline-doors');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;

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

const client = (apiKey: string) => new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey, maxRetries: 0 });

/** How many upstream chat calls carried `text`. */
const upstreamCalls = (text: string) =>
  upstream.requests.filter((r) => r.path.includes('chat/completions') && JSON.stringify(r.body).includes(text)).length;

beforeAll(async () => {
  upstream = await startFakeUpstream({
    format: 'openai',
    apiKey: 'up-a',
    behavior: { replyText: 'one two three four five' },
  });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      ADMIN_API_KEYS: ADMIN,
      PROVIDER_A_API_KEY: 'up-a',
      KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-pipeline-')), 'keys.sqlite'),
      DLP_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '1000',
      BATCH_CONCURRENCY: '1',
      BATCH_POLL_MS: '100',
      SEMANTIC_CACHE_ENABLED: 'true',
      SEMANTIC_CACHE_THRESHOLD: '0.9',
      EMBEDDING_BACKEND: 'endpoint',
      EMBEDDING_PROVIDER: 'provider_a',
      EMBEDDING_MODEL: 'text-embedding-fake',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o', 'a-mini', 'b-1'],
        },
      ],
      routing: { fallbacks: { 'a-mini': ['a-4o'] } },
      prices: { 'a-4o': { input_per_million: 1_000_000, output_per_million: 1_000_000 } },
    },
    providers: ['provider_a'],
  });
  await waitFor(
    async () => (await admin('GET', '/admin/cache/stats')).semantic_cache?.status === 'ready',
    20_000,
    'the semantic cache to be ready',
  );
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('one pipeline for every entry point', () => {
  it('a cache hit on a routed model carries X-Gateway-Model, as the miss did', async () => {
    const { key } = await admin('POST', '/admin/keys', { owner: 'routed-owner' });
    const ask = () =>
      client(key)
        .chat.completions.create({
          model: 'a-mini',
          messages: [{ role: 'user', content: 'routed model cache hit please' }],
        })
        .withResponse();
    const miss = await ask();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    expect(miss.response.headers.get('x-gateway-model')).toBe('a-mini');
    const hit = await ask();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.response.headers.get('x-gateway-model')).toBe('a-mini');
    expect(hit.data.choices[0]?.message.content).toBe('one two three four five');
    expect(upstreamCalls('routed model cache hit please')).toBe(1);
  });

  it("a batch line obeys its key's budget: the lines past it fail with budget_exceeded, and the others are charged", async () => {
    // 1 USD a token: a line is estimated at its prompt plus 20 tokens, and costs its prompt plus 5.
    const { key, id } = await admin('POST', '/admin/keys', {
      owner: 'budget-owner',
      budget: { amount_usd: 60, period: 'day' },
    });
    const lines = Array.from({ length: 10 }, (_, i) =>
      batchLine(`line-${i}`, 'a-4o', `budget line-b${i}`, { max_tokens: 20 }),
    );
    const batch = await pollBatch(client(key), (await submitBatch(client(key), lines)).id, 30_000);
    expect(batch.status).toBe('completed');
    const succeeded = await readOutput(client(key), batch.output_file_id);
    const failed = await readOutput(client(key), batch.error_file_id);
    expect(succeeded.length + failed.length).toBe(10);
    expect(succeeded.length).toBeGreaterThan(0);
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed) {
      expect(line.response?.status_code).toBe(429);
      expect(line.response?.body.error.code).toBe('budget_exceeded');
    }
    // Only the admitted lines reached the upstream, and each is in the key's usage at its real cost.
    const calls = Array.from({ length: 10 }, (_, i) => upstreamCalls(`budget line-b${i}`)).reduce((a, b) => a + b, 0);
    expect(calls).toBe(succeeded.length);
    let usage: Untyped;
    await waitFor(
      async () => (usage = await admin('GET', `/admin/keys/${id}/usage`)).total?.requests === succeeded.length,
      5_000,
      'usage rows',
    );
    const reported = succeeded.reduce((sum, line) => sum + line.response!.body.usage.total_tokens, 0);
    expect(usage.total).toMatchObject({
      requests: succeeded.length,
      completion_tokens: 5 * succeeded.length,
      cost_usd: reported,
    });
  });

  it("a batch line obeys its key's token limit", async () => {
    // 40 tokens a minute, each line estimated at over 20 and using about 8: the limit is reached within the batch.
    const { key } = await admin('POST', '/admin/keys', { owner: 'tpm-owner', tokens_per_minute: 40 });
    const lines = Array.from({ length: 8 }, (_, i) =>
      batchLine(`line-${i}`, 'a-4o', `tpm line-t${i}`, { max_tokens: 20 }),
    );
    const batch = await pollBatch(client(key), (await submitBatch(client(key), lines)).id, 30_000);
    const succeeded = await readOutput(client(key), batch.output_file_id);
    const failed = await readOutput(client(key), batch.error_file_id);
    expect(succeeded.length).toBeGreaterThan(0);
    expect(failed.length).toBeGreaterThan(0);
    expect(new Set(failed.map((l) => l.response?.body.error.code))).toEqual(new Set(['rate_limit_exceeded']));
    const calls = Array.from({ length: 8 }, (_, i) => upstreamCalls(`tpm line-t${i}`)).reduce((a, b) => a + b, 0);
    expect(calls).toBe(succeeded.length);
  });

  it("a batch line obeys its key's model allow-list as it stands when the line runs", async () => {
    const { key, id } = await admin('POST', '/admin/keys', { owner: 'models-owner', allowed_models: ['a-*'] });
    upstream.setBehavior({ replyText: 'one two three four five', latencyMs: 200 });
    try {
      const lines = Array.from({ length: 12 }, (_, i) => batchLine(`line-${i}`, 'a-4o', `allow line-m${i}`));
      const created = await submitBatch(client(key), lines);
      // Narrowed while the batch runs (one line at a time, 200 ms each): the lines that run after it are refused.
      await admin('PATCH', `/admin/keys/${id}`, { allowed_models: ['b-*'] });
      const batch = await pollBatch(client(key), created.id, 30_000);
      const failed = await readOutput(client(key), batch.error_file_id);
      expect(failed.length).toBeGreaterThanOrEqual(9);
      for (const line of failed) expect(line.response?.body.error.code).toBe('model_not_allowed');
      const calls = Array.from({ length: 12 }, (_, i) => upstreamCalls(`allow line-m${i}`)).reduce((a, b) => a + b, 0);
      expect(calls).toBe(12 - failed.length);
    } finally {
      upstream.setBehavior({ replyText: 'one two three four five' });
    }
  });

  it("a batch line obeys its key's semantic-cache switch", async () => {
    const on = await admin('POST', '/admin/keys', { owner: 'semantic-owner' });
    const off = await admin('POST', '/admin/keys', { owner: 'semantic-owner', semantic_cache: false });
    // Seeded through the chat route by the key that allows the semantic cache.
    await client(on.key).chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    });
    const run = async (key: string, text: string) => {
      const batch = await pollBatch(
        client(key),
        (await submitBatch(client(key), [batchLine('only', 'a-4o', text)])).id,
        30_000,
      );
      const [line] = await readOutput(client(key), batch.output_file_id);
      expect(line?.response?.body.choices[0].message.content).toBe('one two three four five');
    };
    await run(on.key, 'The capital of France is what?');
    expect(upstreamCalls('The capital of France is what?')).toBe(0);
    await run(off.key, 'France: its capital is what?');
    expect(upstreamCalls('France: its capital is what?')).toBe(1);
  });
});
