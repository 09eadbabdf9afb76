import { hostname } from 'node:os';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskApiKey } from '../../src/auth/api-key.ts';
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

/**
 * Issue 6 through running processes: /metrics, /stats, the request log,
 * METRICS_PORT and PROMETHEUS_METRICS_ENABLED=false, LOG_FORMAT=text with
 * DEBUG. Three API processes and one worker share one Redis prefix, so /stats
 * must show the same totals from every API.
 */

const KEY_A = 'gw_AAobs_key_alpha_0123456789abcdefghijklmAAAA';
const KEY_B = 'gw_BBobs_key_bravo_0123456789abcdefghijklmBBBB';
/** Sees every key's entry in /stats top_users (other keys see only their own). */
const ADMIN_KEY = 'gw_CCobs_key_admin_0123456789abcdefghijklmCCCC';
const UPSTREAM_KEY = 'sk-upstream-secret-observability-4242';
const PII = 'jane.observability@example.com';
const RATE_LIMIT = 8;

const prefix = uniquePrefix('obs');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
/** Second API: same Redis, METRICS_PORT set apart. */
let api2: GatewayProcess;
let api2Url: string;
let metricsPortUrl: string;
/** Third API: metrics disabled, text logs, DEBUG. */
let api3: GatewayProcess;
let api3Url: string;

const env = {
  REDIS_KEY_PREFIX: prefix,
  API_KEYS: `${KEY_A},${KEY_B}`,
  ADMIN_API_KEYS: ADMIN_KEY,
  PROVIDER_A_API_KEY: UPSTREAM_KEY,
  PROVIDER_C_API_KEY: 'sk-upstream-c-unused-9876',
  SEMANTIC_CACHE_ENABLED: 'false',
  RATE_LIMIT_REQUESTS: String(RATE_LIMIT),
  RATE_LIMIT_WINDOW: '600',
};

async function startApi(extra: Record<string, string>): Promise<{ proc: GatewayProcess; url: string }> {
  const port = await freePort();
  const proc = spawnGatewayProcess('src/server.ts', [], {
    ...env,
    LOG_LEVEL: 'info',
    CONFIG_PATH: gateway.configPath,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...extra,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (proc.child.exitCode !== null) throw new Error(`API exited:\n${proc.output()}`);
      return (await fetch(`${url}/health/live`)).status !== 0;
    },
    20_000,
    `API on ${port}:\n${proc.output()}`,
  );
  return { proc, url };
}

/** GET with a key (KEY_A unless told; `null` sends none). */
function get(url: string, key: string | null = KEY_A): Promise<Response> {
  return fetch(url, { headers: key ? { 'x-api-key': key } : {} });
}

/** Value of one sample line of the exposition text, e.g. `name{a="b"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The JSON log lines of a process. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

interface Stats {
  total_requests: number;
  cache_stats: {
    exact_cache: { hits: number; misses: number; hit_rate: number };
    semantic_cache: { hits: number; misses: number; hit_rate: number };
  };
  provider_stats: Record<string, { requests: number; tokens: number; avg_latency: number }>;
  rate_limit_stats: { requests_throttled: number; top_users: { api_key: string; requests: number }[] };
}

const ids: Record<string, string> = {};
const usages: OpenAI.CompletionUsage[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  gateway = await startGateway({
    env,
    apiEnv: { LOG_LEVEL: 'info' },
    config: {
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] },
        {
          name: 'provider_c',
          api_key_env: 'PROVIDER_C_API_KEY',
          base_url: upstream.url,
          models: ['c-sonnet-4-20250514'],
        },
      ],
    },
    providers: ['provider_a'],
  });
  const metricsPort = await freePort();
  const second = await startApi({ METRICS_PORT: String(metricsPort) });
  api2 = second.proc;
  api2Url = second.url;
  metricsPortUrl = `http://127.0.0.1:${metricsPort}`;
  const third = await startApi({
    PROMETHEUS_METRICS_ENABLED: 'false',
    LOG_FORMAT: 'text',
    DEBUG: 'true',
    LOG_LEVEL: 'warning',
  });
  api3 = third.proc;
  api3Url = third.url;

  // The traffic every test below looks at. KEY_A: 5 /v1 requests; KEY_B: 10, the last 2 throttled.
  const body = { model: 'a-4o', messages: [{ role: 'user', content: `obs hello, I am ${PII}` }] };
  const post = (url: string, key = KEY_A) =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
    });
  const miss = await post(gateway.baseUrl);
  expect(miss.status).toBe(200);
  ids.miss = miss.headers.get('x-request-id')!;
  usages.push(((await miss.json()) as OpenAI.ChatCompletion).usage!);
  const hit = await post(gateway.baseUrl);
  expect(hit.status).toBe(200);
  expect(hit.headers.get('x-cache')).toBe('HIT');
  ids.hit = hit.headers.get('x-request-id')!;

  const client2 = new OpenAI({ baseURL: `${api2Url}/v1`, apiKey: KEY_A, maxRetries: 0 });
  const stream = await client2.chat.completions.create({
    model: 'a-4o',
    messages: [{ role: 'user', content: 'obs stream please' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage);
  expect(usages).toHaveLength(2);

  expect((await get(`${gateway.baseUrl}/v1/models/a-4o`)).status).toBe(200);
  expect((await get(`${gateway.baseUrl}/v1/models/does-not-exist-xyz`)).status).toBe(404);
  expect((await get(`${gateway.baseUrl}/nope/abc/123`)).status).toBe(404);
  const unauthorized = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-api-key': 'gw_wrong_key' },
    body: '{}',
  });
  expect(unauthorized.status).toBe(401);
  ids.unauthorized = unauthorized.headers.get('x-request-id')!;

  const statuses: number[] = [];
  for (let i = 0; i < RATE_LIMIT + 2; i++) statuses.push((await get(`${api3Url}/v1/models`, KEY_B)).status);
  expect(statuses.filter((s) => s === 429)).toHaveLength(2);
}, 120_000);

afterAll(async () => {
  await Promise.all([gateway?.stop(), api2?.kill(), api3?.kill()]);
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('/stats', () => {
  // KEY_A, KEY_B, the 401, and startGateway's own readiness probe of /v1/models (answered 401).
  const expectedTotal = 5 + (RATE_LIMIT + 2) + 1 + 1;

  it('shows the same totals from every API process (aggregated in Redis)', async () => {
    let records: Stats[] = [];
    await waitFor(
      async () => {
        records = await Promise.all(
          [gateway.baseUrl, api2Url, api3Url].map(async (u) => (await (await get(`${u}/stats`)).json()) as Stats),
        );
        // Counters reach Redis in batches (cache counters apart from request counters): wait until every
        // process reads the same record, not only the request totals.
        return (
          records.every((r) => r.total_requests === expectedTotal && r.provider_stats.provider_a!.requests === 2) &&
          records.every((r) => JSON.stringify(r) === JSON.stringify(records[0]))
        );
      },
      10_000,
      'stats to settle',
    );
    expect(records[1]).toEqual(records[0]);
    expect(records[2]).toEqual(records[0]);
  });

  it('has every field of the statistics record with the right figures', async () => {
    const stats = (await (await get(`${gateway.baseUrl}/stats`, ADMIN_KEY)).json()) as Stats;
    expect(stats.total_requests).toBe(expectedTotal);

    const exact = stats.cache_stats.exact_cache;
    expect(exact.hits).toBe(1);
    expect(exact.misses).toBeGreaterThanOrEqual(1);
    expect(exact.hit_rate).toBeCloseTo(exact.hits / (exact.hits + exact.misses), 4);
    expect(stats.cache_stats.semantic_cache).toEqual({ hits: 0, misses: 0, hit_rate: 0 });

    // The cache hit never reached the provider: two upstream calls, their tokens, a plausible latency.
    const a = stats.provider_stats.provider_a!;
    expect(a.requests).toBe(2);
    expect(a.tokens).toBe(usages.reduce((sum, u) => sum + u.total_tokens, 0));
    expect(a.avg_latency).toBeGreaterThan(0);
    expect(a.avg_latency).toBeLessThan(5);
    expect(stats.provider_stats.provider_c).toEqual({ requests: 0, tokens: 0, avg_latency: 0 });

    expect(stats.rate_limit_stats.requests_throttled).toBe(2);
    expect(stats.rate_limit_stats.top_users.slice(0, 2)).toEqual([
      { api_key: maskApiKey(KEY_B), requests: RATE_LIMIT + 2 },
      { api_key: maskApiKey(KEY_A), requests: 5 },
    ]);
  });

  it('shows keys only masked and needs a key', async () => {
    const text = await (await get(`${gateway.baseUrl}/stats`)).text();
    expect(text).not.toContain(KEY_A);
    expect(text).not.toContain(KEY_B);
    expect(text).not.toContain(KEY_A.slice(0, 20));
    const res = await get(`${gateway.baseUrl}/stats`, null);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
  });
});

describe('/metrics', () => {
  it('exposes the four core metrics with bounded labels', async () => {
    const res = await get(`${gateway.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();

    expect(text).toContain('# TYPE gateway_requests_total counter');
    expect(sample(text, 'gateway_requests_total{method="POST",endpoint="/v1/chat/completions",status="200"}')).toBe(2);
    expect(sample(text, 'gateway_requests_total{method="POST",endpoint="/v1/chat/completions",status="401"}')).toBe(1);
    expect(sample(text, 'gateway_requests_total{method="GET",endpoint="/v1/models/{model}",status="200"}')).toBe(1);
    expect(sample(text, 'gateway_requests_total{method="GET",endpoint="/v1/models/{model}",status="404"}')).toBe(1);
    expect(sample(text, 'gateway_requests_total{method="GET",endpoint="unmatched",status="404"}')).toBe(1);
    // Raw paths never become label values.
    expect(text).not.toContain('does-not-exist-xyz');
    expect(text).not.toContain('/nope');

    expect(text).toContain('# TYPE gateway_request_duration_seconds histogram');
    for (const le of ['0.1', '0.5', '1', '+Inf']) {
      expect(sample(text, `gateway_request_duration_seconds_bucket{le="${le}"}`)).toBeGreaterThanOrEqual(1);
    }
    expect(sample(text, 'gateway_cache_hits_total{cache_type="exact"}')).toBe(1);
    expect(sample(text, 'gateway_cache_hits_total{cache_type="semantic"}')).toBe(0);
    // This API relayed one upstream reply (the other was the cache hit).
    expect(sample(text, 'gateway_tokens_used_total{provider="provider_a",model="a-4o",type="prompt"}')).toBe(
      usages[0]!.prompt_tokens,
    );
    expect(sample(text, 'gateway_tokens_used_total{provider="provider_a",model="a-4o",type="completion"}')).toBe(
      usages[0]!.completion_tokens,
    );
    // The e-mail address in the prompt was found and redacted (DLP on by default); the value itself is nowhere.
    expect(
      sample(text, 'gateway_dlp_findings_total{entity_type="EMAIL_ADDRESS",action="redact"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('adds queue depth, queue wait, time to first token and process defaults', async () => {
    const text = await (await get(`${api2Url}/metrics`)).text();
    expect(sample(text, 'gateway_queue_depth{provider="provider_a"}')).toBe(0);
    expect(sample(text, 'gateway_queue_depth{provider="provider_c"}')).toBe(0);
    expect(sample(text, 'gateway_queue_wait_seconds_count{provider="provider_a"}')).toBe(1);
    expect(sample(text, 'gateway_time_to_first_token_seconds_count{provider="provider_a"}')).toBe(1);
    expect(sample(text, 'gateway_tokens_used_total{provider="provider_a",model="a-4o",type="completion"}')).toBe(
      usages[1]!.completion_tokens,
    );
    expect(text).toContain('# TYPE gateway_dlp_findings_total counter');
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('never exposes keys, upstream keys or request content', async () => {
    for (const url of [gateway.baseUrl, api2Url]) {
      const text = await (await get(`${url}/metrics`)).text();
      for (const secret of [KEY_A, KEY_B, UPSTREAM_KEY, PII, 'obs hello']) expect(text).not.toContain(secret);
    }
  });

  it('is served on METRICS_PORT too, with the same authentication, and nothing else there', async () => {
    const res = await get(`${metricsPortUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('gateway_requests_total');
    expect((await get(`${metricsPortUrl}/metrics`, null)).status).toBe(401);
    const other = await get(`${metricsPortUrl}/stats`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect((await get(`${api2Url}/metrics`)).status).toBe(200);
  });

  it('answers 404 with the error envelope when PROMETHEUS_METRICS_ENABLED=false', async () => {
    const res = await get(`${api3Url}/metrics`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as { error: { code: string; type: string }; request_id: string };
    expect(body.error.code).toBe('not_found');
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
  });
});

describe('request log', () => {
  it('writes one JSON line per request with id, owner, model, provider, cache status, status and timings', async () => {
    await waitFor(() => gateway.api.output().includes(ids.unauthorized!), 5_000, 'log lines');
    const lines = jsonLines(gateway.api.output());
    const of = (id: string) => lines.filter((l) => l.requestId === id);
    expect(of(ids.miss!)).toHaveLength(1);
    const miss = of(ids.miss!)[0]!;
    expect(miss).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      model: 'a-4o',
      provider: 'provider_a',
      cache: 'MISS',
      msg: expect.stringMatching(/^POST \/v1\/chat\/completions 200 [\d.]+ms$/),
    });
    expect(miss.owner).toMatch(/^env:[0-9a-f]{12}$/);
    expect(miss.durationMs).toEqual(expect.any(Number));
    expect(miss.queueMs).toEqual(expect.any(Number));
    expect(miss.upstreamMs).toEqual(expect.any(Number));
    expect(miss.promptTokens).toBe(usages[0]!.prompt_tokens);
    expect(miss.trace_id).toBeUndefined(); // tracing is off here

    expect(of(ids.hit!)[0]).toMatchObject({ status: 200, cache: 'HIT', model: 'a-4o' });
    const rejected = of(ids.unauthorized!)[0]!;
    expect(rejected).toMatchObject({ status: 401, errorCode: 'invalid_api_key' });
    expect(rejected.owner).toBeUndefined();
    // Every line of every process names its host.
    const workerLines = [...gateway.workers.values()].flat().flatMap((w) => jsonLines(w.output()));
    expect(workerLines.length).toBeGreaterThan(0);
    for (const line of [...lines, ...workerLines]) expect(line.hostname).toBe(hostname());
  });

  it('never contains keys, upstream keys or message content, in the API or the worker', () => {
    const outputs = [
      gateway.api.output(),
      api2.output(),
      api3.output(),
      ...[...gateway.workers.values()].flat().map((w) => w.output()),
    ];
    for (const output of outputs) {
      for (const secret of [KEY_A, KEY_B, UPSTREAM_KEY, PII, 'obs hello', 'gw_wrong_key'])
        expect(output).not.toContain(secret);
    }
  });

  it('is readable text with LOG_FORMAT=text, and DEBUG raises the detail', async () => {
    const res = await fetch(`${api3Url}/v1/models`, {
      headers: { 'x-api-key': KEY_A, 'user-agent': 'obs-test-agent/1.0' },
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    await waitFor(() => api3.output().includes(id), 5_000, 'the text log line');
    const line = api3
      .output()
      .split('\n')
      .find((l) => l.includes(id))!;
    // pino-pretty: "[time] INFO (gateway-api/pid on host): GET /v1/models 200 1.2ms {fields}" on one line, not a JSON object.
    expect(line.startsWith('{')).toBe(false);
    expect(line).toMatch(/INFO \(gateway-api\/\d+ on [^)]+\): GET \/v1\/models 200 [\d.]+ms/);
    // DEBUG=true overrides LOG_LEVEL=warning and adds harmless request headers and the route pattern.
    expect(line).toContain('obs-test-agent/1.0');
    expect(line).toContain('endpoint');
  });
});
