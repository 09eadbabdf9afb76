import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.ts';
import { redisBaseOptions } from '../../src/redis/connections.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { freePort, startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';
import { countBy, sendChat, trafficLoop, type Outcome } from '../support/traffic.ts';

/**
 * Redis Sentinel: a master, a replica and a sentinel on loopback; the API and
 * worker processes know only the sentinel (REDIS_SENTINELS). A failover in
 * the middle of traffic (`SENTINEL FAILOVER`) loses no request: each one gets
 * its answer or the error envelope, none hangs or sees a dropped connection,
 * and the same processes serve from the new master without a restart.
 */

const KEY = 'gw_e2e_redis_sentinel_key_0123456789';
const dir = mkdtempSync(join(tmpdir(), 'gw-sentinel-'));
let master: RedisServer;
let replica: RedisServer;
let sentinel: ChildProcess;
let sentinelPort = 0;
let probe: Redis;
let upstream: FakeUpstream;
let gateway: Gateway;

async function masterPort(): Promise<number> {
  const [, port] = (await probe.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster')) as [string, string];
  return Number(port);
}

beforeAll(async () => {
  master = await startRedisServer();
  replica = await startRedisServer({
    args: ['--save', '', '--appendonly', 'no', '--replicaof', '127.0.0.1', String(master.port)],
  });
  sentinelPort = await freePort();
  const conf = join(dir, 'sentinel.conf');
  writeFileSync(
    conf,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor mymaster 127.0.0.1 ${master.port} 1`,
      'sentinel down-after-milliseconds mymaster 2000',
      'sentinel failover-timeout mymaster 10000',
      '',
    ].join('\n'),
  );
  sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  probe = new Redis({ host: '127.0.0.1', port: sentinelPort, retryStrategy: () => 100 });
  probe.on('error', () => {});
  // The sentinel must know the replica, in sync, before it can fail over to it.
  await waitFor(
    async () => {
      const replicas = (await probe.call('SENTINEL', 'REPLICAS', 'mymaster').catch(() => [])) as string[][];
      return replicas.some(
        (fields) =>
          fields[fields.indexOf('flags') + 1] === 'slave' && fields[fields.indexOf('master-link-status') + 1] === 'ok',
      );
    },
    20_000,
    'the sentinel to see the replica',
  );
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-a-secret', record: false });
  gateway = await startGateway({
    env: {
      REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
      REDIS_SENTINEL_NAME: 'mymaster',
      // Unused with sentinels: a port nothing listens on proves it.
      REDIS_PORT: '9',
      REDIS_KEY_PREFIX: 'gwsentinel',
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'upstream-a-secret',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '1000000',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          timeout_ms: 8_000,
          queue_timeout_ms: 8_000,
          stream_idle_timeout_ms: 5_000,
        },
      ],
    },
    providers: ['provider_a'],
  });
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  probe?.disconnect();
  if (sentinel && sentinel.exitCode === null) {
    sentinel.kill('SIGTERM');
    await once(sentinel, 'exit');
  }
  await replica?.stop('SIGTERM');
  await master?.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('Redis Sentinel', () => {
  it('finds the master through the sentinel and survives a failover in the middle of traffic without a restart', async () => {
    const client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
    const first = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'through the sentinel' }] })
      .withResponse();
    expect(first.data.choices[0]?.message.content).toBe('Echo: through the sentinel');
    const onMaster = new Redis({ host: '127.0.0.1', port: master.port });
    expect((await onMaster.keys('gwsentinel:cache:x:*')).length).toBe(1);
    onMaster.disconnect();

    let failedOverAt = 0;
    let stopAt = Number.POSITIVE_INFINITY;
    const started = Date.now();
    const traffic = trafficLoop(
      6,
      () => Date.now() > stopAt,
      (i) =>
        sendChat(
          gateway.baseUrl,
          KEY,
          { model: 'a-4o', stream: i % 2 === 0, messages: [{ role: 'user', content: `failover traffic ${i}` }] },
          25_000,
        ),
    );
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await probe.call('SENTINEL', 'FAILOVER', 'mymaster')).toBe('OK');
    await waitFor(async () => (await masterPort()) === replica.port, 20_000, 'the sentinel to promote the replica');
    failedOverAt = Date.now();
    // Traffic goes on for a while on the new master.
    stopAt = failedOverAt + 6_000;
    const outcomes: Outcome[] = await traffic;

    const tally = countBy(
      outcomes,
      (o) => `${o.status}${o.code ? `/${o.code}` : ''}${o.streamEnd ? `/${o.streamEnd}` : ''}`,
    );
    console.log(`failover after ${failedOverAt - started} ms of traffic; outcomes: ${JSON.stringify(tally)}`);
    // No request lost: each one got its answer or the error envelope (a code), none a dropped connection or a hang.
    for (const o of outcomes) {
      expect(o.status, JSON.stringify(o)).toBeGreaterThan(0);
      if (o.status === 200) expect(o.streamEnd ?? 'done').not.toBe('cut');
      else expect([503, 504], JSON.stringify(o)).toContain(o.status);
      if (o.status !== 200) expect(o.code, JSON.stringify(o)).toBeDefined();
    }
    // Recovered without a restart: the last seconds of traffic were all answered.
    const late = outcomes.filter((o) => o.startedAt > failedOverAt + 3_000);
    expect(late.length).toBeGreaterThan(5);
    expect(
      late.every((o) => o.status === 200 && (o.streamEnd ?? 'done') === 'done'),
      JSON.stringify(late.filter((o) => o.status !== 200)),
    ).toBe(true);
    expect(gateway.api.child.exitCode).toBeNull();
    expect(gateway.workers.get('provider_a')?.every((w) => w.child.exitCode === null)).toBe(true);

    // The new master holds the new entries; the cache answers from it.
    const after = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'after the failover' }] })
      .withResponse();
    expect(after.response.headers.get('x-cache')).toBe('MISS');
    const hit = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'after the failover' }] })
      .withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
  }, 120_000);

  it('reads the sentinels and their credentials from the settings, and refuses an entry that is not host:port', () => {
    const options = redisBaseOptions(
      loadSettings({
        REDIS_SENTINELS: '10.0.0.1:26379, [::1]:26380',
        REDIS_SENTINEL_NAME: 'cache',
        REDIS_SENTINEL_PASSWORD: 's3',
        REDIS_URL: 'redis://app:pw@ignored:1/2',
      }),
    );
    expect(options).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      name: 'cache',
      sentinelPassword: 's3',
      username: 'app',
      password: 'pw',
      db: 2,
    });
    expect(options.host).toBeUndefined();
    expect(() => redisBaseOptions(loadSettings({ REDIS_SENTINELS: 'sentinel-without-port' }))).toThrowError(
      /REDIS_SENTINELS: 'sentinel-without-port' is not host:port/,
    );
  });
});
