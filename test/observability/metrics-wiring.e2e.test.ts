import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { freePort, startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * The metrics an operator alerts and draws on, through the real processes:
 * the worker's own /metrics (WORKER_METRICS_PORT) counting upstream attempts
 * by outcome and retries, the API's per-model request counts.
 */

const KEY = 'gw_metrics_wiring_key_0123456789abcdefghijkl';
const UPSTREAM_KEY = 'sk-upstream-secret-metrics-wiring-7777';
const prefix = uniquePrefix('metrics-wiring');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
let workerMetricsUrl: string;
let client: OpenAI;

/** Value of one sample line of the exposition text, e.g. `name{a="b"}`; 0 when absent. */
function sampleOf(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const ask = (content: string) => client.chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content }] });

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  const metricsPort = await freePort();
  workerMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  gateway = await startGateway({
    env: { REDIS_KEY_PREFIX: prefix, API_KEYS: KEY, PROVIDER_A_API_KEY: UPSTREAM_KEY, SEMANTIC_CACHE_ENABLED: 'false', CACHE_ENABLED: 'false', WORKER_METRICS_PORT: String(metricsPort), HOST: '127.0.0.1' },
    config: { providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'], max_retries: 1, timeout_ms: 400 }] },
    providers: ['provider_a'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('worker /metrics', () => {
  it('counts every upstream attempt by outcome, and the retries', async () => {
    const series = (outcome: string) => `gateway_upstream_attempts_total{provider="provider_a",outcome="${outcome}"}`;
    const before = await (await fetch(workerMetricsUrl)).text();
    expect(sampleOf(before, series('ok'))).toBe(0);
    expect(before).toContain('process_cpu_seconds_total');

    await ask('metrics plain');
    upstream.setBehavior({ failNext: { count: 1, status: 503 } });
    await ask('metrics retried'); // a 503, retried, then ok
    upstream.setBehavior({ failNext: { count: 1, status: 400 } });
    await expect(ask('metrics refused')).rejects.toMatchObject({ status: 400 });
    upstream.setBehavior({ latencyMs: 1_000 });
    await expect(ask('metrics slow')).rejects.toMatchObject({ status: 504 });
    upstream.setBehavior({ latencyMs: undefined, resetConnection: true });
    await expect(ask('metrics reset')).rejects.toMatchObject({ status: 502 }); // two connection errors: max_retries 1
    upstream.setBehavior({ resetConnection: undefined });

    const after = await (await fetch(workerMetricsUrl)).text();
    expect(sampleOf(after, series('ok'))).toBe(2);
    expect(sampleOf(after, series('retryable_status'))).toBe(1);
    expect(sampleOf(after, series('status'))).toBe(1);
    expect(sampleOf(after, series('timeout'))).toBe(1);
    expect(sampleOf(after, series('connection_error'))).toBe(2);
    expect(sampleOf(after, 'gateway_upstream_retries_total{provider="provider_a",reason="retryable_status"}')).toBe(1);
    expect(sampleOf(after, 'gateway_upstream_retries_total{provider="provider_a",reason="connection_error"}')).toBe(1);
    expect(after).not.toContain(UPSTREAM_KEY);
    expect(after).not.toContain('metrics plain');
  });

  it('serves only /metrics on that port', async () => {
    expect((await fetch(workerMetricsUrl.replace('/metrics', '/health'))).status).toBe(404);
  });
});

describe('API /metrics', () => {
  it('counts chat requests per configured model and status', async () => {
    const text = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } })).text();
    expect(sampleOf(text, 'gateway_model_requests_total{model="a-4o",status="200"}')).toBe(2);
    expect(sampleOf(text, 'gateway_model_requests_total{model="a-4o",status="504"}')).toBe(1);
    expect(text).not.toMatch(/gateway_model_requests_total\{model="(?!a-4o"|other")/);
  });
});
