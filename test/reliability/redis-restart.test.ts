import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { countBy, sendChat, trafficLoop } from '../support/traffic.ts';

/** Redis dies mid-traffic and comes back empty: no request hangs, and the gateway heals by itself. */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING redis-restart: no redis-server binary on PATH ***\n');

const KEY = 'gw_redis_restart_key_012345';
let redisServer: RedisServer;
let gateway: Gateway;
let upstream: FakeUpstream;

describe.skipIf(!hasRedisServer)('Redis restart mid-traffic', () => {
  beforeAll(async () => {
    redisServer = await startRedisServer();
    upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up' });
    upstream.setBehavior({ latencyMs: 20 });
    gateway = await startGateway({
      env: {
        REDIS_PORT: String(redisServer.port),
        REDIS_KEY_PREFIX: 'gwrel',
        API_KEYS: KEY,
        PROVIDER_A_API_KEY: 'up',
        DLP_ENABLED: 'false',
        SEMANTIC_CACHE_ENABLED: 'false',
        RATE_LIMIT_REQUESTS: '1000000',
        WORKER_LOCK_DURATION_MS: '2000',
        WORKER_STALLED_INTERVAL_MS: '500',
      },
      config: {
        providers: [
          {
            name: 'provider_a',
            api_key_env: 'PROVIDER_A_API_KEY',
            base_url: upstream.url,
            models: ['a-4o'],
            timeout_ms: 3000,
            queue_timeout_ms: 3000,
          },
        ],
      },
      providers: ['provider_a'],
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
    await redisServer?.stop();
  });

  it('answers every request (success or a clear error), then recovers', async () => {
    const t0 = Date.now();
    let restarted = 0;
    const chaos = (async () => {
      await new Promise((r) => setTimeout(r, 1500));
      await redisServer.stop();
      await new Promise((r) => setTimeout(r, 1500));
      await redisServer.start();
      restarted = Date.now();
    })();
    const outcomes = await trafficLoop(
      8,
      () => restarted > 0 && Date.now() - restarted > 4000,
      (i) =>
        sendChat(
          gateway.baseUrl,
          KEY,
          { model: 'a-4o', stream: i % 2 === 0, messages: [{ role: 'user', content: `req ${i}` }] },
          15_000,
        ),
    );
    await chaos;
    const summary = countBy(
      outcomes,
      (o) => `${o.status}${o.code ? ` ${o.code}` : ''}${o.streamEnd ? ` ${o.streamEnd}` : ''}`,
    );
    console.log('redis restart outcomes:', summary, `in ${Date.now() - t0} ms`);
    // Nothing hung, nothing crashed with a 500.
    expect(outcomes.filter((o) => o.status === -1)).toHaveLength(0);
    expect(outcomes.filter((o) => o.status === 500)).toHaveLength(0);
    for (const o of outcomes) expect([200, 502, 503, 504]).toContain(o.status);
    // No stream ends silently: [DONE] or an error event.
    expect(outcomes.filter((o) => o.streamEnd === 'cut')).toHaveLength(0);
    // The outage was seen...
    expect(outcomes.some((o) => o.status === 503 || o.status === 504 || o.streamEnd === 'error')).toBe(true);
    // ...and the last seconds after the restart all succeed again.
    const late = outcomes.filter((o) => o.startedAt > restarted + 2000);
    expect(late.length).toBeGreaterThan(10);
    expect(late.every((o) => o.status === 200 && (o.streamEnd === undefined || o.streamEnd === 'done'))).toBe(true);
  });
});
