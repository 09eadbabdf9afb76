import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { keysUnder } from '../support/redis.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { countBy, sendChat, trafficLoop } from '../support/traffic.ts';

/**
 * Redis memory stays bounded under a sustained load of unique prompts (every
 * one a cache miss, as benchmark traffic is): reply streams are deleted once
 * read instead of living RESPONSE_STREAM_TTL, and the exact cache stays within
 * CACHE_MAX_BYTES, on a Redis with `maxmemory-policy noeviction` as BullMQ
 * needs it, while the queue keeps answering.
 */

const KEY = 'gw_e2e_redis_memory_key_0123456789';
const PREFIX = 'gwmem';
const MAX_BYTES = 1024 * 1024;
const REQUESTS = 1_000;
let server: RedisServer;
let redis: Redis;
let upstream: FakeUpstream;
let gateway: Gateway;

const prompt = (i: number) => `memory load ${i}: ${'lorem ipsum dolor sit amet '.repeat(220)}`;

async function usedMemory(): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

beforeAll(async () => {
  server = await startRedisServer({
    args: ['--save', '', '--appendonly', 'no', '--maxmemory', '64mb', '--maxmemory-policy', 'noeviction'],
  });
  redis = new Redis({ host: '127.0.0.1', port: server.port });
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-a-secret', record: false });
  gateway = await startGateway({
    env: {
      REDIS_HOST: '127.0.0.1',
      REDIS_PORT: String(server.port),
      REDIS_KEY_PREFIX: PREFIX,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'upstream-a-secret',
      SEMANTIC_CACHE_ENABLED: 'false',
      CACHE_MAX_BYTES: String(MAX_BYTES),
      RATE_LIMIT_REQUESTS: '100000',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          concurrency: 16,
        },
      ],
    },
    providers: ['provider_a'],
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  redis?.disconnect();
  await server?.stop('SIGTERM');
});

describe('bounded Redis memory', () => {
  it('keeps Redis memory within CACHE_MAX_BYTES under sustained unique prompts, and the queue answering', async () => {
    // Warm up: connections, BullMQ's scripts and keys, the first entries.
    for (let i = 0; i < 20; i++)
      expect(
        (
          await sendChat(
            gateway.baseUrl,
            KEY,
            { model: 'a-4o', messages: [{ role: 'user', content: `warm ${i}` }] },
            10_000,
          )
        ).status,
      ).toBe(200);
    const before = await usedMemory();
    let peak = before;
    const sampler = setInterval(
      () =>
        void usedMemory().then(
          (m) => (peak = Math.max(peak, m)),
          () => {},
        ),
      100,
    );
    let sent = 0;
    const outcomes = await trafficLoop(
      16,
      () => sent >= REQUESTS,
      (i) => {
        sent++;
        return sendChat(
          gateway.baseUrl,
          KEY,
          { model: 'a-4o', stream: i % 2 === 0, messages: [{ role: 'user', content: prompt(i) }] },
          20_000,
        );
      },
    );
    clearInterval(sampler);
    expect(countBy(outcomes, (o) => `${o.status}/${o.streamEnd ?? 'json'}`)).toEqual({
      '200/done': REQUESTS / 2,
      '200/json': REQUESTS / 2,
    });

    // What the replies weigh: what Redis would have kept without the bound and the deletion (twice: entry and stream).
    const replyBytes = REQUESTS * Buffer.byteLength(`Echo: ${prompt(1000)}`);
    expect(replyBytes).toBeGreaterThan(5 * MAX_BYTES);
    // Deleted once read, after the reply went out: the last few may still be on their way.
    await waitFor(
      async () => (await keysUnder(redis, `${PREFIX}:resp`)).length === 0,
      3_000,
      'every reply stream to be deleted',
    );
    const keys = await keysUnder(redis, PREFIX);
    expect(Number(await redis.get(`${PREFIX}:cache:lru:bytes`))).toBeLessThanOrEqual(MAX_BYTES);
    const entries = keys.filter((k) => k.startsWith(`${PREFIX}:cache:x:`)).length;
    expect(entries).toBeGreaterThan(100);
    expect(entries).toBeLessThan(REQUESTS / 2);
    // Redis' own measure once the load is over: the bound plus a margin (BullMQ's capped event stream, the rate
    // limiter's window, client buffers), far from the replies' weight. At its peak Redis also held what was in flight:
    // 16 requests at a time, a streamed one being a reply stream of some 1,300 chunk entries (under 256 KiB).
    const settled = (await usedMemory()) - before;
    const grown = peak - before;
    console.log(
      `redis used_memory: ${before} B before the load, +${grown} B at its peak, +${settled} B after it, for ${replyBytes} B of replies; ${entries} exact entries kept`,
    );
    expect(settled).toBeLessThan(MAX_BYTES + 1024 * 1024);
    expect(grown).toBeLessThan(MAX_BYTES + 1024 * 1024 + 16 * 256 * 1024);

    // The queue and the cache still work: a new prompt is a miss, then a hit.
    const client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 10_000 });
    const miss = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'after the load' }] })
      .withResponse();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    const hit = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'after the load' }] })
      .withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.data.choices[0]?.message.content).toBe('Echo: after the load');
  }, 180_000);

  it('deletes a coalesced reply stream once the leader and every follower have read it', async () => {
    upstream.setBehavior({ latencyMs: 400 });
    try {
      const body = { model: 'a-4o', messages: [{ role: 'user', content: 'one answer for three' }] };
      const outcomes = await Promise.all([0, 1, 2].map(() => sendChat(gateway.baseUrl, KEY, body, 10_000)));
      expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200]);
      const streamed = await Promise.all(
        [0, 1, 2].map(() =>
          sendChat(
            gateway.baseUrl,
            KEY,
            { ...body, stream: true, messages: [{ role: 'user', content: 'streamed for three' }] },
            10_000,
          ),
        ),
      );
      expect(streamed.map((o) => o.streamEnd)).toEqual(['done', 'done', 'done']);
      await waitFor(
        async () => (await keysUnder(redis, `${PREFIX}:resp`)).length === 0,
        5_000,
        'the coalesced reply streams to be deleted',
      );
    } finally {
      upstream.setBehavior({ latencyMs: undefined });
    }
  }, 30_000);

  it("keeps the caches on CACHE_REDIS_URL, an allkeys-lru Redis of their own, and the queue on the gateway's", async () => {
    const cacheServer = await startRedisServer({
      args: ['--save', '', '--appendonly', 'no', '--maxmemory', '16mb', '--maxmemory-policy', 'allkeys-lru'],
    });
    const cacheRedis = new Redis({ host: '127.0.0.1', port: cacheServer.port });
    const split = await startGateway({
      env: {
        REDIS_HOST: '127.0.0.1',
        REDIS_PORT: String(server.port),
        CACHE_REDIS_URL: `redis://127.0.0.1:${cacheServer.port}/2`,
        REDIS_KEY_PREFIX: 'gwsplit',
        API_KEYS: KEY,
        PROVIDER_A_API_KEY: 'upstream-a-secret',
        SEMANTIC_CACHE_ENABLED: 'false',
      },
      config: {
        providers: [
          { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] },
        ],
      },
      providers: ['provider_a'],
    });
    try {
      const client = new OpenAI({ baseURL: `${split.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 10_000 });
      const ask = () =>
        client.chat.completions
          .create({ model: 'a-4o', messages: [{ role: 'user', content: 'cached elsewhere' }] })
          .withResponse();
      expect((await ask()).response.headers.get('x-cache')).toBe('MISS');
      const hit = await ask();
      expect(hit.response.headers.get('x-cache')).toBe('HIT');
      expect(hit.data.choices[0]?.message.content).toBe('Echo: cached elsewhere');
      await cacheRedis.select(2);
      expect((await keysUnder(cacheRedis, 'gwsplit:cache:x')).length).toBe(1);
      expect(await keysUnder(redis, 'gwsplit:cache:x')).toEqual([]);
      // The queue stayed on the gateway's Redis.
      expect((await keysUnder(redis, 'gwsplit:bull')).length).toBeGreaterThan(0);
      expect(await keysUnder(cacheRedis, 'gwsplit:bull')).toEqual([]);
    } finally {
      await split.stop();
      cacheRedis.disconnect();
      await cacheServer.stop('SIGTERM');
    }
  }, 60_000);
});
