import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimitStats } from '../../src/ratelimit/rate-limit-stats.ts';
import { maskApiKey } from '../../src/auth/api-key.ts';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Per-key rate limiting through two real API processes sharing one Redis:
 * RATE_LIMIT_REQUESTS=3 per RATE_LIMIT_WINDOW=4 s. The window is real time
 * (the Redis clock), so waits below carry margins of hundreds of ms.
 */

const LIMIT = 3;
const WINDOW_MS = 4_000;
const KEYS = [
  'rl-shared-key-001',
  'rl-slide-key-0002',
  'rl-chat-key-00003',
  'rl-probes-key-004',
  'rl-other-key-0005',
  'rl-order-key-0006',
] as const;
const [SHARED, SLIDE, CHAT, PROBES, OTHER, ORDER] = KEYS;
const ADMIN = 'rl-admin';
const prefix = uniquePrefix('ratelimit-e2e');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
let replica: ApiReplica;

async function get(baseUrl: string, path: string, key: string, init: RequestInit = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    ...init,
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...(init.headers as object) },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

const sleepUntil = (t: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, t - Date.now())));

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a' });
  const env = {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: KEYS.join(','),
    ADMIN_API_KEYS: ADMIN,
    PROVIDER_A_API_KEY: 'up-a',
    RATE_LIMIT_REQUESTS: String(LIMIT),
    RATE_LIMIT_WINDOW: String(WINDOW_MS / 1000),
    DLP_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
  };
  gateway = await startGateway({
    env,
    config: {
      providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models: ['a-4o'], base_url: upstream.url }],
    },
    providers: ['provider_a'],
  });
  replica = await startApiReplica(env, gateway.configPath);
});

afterAll(async () => {
  await Promise.all([gateway?.stop(), replica?.stop(), upstream?.close()]);
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('rate limiting across replicas', () => {
  it('two API processes share one limit per key, with headers on every /v1 reply and Retry-After on 429', async () => {
    const key = SHARED;
    const replies = [
      await get(gateway.baseUrl, '/v1/models', key),
      await get(replica.baseUrl, '/v1/models', key),
      await get(gateway.baseUrl, '/v1/models', key),
      await get(replica.baseUrl, '/v1/models', key),
      await get(gateway.baseUrl, '/v1/models', key),
    ];
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(replies.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(['2', '1', '0', '0', '0']);
    for (const reply of replies) {
      expect(reply.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      const reset = Number(reply.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(WINDOW_MS / 1000);
    }
    const throttled = replies[3]!;
    expect(throttled.body).toMatchObject({ error: { code: 'rate_limit_exceeded', type: 'rate_limit_error' } });
    expect(throttled.body.request_id).toBe(throttled.headers.get('x-request-id'));
    expect(Number(throttled.headers.get('retry-after'))).toBe(Number(throttled.headers.get('x-ratelimit-reset')));

    // Another key has its own budget.
    expect((await get(replica.baseUrl, '/v1/models', OTHER)).status).toBe(200);
  });

  it('the window slides in real time, with no burst at its edge', async () => {
    const key = SLIDE;
    const t0 = Date.now();
    expect((await get(gateway.baseUrl, '/v1/models', key)).status).toBe(200);
    const afterFirst = Date.now();
    await sleepUntil(afterFirst + WINDOW_MS / 2);
    expect((await get(replica.baseUrl, '/v1/models', key)).status).toBe(200);
    expect((await get(gateway.baseUrl, '/v1/models', key)).status).toBe(200);
    const full = await get(replica.baseUrl, '/v1/models', key);
    expect(full.status).toBe(429);
    // The first request leaves the window about WINDOW/2 after the second pair.
    expect(Number(full.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 2000) + 1);

    // Just past the first request's window: one slot is free, and only one.
    await sleepUntil(afterFirst + WINDOW_MS + 300);
    const edge = [await get(gateway.baseUrl, '/v1/models', key), await get(replica.baseUrl, '/v1/models', key)];
    expect(Date.now()).toBeLessThan(t0 + WINDOW_MS * 1.5); // the two later requests are still inside their window
    expect(edge.map((r) => r.status)).toEqual([200, 429]);
  });

  it('counts chat completions (streamed or not) and failed /v1 requests; the OpenAI SDK sees RateLimitError', async () => {
    const key = CHAT;
    const client = new OpenAI({ baseURL: `${replica.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'hello limits' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('hello limits');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('2');

    const stream = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'stream me' }], stream: true })
      .withResponse();
    expect(stream.response.headers.get('x-ratelimit-remaining')).toBe('1');
    let text = '';
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('stream me');

    const invalid = await get(gateway.baseUrl, '/v1/chat/completions', key, {
      method: 'POST',
      body: JSON.stringify({ model: 'a-4o' }),
    });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('x-ratelimit-remaining')).toBe('0');

    const err = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'one too many' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const rateLimited = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateLimited.status).toBe(429);
    expect(rateLimited.code).toBe('rate_limit_exceeded');
    expect(Number(rateLimited.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The throttled request never reached the upstream.
    expect(upstream.requests.filter((r) => JSON.stringify(r.body).includes('one too many'))).toHaveLength(0);
  });

  it('a throttled request gets 429 whatever else it would have got: no cache hit (and none counted), no 400, no 404', async () => {
    const key = ORDER;
    const chat = (body: string) => get(gateway.baseUrl, '/v1/chat/completions', key, { method: 'POST', body });
    const cacheable = JSON.stringify({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'rate limit order probe' }],
    });
    const first = await chat(cacheable);
    expect(first.headers.get('x-cache')).toBe('MISS');
    for (let i = 1; i < LIMIT; i++) {
      const hit = await chat(cacheable);
      expect(hit.headers.get('x-cache')).toBe('HIT');
      expect(hit.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1 - i));
    }
    const cacheStats = async () => {
      await new Promise((r) => setTimeout(r, 400)); // counters are flushed every 200 ms
      return Number((await redis.hget(`${prefix}:cache:stats`, 'exact_hits')) ?? 0);
    };
    const hitsBefore = await cacheStats();
    const throttledHit = await chat(cacheable);
    expect(throttledHit.status).toBe(429);
    expect(throttledHit.body.error.code).toBe('rate_limit_exceeded');
    expect(throttledHit.headers.get('x-cache')).toBeNull();
    expect(await cacheStats()).toBe(hitsBefore);
    for (const [body, path] of [
      [JSON.stringify({ model: 'a-4o' }), '/v1/chat/completions'],
      ['{"model":', '/v1/chat/completions'],
      ['{}', '/v1/no-such-route'],
    ] as const) {
      const res = await get(gateway.baseUrl, path, key, { method: 'POST', body });
      expect(res.status, `${path} ${body}`).toBe(429);
      expect(res.headers.get('retry-after')).not.toBeNull();
    }
  });

  it('probes and admin endpoints are not counted and carry no rate-limit headers', async () => {
    const key = PROBES;
    for (let i = 0; i < LIMIT + 2; i++) {
      const probe = await get(gateway.baseUrl, '/health/live', key);
      expect(probe.status).toBe(200);
      expect(probe.headers.get('x-ratelimit-limit')).toBeNull();
      await get(replica.baseUrl, '/health', key);
    }
    for (let i = 0; i < LIMIT + 1; i++)
      expect((await get(gateway.baseUrl, '/admin/reload-config', ADMIN, { method: 'POST' })).status).toBe(200);
    const first = await get(gateway.baseUrl, '/v1/models', key);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 1));
  });

  it('feeds rate_limit_stats: throttled count and per-key requests, masked', async () => {
    const stats = await new RateLimitStats({ redis, prefix }).read();
    expect(stats.requests_throttled).toBeGreaterThanOrEqual(4);
    const shared = stats.top_users.find((u) => u.api_key === maskApiKey(SHARED));
    expect(shared?.requests).toBe(5);
    expect(JSON.stringify(stats)).not.toContain(SHARED);
  });
});
