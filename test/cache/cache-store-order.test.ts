import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CacheStats } from '../../src/cache/cache-stats.ts';
import { ExactCache } from '../../src/cache/exact-cache.ts';
import { cacheKeys } from '../../src/cache/redis-keys.ts';
import { RequestCoalescer } from '../../src/cache/request-coalescer.ts';
import { ResponseCache } from '../../src/cache/response-cache.ts';
import { SemanticCache } from '../../src/cache/semantic-cache.ts';
import { normalizeChatRequest } from '../../src/chat/request-schema.ts';
import type { ProviderConfig } from '../../src/config/gateway-config.ts';
import { admit } from '../../src/ratelimit/admission.ts';
import { entryFields, responseStreamKey } from '../../src/streams/protocol.ts';
import { StreamReader } from '../../src/streams/stream-reader.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { replyFollower } from '../support/reply-follower.ts';

/**
 * When a miss's reply is stored: the store is sent before the reply's end
 * reaches the client but not waited for, and the coalescing claim is held
 * until it is done. A private redis-server, because `CLIENT PAUSE WRITE`
 * holds every writer of the server: it plays a Redis slow to store.
 */

const prefix = 'gwtest:store-order';
const keys = cacheKeys(prefix);
const logger = pino({ level: 'silent' });
const provider = {
  name: 'provider_a',
  timeout_ms: 2_000,
  stream_idle_timeout_ms: 1_000,
  queue_timeout_ms: 1_000,
} as unknown as ProviderConfig;
const PAUSE_MS = 600;

let server: RedisServer;
let connect: () => Redis;
let redis: Redis;
let probe: Redis;
let reader: StreamReader;

beforeAll(async () => {
  server = await startRedisServer();
  connect = () => new Redis({ host: '127.0.0.1', port: server.port, maxRetriesPerRequest: 1 });
  redis = connect();
  probe = connect();
  reader = new StreamReader({ connect });
});

afterAll(async () => {
  await reader.close();
  redis.disconnect();
  probe.disconnect();
  await server.stop();
});

it("hands the reply's end over before the store is done and goes on, holds the claim until it is, and the next request finds it", async () => {
  const cache = new ResponseCache({
    exact: new ExactCache({ redis, keys, ttlSeconds: 60 }),
    semantic: new SemanticCache({ redis, subscriber: connect, keys, ttlSeconds: 60, logger }),
    stats: new CacheStats(redis, keys),
    logger,
    exactEnabled: true,
    semanticEnabled: false,
    threshold: 0.9,
    coalescer: new RequestCoalescer({ redis, keys, prefix, graceMs: 200 }),
  });
  await cache.start();
  const replies = replyFollower({ reader, redis, prefix, graceMs: 200 });
  const request = normalizeChatRequest({ model: 'a-4o', messages: [{ role: 'user', content: 'Store me.' }] } as never);
  const completion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1700000000,
    model: 'a-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Stored.' }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
  try {
    const miss = await cache.lookup(request, 'alice', undefined, Promise.resolve(admit()));
    expect(miss.status).toBe('MISS');
    const claim = await miss.claim(provider);
    expect(claim.role).toBe('leader');
    await redis.xadd(
      responseStreamKey(prefix, claim.jobId),
      '*',
      ...entryFields('result', JSON.stringify(completion), undefined, { prompt_tokens: 3, completion_tokens: 2 }),
    );
    const entries = miss.track(replies.follow(claim.jobId, provider, new AbortController().signal).entries);

    await probe.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'WRITE');
    const paused = Date.now();
    const end = await entries.next();
    expect(end.value?.t).toBe('result');
    // The store is on its way but held by the paused server; the client has the reply meanwhile.
    expect(Date.now() - paused).toBeLessThan(PAUSE_MS / 2);
    expect(await probe.keys(`${prefix}:cache:x:*`)).toEqual([]);
    const inflight = await probe.keys(`${prefix}:{flight}:inflight:*`);
    expect(inflight).toHaveLength(1);

    // Nothing after the reply waits for the store (the Responses door stores its response then)...
    expect((await entries.next()).done).toBe(true);
    expect(Date.now() - paused).toBeLessThan(PAUSE_MS / 2);
    // ...but the claim goes only once the store is done: until then an identical request would follow this job.
    const next = cache.lookup(request, 'alice', undefined, Promise.resolve(admit()));
    await expect.poll(() => probe.keys(`${prefix}:{flight}:inflight:*`), { timeout: 5_000 }).toEqual([]);
    expect(Date.now() - paused).toBeGreaterThanOrEqual(PAUSE_MS - 50);
    // Sent after the store on the same connection, the next lookup finds the reply.
    expect((await next).status).toBe('HIT');
    expect(await probe.keys(`${prefix}:cache:x:*`)).toHaveLength(1);
  } finally {
    await probe.call('CLIENT', 'UNPAUSE');
    await cache.close();
  }
});
