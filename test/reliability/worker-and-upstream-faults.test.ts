import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamBehavior } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { countBy, sendChat, type Outcome } from '../support/traffic.ts';

/**
 * Faults under concurrent traffic: workers killed mid-job, and every upstream
 * failure mode. For each: no request lost or hung, the right error, recovery.
 */

const KEY = 'gw_reliability_key_0123456789';
const prefix = uniquePrefix('reliability');
const redis = testRedis();
let gateway: Gateway;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up' });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'up',
      DLP_ENABLED: 'false',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '1000000',
      WORKER_LOCK_DURATION_MS: '1500',
      WORKER_STALLED_INTERVAL_MS: '500',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          timeout_ms: 1500,
          stream_idle_timeout_ms: 1000,
          queue_timeout_ms: 8000,
          max_retries: 2,
        },
      ],
    },
    providers: ['provider_a'],
    workersPerProvider: 2,
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function burst(count: number, label: string, stream: (i: number) => boolean): Promise<Outcome[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      sendChat(
        gateway.baseUrl,
        KEY,
        {
          model: 'a-4o',
          stream: stream(i),
          messages: [{ role: 'user', content: `${label} ${i} ${Math.random()} alpha beta gamma delta` }],
        },
        20_000,
      ),
    ),
  );
}

function expectNoHang(outcomes: Outcome[]): void {
  expect(
    outcomes.filter((o) => o.status === -1 || o.status === 0),
    'hung or dropped',
  ).toHaveLength(0);
  expect(
    outcomes.filter((o) => o.streamEnd === 'cut'),
    'stream ended without [DONE] or error',
  ).toHaveLength(0);
}

describe('worker killed mid-job under load', () => {
  it('every request is answered: re-run by the surviving workers, or a clear error for streams already under way', async () => {
    upstream.reset();
    upstream.setBehavior({ latencyMs: 600, chunkDelayMs: 50 });
    const traffic = burst(24, 'kill', (i) => i % 3 === 0);
    await new Promise((r) => setTimeout(r, 300));
    const [victim] = gateway.workers.get('provider_a') ?? [];
    await victim?.kill('SIGKILL');
    await gateway.addWorker('provider_a');
    const outcomes = await traffic;
    console.log(
      'worker kill outcomes:',
      countBy(outcomes, (o) => `${o.status} ${o.code ?? ''}${o.streamEnd ?? ''}`),
    );
    expectNoHang(outcomes);
    for (const o of outcomes) {
      if (o.status !== 200) expect(o.code).toBe('provider_error');
      if (o.streamEnd === 'error') expect(o.status).toBe(200);
    }
    expect(outcomes.filter((o) => o.status === 200 && o.streamEnd !== 'error').length).toBeGreaterThanOrEqual(18);
    upstream.reset();
  });
});

const cases: {
  name: string;
  behavior: FakeUpstreamBehavior;
  expectStatus: number[];
  expectCode?: string;
  streamEnd?: Outcome['streamEnd'];
}[] = [
  {
    name: '429 with Retry-After: 1 (honoured, retried)',
    behavior: { failNext: { count: 4, status: 429, retryAfter: 1 } },
    expectStatus: [200],
  },
  {
    name: '500 on every attempt',
    behavior: { failNext: { count: 1000, status: 500 } },
    expectStatus: [502],
    expectCode: 'provider_error',
  },
  { name: 'upstream hangs', behavior: { hang: true }, expectStatus: [504], expectCode: 'provider_timeout' },
  {
    name: 'connection reset on every attempt',
    behavior: { resetConnection: true },
    expectStatus: [502],
    expectCode: 'provider_error',
  },
  { name: 'stream cut half-way', behavior: { cutStreamAfterChunks: 3 }, expectStatus: [200, 502], streamEnd: 'error' },
  { name: 'malformed chunk', behavior: { malformedChunkAt: 2 }, expectStatus: [200, 502], streamEnd: 'error' },
];

describe.each(cases)('upstream fault: $name', ({ behavior, expectStatus, expectCode, streamEnd }) => {
  it('gives every client the right outcome, then recovers', async () => {
    upstream.reset();
    upstream.setBehavior(behavior);
    const streamedOnly = streamEnd !== undefined;
    const outcomes = await burst(12, 'fault', (i) => streamedOnly || i % 2 === 0);
    expectNoHang(outcomes);
    for (const o of outcomes) {
      expect(expectStatus).toContain(o.status);
      if (expectCode && o.status !== 200) expect(o.code).toBe(expectCode);
      if (streamEnd && o.status === 200) expect(o.streamEnd).toBe(streamEnd);
    }
    upstream.reset();
    const healed = await burst(6, 'healed', (i) => i % 2 === 0);
    for (const o of healed) {
      expect(o.status).toBe(200);
      if (o.streamEnd) expect(o.streamEnd).toBe('done');
    }
  });
});
