import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import {
  freePort,
  spawnGatewayProcess,
  startGateway,
  waitFor,
  type Gateway,
  type GatewayProcess,
} from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Several API replicas on one Redis share one cache: entries stored through
 * one are served by the others (their in-memory semantic indexes follow
 * Redis through pub/sub), a replica started later loads what exists, clear
 * reaches every replica, and coalescing works across them. Runs with
 * CACHE_SCOPE=shared (off by default), so keys of different owners share.
 */

const KEY = 'gw_cache_replica_key_one_012345';
const OTHER_KEY = 'gw_cache_replica_key_two_012345';
const ADMIN_KEY = 'gw_cache_replica_admin_0123456';
const prefix = uniquePrefix('cache-replicas');
const redis = testRedis();
let gateway: Gateway;
let upstream: FakeUpstream;
const extraApis: GatewayProcess[] = [];
let secondUrl: string;

const chatCalls = () => upstream.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

const env = (): Record<string, string> => ({
  REDIS_KEY_PREFIX: prefix,
  API_KEYS: `${KEY},${OTHER_KEY}`,
  ADMIN_API_KEYS: ADMIN_KEY,
  PROVIDER_A_API_KEY: 'up-a-secret',
  DLP_ENABLED: 'false',
  RATE_LIMIT_REQUESTS: '100000',
  CACHE_SCOPE: 'shared',
  SEMANTIC_CACHE_THRESHOLD: '0.9',
  EMBEDDING_BACKEND: 'endpoint',
  EMBEDDING_MODEL: 'text-embedding-fake',
  LOG_LEVEL: 'warning',
});

async function startApi(): Promise<string> {
  const port = await freePort();
  const api = spawnGatewayProcess('src/server.ts', [], {
    ...env(),
    CONFIG_PATH: gateway.configPath,
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  extraApis.push(api);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await stats(url)).semantic_cache?.status === 'ready',
    20_000,
    `API replica on ${port}:\n${api.output()}`,
  );
  return url;
}

function clientFor(baseUrl: string, key = KEY): OpenAI {
  return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: key, maxRetries: 0, timeout: 20_000 });
}

async function ask(baseUrl: string, content: string, key = KEY) {
  const { data, response } = await clientFor(baseUrl, key)
    .chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content }] })
    .withResponse();
  return { data, xCache: response.headers.get('x-cache') };
}

async function stats(baseUrl: string): Promise<Untyped> {
  const res = await fetch(`${baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN_KEY } });
  return res.json();
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a-secret' });
  gateway = await startGateway({
    env: env(),
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          max_retries: 0,
        },
      ],
    },
    providers: ['provider_a'],
  });
  await waitFor(
    async () => (await stats(gateway.baseUrl)).semantic_cache?.status === 'ready',
    10_000,
    'the first API to be ready',
  );
  secondUrl = await startApi();
}, 90_000);

afterAll(async () => {
  await Promise.all(extraApis.map((api) => api.kill('SIGTERM')));
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('cache shared by API replicas', () => {
  it('serves entries stored through one replica from another, exact and semantic', async () => {
    const before = chatCalls();
    expect((await ask(gateway.baseUrl, 'Which river flows through Paris?')).xCache).toBe('MISS');
    expect((await ask(secondUrl, 'Which river flows through Paris?')).xCache).toBe('HIT');
    // The second replica's index learned the entry through pub/sub.
    await waitFor(
      async () => (await stats(secondUrl)).semantic_cache.collection_size === 1,
      5_000,
      'replica 2 to index the entry',
    );
    const semantic = await ask(secondUrl, 'Paris: which river flows through it?');
    expect(semantic.xCache).toBe('SEMANTIC_HIT');
    expect(semantic.data.choices[0]?.message.content).toBe('Echo: Which river flows through Paris?');
    expect(chatCalls()).toBe(before + 1);
  });

  it('shares entries across keys when CACHE_SCOPE=shared', async () => {
    await ask(gateway.baseUrl, 'Shared scope probe about tulips.');
    expect((await ask(secondUrl, 'Shared scope probe about tulips.', OTHER_KEY)).xCache).toBe('HIT');
    expect((await ask(secondUrl, 'About tulips, shared scope probe.', OTHER_KEY)).xCache).toBe('SEMANTIC_HIT');
  });

  it('coalesces identical concurrent misses arriving at different replicas', async () => {
    upstream.setBehavior({ latencyMs: 400 });
    try {
      const before = chatCalls();
      const replies = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          ask(i % 2 === 0 ? gateway.baseUrl : secondUrl, 'Cross-replica coalescing probe.'),
        ),
      );
      expect(chatCalls()).toBe(before + 1);
      expect(new Set(replies.map((r) => r.data.id)).size).toBe(1);
    } finally {
      upstream.setBehavior({ latencyMs: 0 });
    }
  });

  it('a replica started later loads the existing entries; clear empties every replica', async () => {
    const third = await startApi();
    const size = (await stats(gateway.baseUrl)).semantic_cache.collection_size;
    expect(size).toBeGreaterThanOrEqual(3);
    expect((await stats(third)).semantic_cache.collection_size).toBe(size);
    expect((await ask(third, 'Paris: which river flows through it?')).xCache).toBe('SEMANTIC_HIT');

    const res = await fetch(`${secondUrl}/admin/cache/clear`, {
      method: 'POST',
      headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ cache: 'all' }),
    });
    const body = (await res.json()) as { cleared: { exact_cache: number; semantic_cache: number } };
    expect(body.cleared.semantic_cache).toBe(size);
    expect(body.cleared.exact_cache).toBeGreaterThanOrEqual(3);
    for (const url of [gateway.baseUrl, secondUrl, third]) {
      await waitFor(
        async () => (await stats(url)).semantic_cache.collection_size === 0,
        5_000,
        `replica ${url} to drop its index`,
      );
    }
    expect((await ask(gateway.baseUrl, 'Which river flows through Paris?')).xCache).toBe('MISS');
    expect((await ask(third, 'About tulips, shared scope probe.')).xCache).toBe('MISS');
  });
});
