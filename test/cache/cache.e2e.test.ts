import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Exact and semantic caches through a running gateway (real API and worker
 * processes, real Redis, the official openai client). Embeddings come from the
 * fake OpenAI upstream's /v1/embeddings (deterministic bag-of-words vectors
 * that ignore digits, quotes and negations, so only the guards separate
 * prompts differing by them).
 */

const KEY = 'gw_cache_e2e_key_one_0123456789';
const OTHER_KEY = 'gw_cache_e2e_key_two_0123456789';
const ADMIN_KEY = 'gw_cache_e2e_admin_0123456789';
const prefix = uniquePrefix('cache-e2e');
const redis = testRedis();
let gateway: Gateway;
let upstream: FakeUpstream;
let client: OpenAI;
let other: OpenAI;

const chatCalls = () => upstream.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

async function ask(
  content: string,
  options: { client?: OpenAI; headers?: Record<string, string>; system?: string; extra?: Record<string, unknown> } = {},
) {
  const messages: OpenAI.ChatCompletionMessageParam[] = options.system
    ? [{ role: 'system', content: options.system }]
    : [];
  messages.push({ role: 'user', content });
  const { data, response } = await (options.client ?? client).chat.completions
    .create({ model: 'a-4o', messages, ...options.extra }, { headers: options.headers })
    .withResponse();
  return { data, headers: response.headers, xCache: response.headers.get('x-cache') };
}

async function askStreamed(content: string, extra: Record<string, unknown> = {}) {
  const { data: stream, response } = await client.chat.completions
    .create({ model: 'a-4o', messages: [{ role: 'user', content }], stream: true, ...extra })
    .withResponse();
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  return { chunks, text, headers: response.headers, xCache: response.headers.get('x-cache') };
}

async function admin(
  path: string,
  init: RequestInit = {},
  key = ADMIN_KEY,
): Promise<{ status: number; body: Untyped }> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', 'x-api-key': key },
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a-secret' });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: `${KEY},${OTHER_KEY}`,
      ADMIN_API_KEYS: ADMIN_KEY,
      PROVIDER_A_API_KEY: 'up-a-secret',
      DLP_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      CACHE_TTL: '120',
      SEMANTIC_CACHE_ENABLED: 'true',
      SEMANTIC_CACHE_THRESHOLD: '0.9',
      EMBEDDING_BACKEND: 'endpoint',
      EMBEDDING_PROVIDER: 'provider_a',
      EMBEDDING_MODEL: 'text-embedding-fake',
    },
    config: {
      providers: [
        // One model of it with the semantic cache off.
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o', 'a-4o-exact'],
          semantic_cache_by_model: { 'a-4o-exact': false },
          timeout_ms: 3000,
          stream_idle_timeout_ms: 2000,
          queue_timeout_ms: 5000,
          max_retries: 0,
        },
        // The same upstream with the semantic cache switched off for its models, but one model switched back on.
        {
          name: 'provider_exact',
          format: 'openai',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-exact-only', 'a-semantic-again'],
          semantic_cache: false,
          semantic_cache_by_model: { 'a-semantic-again': true },
          max_retries: 0,
        },
      ],
    },
    providers: ['provider_a', 'provider_exact'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
  other = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: OTHER_KEY, maxRetries: 0, timeout: 20_000 });
  await waitFor(
    async () => (await admin('/admin/cache/stats')).body.semantic_cache?.status === 'ready',
    10_000,
    'the semantic cache to be ready',
  );
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('exact cache', () => {
  it('answers a repeated request from cache with X-Cache, Age and the same body, without calling upstream', async () => {
    const before = chatCalls();
    const first = await ask('Exact: name three primary colours.');
    expect(first.xCache).toBe('MISS');
    expect(first.headers.get('age')).toBeNull();
    const second = await ask('Exact: name three primary colours.');
    expect(second.xCache).toBe('HIT');
    expect(Number(second.headers.get('age'))).toBeGreaterThanOrEqual(0);
    expect(second.headers.get('server-timing')).toContain('cache;desc="HIT"');
    // The same body, its usage marked as the gateway cache's (served without an upstream call).
    const { usage, ...rest } = second.data;
    const { usage: firstUsage, ...firstRest } = first.data;
    expect(rest).toEqual(firstRest);
    expect(usage).toEqual({ ...firstUsage, gateway_cache: { hit: true, type: 'exact' } });
    expect(chatCalls()).toBe(before + 1);
  });

  it('caches a prompt whose words name properties of every JavaScript object (constructor, toString, __proto__)', async () => {
    const prompt = 'What do constructor, toString and __proto__ do in JavaScript?';
    expect((await ask(prompt)).xCache).toBe('MISS');
    expect((await ask(prompt)).xCache).toBe('HIT');
  });

  it('serves a stored reply to a streaming request as SSE, and stores a streamed reply for JSON requests', async () => {
    const before = chatCalls();
    const stored = await ask('Exact: spell the word cat.');
    const replay = await askStreamed('Exact: spell the word cat.', { stream_options: { include_usage: true } });
    expect(replay.xCache).toBe('HIT');
    expect(replay.headers.get('content-type')).toContain('text/event-stream');
    expect(replay.text).toBe(stored.data.choices[0]?.message.content);
    expect(replay.chunks.at(-1)?.usage).toEqual({ ...stored.data.usage, gateway_cache: { hit: true, type: 'exact' } });

    const streamed = await askStreamed('Exact: spell the word dog.');
    expect(streamed.xCache).toBe('MISS');
    const json = await ask('Exact: spell the word dog.');
    expect(json.xCache).toBe('HIT');
    expect(json.data.choices[0]?.message.content).toBe(streamed.text);
    expect(json.data.choices[0]?.finish_reason).toBe('stop');
    expect(chatCalls()).toBe(before + 2);
  });

  it('partitions entries per key owner', async () => {
    await ask('Exact: owner partition probe.');
    const before = chatCalls();
    const fromOther = await ask('Exact: owner partition probe.', { client: other });
    expect(fromOther.xCache).toBe('MISS');
    expect(chatCalls()).toBe(before + 1);
    expect((await ask('Exact: owner partition probe.', { client: other })).xCache).toBe('HIT');
  });

  it('keys on generation parameters', async () => {
    await ask('Exact: parameter probe.', { extra: { temperature: 0 } });
    expect((await ask('Exact: parameter probe.', { extra: { temperature: 0 } })).xCache).toBe('HIT');
    expect((await ask('Exact: parameter probe.', { extra: { temperature: 0.5 } })).xCache).toBe('MISS');
    expect((await ask('Exact: parameter probe.', { extra: { temperature: 0, max_tokens: 50 } })).xCache).toBe('MISS');
  });

  it('never stores a failed reply or a cut stream', async () => {
    // Two failures: the semantic lookup's embedding call (a miss, not an error), then the chat call.
    upstream.setBehavior({ failNext: { count: 2, status: 500 } });
    await expect(ask('Exact: failure probe.')).rejects.toMatchObject({ status: 502 });
    const before = chatCalls();
    expect((await ask('Exact: failure probe.')).xCache).toBe('MISS');
    expect(chatCalls()).toBe(before + 1);

    upstream.setBehavior({ cutStreamAfterChunks: 2 });
    try {
      await expect(askStreamed('Exact: cut stream probe.')).rejects.toThrow();
    } finally {
      upstream.setBehavior({ cutStreamAfterChunks: undefined });
    }
    const after = await ask('Exact: cut stream probe.');
    expect(after.xCache).toBe('MISS');
    expect(after.data.choices[0]?.message.content).toBe('Echo: Exact: cut stream probe.');
  });

  it('Cache-Control: no-store bypasses the cache both ways; no-cache refreshes the entry', async () => {
    const before = chatCalls();
    const bypass = await ask('Exact: control probe.', { headers: { 'Cache-Control': 'no-store' } });
    expect(bypass.xCache).toBe('BYPASS');
    expect((await ask('Exact: control probe.')).xCache).toBe('MISS');
    expect((await ask('Exact: control probe.', { headers: { 'Cache-Control': 'no-store' } })).xCache).toBe('BYPASS');
    expect(chatCalls()).toBe(before + 3);

    upstream.setBehavior({ replyText: 'A fresher answer.' });
    try {
      const refreshed = await ask('Exact: control probe.', { headers: { 'Cache-Control': 'no-cache' } });
      expect(refreshed.xCache).toBe('MISS');
      expect(refreshed.data.choices[0]?.message.content).toBe('A fresher answer.');
    } finally {
      upstream.setBehavior({ replyText: undefined });
    }
    const hit = await ask('Exact: control probe.');
    expect(hit.xCache).toBe('HIT');
    expect(hit.data.choices[0]?.message.content).toBe('A fresher answer.');
    expect(chatCalls()).toBe(before + 4);
  });

  it('coalesces identical concurrent misses into one upstream call', async () => {
    upstream.setBehavior({ latencyMs: 400 });
    try {
      const before = chatCalls();
      const replies = await Promise.all(Array.from({ length: 6 }, () => ask('Exact: coalesce probe.')));
      expect(chatCalls()).toBe(before + 1);
      expect(new Set(replies.map((r) => r.data.id)).size).toBe(1);
      expect(replies.every((r) => r.xCache === 'MISS')).toBe(true);

      const streams = await Promise.all(Array.from({ length: 4 }, () => askStreamed('Exact: coalesced stream probe.')));
      expect(chatCalls()).toBe(before + 2);
      expect(streams.map((s) => s.text)).toEqual(Array(4).fill('Echo: Exact: coalesced stream probe.'));
    } finally {
      upstream.setBehavior({ latencyMs: 0 });
    }
  });
});

describe('semantic cache', () => {
  it('answers a paraphrase with SEMANTIC_HIT and X-Cache-Similarity; unrelated and near-miss prompts miss', async () => {
    const first = await ask('What is the capital of France?');
    expect(first.xCache).toBe('MISS');
    const before = chatCalls();
    const paraphrase = await ask('The capital of France is what?');
    expect(paraphrase.xCache).toBe('SEMANTIC_HIT');
    expect(Number(paraphrase.headers.get('x-cache-similarity'))).toBeGreaterThanOrEqual(0.9);
    expect(paraphrase.headers.get('age')).not.toBeNull();
    expect(paraphrase.data.choices[0]?.message.content).toBe('Echo: What is the capital of France?');
    expect(chatCalls()).toBe(before);

    expect((await ask('How do I bake sourdough bread?')).xCache).toBe('MISS');
    expect((await ask('What is the capital of Germany?')).xCache).toBe('MISS');
    // The same words in another direction: as similar as can be, and verified not to ask the same thing.
    await ask('Convert USD to EUR');
    const swapped = await ask('Convert EUR to USD');
    expect(swapped.xCache).toBe('MISS');
    expect(chatCalls()).toBe(before + 4);
    // The verifier's outcomes are counted: the paraphrase verified, the swapped direction rejected for its order.
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': ADMIN_KEY } })).text();
    expect(
      Number(/gateway_semantic_candidates_total\{outcome="verified"\} (\d+)/.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(1);
    expect(
      Number(/gateway_semantic_candidates_total\{outcome="order"\} (\d+)/.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(1);
  });

  it('streams a semantic hit as SSE', async () => {
    await ask('Which ocean is the largest?');
    const streamed = await askStreamed('The largest ocean: which?');
    expect(streamed.xCache).toBe('SEMANTIC_HIT');
    expect(streamed.text).toBe('Echo: Which ocean is the largest?');
  });

  it('guards: differing numbers, quoted strings or negations never hit', async () => {
    await ask('Convert 5 km to miles');
    const before = chatCalls();
    expect((await ask('Convert 50 km to miles')).xCache).toBe('MISS');
    await ask('Translate "good morning" into Spanish');
    expect((await ask('Translate "good night" into Spanish')).xCache).toBe('MISS');
    await ask('Is 7 a prime number?');
    expect((await ask('Is 7 not a prime number?')).xCache).toBe('MISS');
    expect(chatCalls()).toBe(before + 5);
    // Same guards, other wording: a hit.
    expect((await ask('To miles, convert 5 km')).xCache).toBe('SEMANTIC_HIT');
  });

  it('obeys X-Semantic-Cache (off, a higher similarity, nonsense) and a provider configured without it', async () => {
    // Twelve content words, so a one-word typo keeps a bag-of-words similarity of 11/12 (above 0.9, below 1).
    const base = 'Name the largest moon orbiting the ringed gas giant planet Saturn in the outer solar system.';
    await ask(base);
    expect((await ask(base.replace('Saturn', 'Saturnn'), { headers: { 'X-Semantic-Cache': '0.99999' } })).xCache).toBe(
      'MISS',
    );
    expect((await ask(base.replace('ringed', 'rigned'), { headers: { 'X-Semantic-Cache': 'off' } })).xCache).toBe(
      'MISS',
    );
    // A lower similarity than the configured one changes nothing; the exact cache still answers with the semantic one off.
    expect((await ask(base, { headers: { 'X-Semantic-Cache': 'off' } })).xCache).toBe('HIT');
    const paraphrase = base.replace('system', 'sytem');
    const bad = await client.chat.completions
      .create(
        { model: 'a-4o', messages: [{ role: 'user', content: paraphrase }] },
        { headers: { 'X-Semantic-Cache': 'sometimes' } },
      )
      .catch((err: unknown) => err);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as Error).message).toContain('X-Semantic-Cache');
    expect((await ask(paraphrase, { headers: { 'X-Semantic-Cache': '0.5' } })).xCache).toBe('SEMANTIC_HIT');

    await ask('Name the largest moon of Jupiter.', { extra: { model: 'a-exact-only' } });
    expect((await ask('The largest moon of Jupiter: name it.', { extra: { model: 'a-exact-only' } })).xCache).toBe(
      'MISS',
    );
    expect((await ask('Name the largest moon of Jupiter.', { extra: { model: 'a-exact-only' } })).xCache).toBe('HIT');
    // Per model: off on a provider that has it on, on for a provider that has it off.
    await ask('Name the largest moon of Jupiter.', { extra: { model: 'a-4o-exact' } });
    expect((await ask('The largest moon of Jupiter: name it.', { extra: { model: 'a-4o-exact' } })).xCache).toBe(
      'MISS',
    );
    await ask('Name the largest moon of Jupiter.', { extra: { model: 'a-semantic-again' } });
    expect((await ask('The largest moon of Jupiter: name it.', { extra: { model: 'a-semantic-again' } })).xCache).toBe(
      'SEMANTIC_HIT',
    );
  });

  it('compares only within the same key owner, system prompt and parameters', async () => {
    await ask('Describe the planet Mars briefly.', { system: 'You are terse.' });
    expect((await ask('Briefly, describe the planet Mars.', { system: 'You are terse.' })).xCache).toBe('SEMANTIC_HIT');
    expect((await ask('Briefly, describe the planet Mars.', { system: 'You are verbose.' })).xCache).toBe('MISS');
    expect((await ask('Briefly, describe the planet Mars.', { system: 'You are terse.', client: other })).xCache).toBe(
      'MISS',
    );
    expect(
      (await ask('Briefly, describe the planet Mars.', { system: 'You are terse.', extra: { temperature: 1.5 } }))
        .xCache,
    ).toBe('MISS');
  });
});

describe('cache administration', () => {
  it('is for admin keys only', async () => {
    expect((await admin('/admin/cache/stats', {}, KEY)).status).toBe(403);
    const denied = await admin('/admin/cache/clear', { method: 'POST' }, KEY);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('admin_required');
    expect((await admin('/admin/cache/stats', {}, 'gw_not_a_key')).status).toBe(401);
  });

  it('reports every field of the cache statistics record from real measurements', async () => {
    const { status, body } = await admin('/admin/cache/stats');
    expect(status).toBe(200);
    expect(body.cache_store).toEqual({
      connected: true,
      memory_usage: expect.stringMatching(/^\d+(\.\d+)?(B|KiB|MiB|GiB)$/),
      keys: expect.any(Number),
      hits: expect.any(Number),
      misses: expect.any(Number),
      evictions: expect.any(Number),
    });
    expect(body.cache_store.keys).toBeGreaterThan(0);
    expect(body.cache_store.hits).toBeGreaterThan(0);
    const semantic = body.semantic_cache;
    expect(semantic.collection_size).toBe(await redis.zcard(`${prefix}:cache:{s}:idx`));
    expect(semantic.collection_size).toBeGreaterThan(5);
    expect(semantic.index_size).toMatch(/^\d+(\.\d+)?(B|KiB|MiB)$/);
    expect(semantic.queries).toBeGreaterThan(5);
    expect(semantic.hits).toBeGreaterThanOrEqual(4);
    expect(semantic.misses).toBeGreaterThanOrEqual(8);
    expect(semantic.queries).toBe(semantic.hits + semantic.misses);
    expect(semantic.avg_similarity).toBeGreaterThanOrEqual(0.9);
    expect(semantic.avg_similarity).toBeLessThanOrEqual(1);
    expect(semantic.embedder).toBe('endpoint:provider_a:text-embedding-fake');
    expect(body.exact_cache.hits).toBeGreaterThan(3);
    expect(body.exact_cache.hit_rate).toBeCloseTo(
      body.exact_cache.hits / (body.exact_cache.hits + body.exact_cache.misses),
      6,
    );
  });

  it('rejects a bad clear body with the error envelope', async () => {
    const bad = await admin('/admin/cache/clear', { method: 'POST', body: JSON.stringify({ cache: 'everything' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_request');
    expect(bad.body.error.message).toMatch(/cache/);
  });

  it('clears the exact cache, then both, reporting the counts, and nothing is served after', async () => {
    await ask('Clear: the first probe.');
    expect((await ask('Clear: the first probe.')).xCache).toBe('HIT');
    const exactKeys = (await keysUnder(redis, `${prefix}:cache:x`)).length;
    const exactOnly = await admin('/admin/cache/clear', { method: 'POST', body: JSON.stringify({ cache: 'exact' }) });
    expect(exactOnly.status).toBe(200);
    expect(exactOnly.body).toMatchObject({ status: 'success', cleared: { exact_cache: exactKeys, semantic_cache: 0 } });
    expect(exactOnly.body.message).toMatch(/exact/);
    // The semantic entry of the same prompt still answers (similarity 1).
    const semantic = await ask('Clear: the first probe.');
    expect(semantic.xCache).toBe('SEMANTIC_HIT');
    expect(Number(semantic.headers.get('x-cache-similarity'))).toBeCloseTo(1, 3);

    const semanticEntries = await redis.zcard(`${prefix}:cache:{s}:idx`);
    const all = await admin('/admin/cache/clear', { method: 'POST' });
    expect(all.body).toMatchObject({ status: 'success', cleared: { exact_cache: 0, semantic_cache: semanticEntries } });
    expect(semanticEntries).toBeGreaterThan(5);
    expect((await admin('/admin/cache/stats')).body.semantic_cache.collection_size).toBe(0);
    expect(await keysUnder(redis, `${prefix}:cache:{s}:e`)).toEqual([]);
    expect((await ask('Clear: the first probe.')).xCache).toBe('MISS');
  });

  it('keeps no prompt text, key or provider secret in Redis key names or cache entries', async () => {
    await ask('Secrets: my prompt mentions zebras.');
    const names = await keysUnder(redis, `${prefix}:cache`);
    expect(names.join(' ')).not.toMatch(/zebras|gw_cache|up-a-secret/);
    for (const name of names.filter((n) => n.includes(':s:e:'))) {
      const fields = await redis.hgetall(name);
      expect(JSON.stringify(fields)).not.toMatch(/gw_cache|up-a-secret/);
    }
  });
});

describe('a hit never touches the queue', () => {
  it('still answers from cache with every worker stopped', async () => {
    await ask('Queue: cached before the workers stop.');
    for (const worker of gateway.workers.get('provider_a') ?? []) await worker.kill('SIGKILL');
    const hit = await ask('Queue: cached before the workers stop.');
    expect(hit.xCache).toBe('HIT');
    const semanticHit = await ask('Queue: cached before workers stop.');
    expect(semanticHit.xCache).toBe('SEMANTIC_HIT');
  });
});
