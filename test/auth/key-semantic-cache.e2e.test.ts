import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * A key's `semantic_cache: false` through the running gateway (endpoint
 * embedder on the fake upstream): two keys of one owner share cache entries,
 * but the switched-off key is never answered from the semantic cache, while
 * the exact cache still serves it.
 */

const ADMIN = 'key-semantic-admin';
const prefix = uniquePrefix('key-semantic');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;

async function api(method: string, path: string, body?: unknown): Promise<Untyped> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return res.json();
}

async function ask(key: string, content: string): Promise<string | null> {
  const openai = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
  const { response } = await openai.chat.completions
    .create({ model: 'a-4o', messages: [{ role: 'user', content }] })
    .withResponse();
  return response.headers.get('x-cache');
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a' });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      ADMIN_API_KEYS: ADMIN,
      PROVIDER_A_API_KEY: 'up-a',
      DLP_ENABLED: 'false',
      AUTH_CACHE_TTL_MS: '600000',
      SEMANTIC_CACHE_ENABLED: 'true',
      SEMANTIC_CACHE_THRESHOLD: '0.9',
      EMBEDDING_BACKEND: 'endpoint',
      EMBEDDING_PROVIDER: 'provider_a',
      EMBEDDING_MODEL: 'text-embedding-fake',
    },
    config: {
      providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] }],
    },
    providers: ['provider_a'],
  });
  await waitFor(
    async () => (await api('GET', '/admin/cache/stats')).semantic_cache?.status === 'ready',
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

describe('per-key semantic cache switch', () => {
  it('a key with semantic_cache false misses paraphrases but hits exact repeats; switching it back on restores semantic hits', async () => {
    const on = await api('POST', '/admin/keys', { owner: 'shared-owner' });
    const off = await api('POST', '/admin/keys', { owner: 'shared-owner', semantic_cache: false });
    expect(off.semantic_cache).toBe(false);

    expect(await ask(on.key, 'What is the capital of France?')).toBe('MISS');
    expect(await ask(on.key, 'The capital of France is what?')).toBe('SEMANTIC_HIT');
    expect(await ask(off.key, 'France: its capital is what?')).toBe('MISS');
    expect(await ask(off.key, 'What is the capital of France?')).toBe('HIT');

    await api('PATCH', `/admin/keys/${off.id}`, { semantic_cache: null });
    await waitFor(
      async () => (await ask(off.key, 'Capital of France, what is it?')) === 'SEMANTIC_HIT',
      3_000,
      'the switch to reach the gateway',
    );
  });
});
