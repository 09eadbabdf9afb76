import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-key.ts';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Virtual keys through two real API processes, one worker, a loopback
 * upstream and the official OpenAI client. Every prompt is 11 characters
 * (3 estimated tokens) with max_tokens 20: each request is estimated at 23
 * tokens (and 23 USD at the 1 USD-a-token price below) on admission. The
 * upstream reports 2 prompt + 5 completion tokens: 7 tokens, 7 USD.
 *
 * The rule under test: a request is admitted while the key's usage plus the
 * estimates of its requests in flight is below the limit.
 */

const ADMIN = 'vk-admin-key';
const ESTIMATE = 23;
const REAL = 7;
const prefix = uniquePrefix('virtual-keys');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
let replica: ApiReplica;
let bases: string[];

async function admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: Untyped }> {
  const res = await fetch(`${bases[0]}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: await res.json() };
}

async function createKey(policy: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const created = await admin('POST', '/admin/keys', { owner: 'team-e2e', ...policy });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

const client = (baseUrl: string, apiKey: string) => new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0 });

let seq = 0;
/** One chat completion, alternating replicas; resolves with the status (200 or the error's). */
async function chat(
  key: string,
  replicaIndex = seq % 2,
): Promise<{ status: number; code?: string | null; usage?: number }> {
  const content = `req-${String(seq++ % 100).padStart(2, '0')} word`;
  try {
    const reply = await client(bases[replicaIndex]!, key).chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content }],
      max_tokens: 20,
    });
    return { status: 200, usage: reply.usage?.total_tokens ?? -1 };
  } catch (err) {
    if (err instanceof OpenAI.APIError) return { status: err.status ?? 0, code: err.code ?? null };
    throw err;
  }
}

/** Waits until no estimate of `key` is in flight in Redis (its completions are settled). */
async function settled(key: string): Promise<void> {
  const hash = hashApiKey(key);
  await waitFor(
    async () => {
      const [tokens, reservations] = await Promise.all([
        redis.zrange(`${prefix}:vk:tpm:{${hash}}`, 0, -1),
        redis.keys(`${prefix}:vk:res:{${hash}}:*`),
      ]);
      const inFlight = reservations.length > 0 ? await redis.zcard(reservations[0]!) : 0;
      return !tokens.some((m) => m.endsWith(`:${ESTIMATE}`)) && inFlight === 0;
    },
    5_000,
    'completions to settle',
  );
}

beforeAll(async () => {
  upstream = await startFakeUpstream({
    format: 'openai',
    apiKey: 'up-a',
    behavior: { replyText: 'one two three four five' },
  });
  const env = {
    REDIS_KEY_PREFIX: prefix,
    ADMIN_API_KEYS: ADMIN,
    PROVIDER_A_API_KEY: 'up-a',
    RATE_LIMIT_REQUESTS: '1000',
    KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-vk-')), 'keys.sqlite'),
    AUTH_CACHE_TTL_MS: '600000',
    CACHE_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    DLP_ENABLED: 'false',
  };
  gateway = await startGateway({
    env,
    config: {
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models: ['a-4o', 'b-1'], base_url: upstream.url },
      ],
      prices: { 'a-4o': { input_per_million: 1_000_000, output_per_million: 1_000_000 } },
    },
    providers: ['provider_a'],
  });
  replica = await startApiReplica(env, gateway.configPath);
  bases = [gateway.baseUrl, replica.baseUrl];
});

afterAll(async () => {
  await Promise.all([gateway?.stop(), replica?.stop(), upstream?.close()]);
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('virtual keys across two API replicas', () => {
  it('a token limit of 100 per minute: exactly 5 of 8 concurrent requests, then real usage frees room for exactly 10 more', async () => {
    const { key } = await createKey({ tokens_per_minute: 100 });
    upstream.setBehavior({ latencyMs: 700 });
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(key, i % 2)));
    upstream.setBehavior({ latencyMs: 0 });
    // Admitted at 0, 23, 46, 69 and 92 tokens in flight; the 6th saw 115.
    expect(burst.filter((r) => r.status === 200)).toHaveLength(5);
    expect(burst.filter((r) => r.status === 429).map((r) => r.code)).toEqual([
      'rate_limit_exceeded',
      'rate_limit_exceeded',
      'rate_limit_exceeded',
    ]);
    expect(burst.find((r) => r.status === 200)?.usage).toBe(REAL);
    await settled(key);

    // 35 tokens used: 35 + 7k < 100 admits k = 0..9, then the 11th is refused.
    const sequential: number[] = [];
    for (let i = 0; i < 11; i++) {
      sequential.push((await chat(key)).status);
      await settled(key);
    }
    expect(sequential).toEqual([...Array(10).fill(200), 429]);
  });

  it('a budget of 50 USD a day: exactly 3 of 8 concurrent requests, then exactly 5 more; 429 budget_exceeded; spend recorded in the key store', async () => {
    const { key, id } = await createKey({
      budget: { amount_usd: 50, period: 'day' },
      metadata: { team: 'search', user: 'u-42' },
    });
    upstream.setBehavior({ latencyMs: 700 });
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(key, i % 2)));
    upstream.setBehavior({ latencyMs: 0 });
    // Admitted at 0, 23 and 46 USD in flight; the 4th saw 69.
    expect(burst.filter((r) => r.status === 200)).toHaveLength(3);
    expect(new Set(burst.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.code}`))).toEqual(
      new Set(['429 budget_exceeded']),
    );
    await settled(key);

    // 21 USD spent: 21 + 7k < 50 admits k = 0..4.
    const sequential: number[] = [];
    for (let i = 0; i < 6; i++) {
      sequential.push((await chat(key)).status);
      await settled(key);
    }
    expect(sequential).toEqual([200, 200, 200, 200, 200, 429]);

    const err = await client(replica.baseUrl, key)
      .chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content: 'one more' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const rateErr = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(rateErr.code).toBe('budget_exceeded');
    expect(rateErr.type).toBe('rate_limit_error');
    expect(rateErr.headers?.get('x-should-retry')).toBe('false');
    expect(Number(rateErr.headers?.get('retry-after'))).toBeGreaterThan(0);

    // 8 calls of 7 USD, in the database within a flush interval.
    let usage: Untyped;
    await waitFor(
      async () => {
        usage = (await admin('GET', `/admin/keys/${id}/usage`)).body;
        return usage.total?.requests === 8;
      },
      5_000,
      'usage rows',
    );
    expect(usage).toMatchObject({ id, owner: 'team-e2e', metadata: { team: 'search', user: 'u-42' } });
    expect(usage.total).toEqual({
      requests: 8,
      prompt_tokens: 16,
      completion_tokens: 40,
      cached_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: 56,
    });
    expect(usage.by_model['a-4o']).toEqual(usage.total);
    expect(usage.by_day).toHaveLength(1);

    const stats = await fetch(`${bases[1]}/stats`, { headers: { 'x-api-key': ADMIN } }).then(
      (r) => r.json() as Promise<Untyped>,
    );
    const entry = stats.key_spend.keys.find((k: { id: string }) => k.id === id);
    expect(entry).toMatchObject({
      owner: 'team-e2e',
      team: 'search',
      user: 'u-42',
      requests: 8,
      cost_usd: 56,
      cost_today_usd: 56,
    });
    expect(stats.key_spend.total_cost_usd).toBeGreaterThanOrEqual(56);
    // A client key sees its own spend only.
    const own = await fetch(`${bases[0]}/stats`, { headers: { 'x-api-key': key } }).then(
      (r) => r.json() as Promise<Untyped>,
    );
    expect(own.key_spend.keys.map((k: { id: string }) => k.id)).toEqual([id]);
  });

  it('403 model_not_allowed outside the patterns, 401 once expired (on every replica at once), a per-key request rate', async () => {
    const { key, id } = await createKey({ allowed_models: ['b-*'], rate_limit: { requests: 3, window_seconds: 60 } });
    const denied = await client(gateway.baseUrl, key)
      .chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((denied as InstanceType<typeof OpenAI.PermissionDeniedError>).code).toBe('model_not_allowed');
    expect((denied as Error).message).toContain("may not use the model 'a-4o'");
    expect(upstream.requests.some((r) => JSON.stringify(r.body).includes('"hi"'))).toBe(false);

    const allowed = await client(replica.baseUrl, key).chat.completions.create({
      model: 'b-1',
      messages: [{ role: 'user', content: 'hi b' }],
    });
    expect(allowed.choices[0]?.message.content).toBe('one two three four five');
    // The key's own limit (3 per minute) instead of the global 1000: the 4th request is refused.
    const third = await fetch(`${gateway.baseUrl}/v1/models`, { headers: { 'x-api-key': key } });
    expect(third.headers.get('x-ratelimit-limit')).toBe('3');
    expect((await fetch(`${replica.baseUrl}/v1/models`, { headers: { 'x-api-key': key } })).status).toBe(429);

    const expiresAt = new Date(Date.now() - 1_000).toISOString();
    const patched = await admin('PATCH', `/admin/keys/${id}`, { expires_at: expiresAt, rate_limit: null });
    expect(patched.body).toMatchObject({ id, expires_at: expiresAt, allowed_models: ['b-*'] });
    expect(patched.body.rate_limit).toBeUndefined();
    for (const baseUrl of bases) {
      await waitFor(
        async () => (await fetch(`${baseUrl}/v1/models`, { headers: { 'x-api-key': key } })).status === 401,
        3_000,
        `expiry on ${baseUrl}`,
      );
      const expired = await client(baseUrl, key)
        .models.list()
        .catch((e: unknown) => e);
      expect(expired).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((expired as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
      expect((expired as Error).message).toContain(`expired at ${expiresAt}`);
    }
  });
});
