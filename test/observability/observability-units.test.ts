import type { Request, Response } from 'express';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, maskApiKey } from '../../src/auth/api-key.ts';
import { CacheStats } from '../../src/cache/cache-stats.ts';
import { cacheKeys } from '../../src/cache/redis-keys.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { EndpointLabeler } from '../../src/observability/endpoint-label.ts';
import { GatewayMetrics, REQUEST_DURATION_BUCKETS } from '../../src/observability/metrics.ts';
import { noteReplyEntry, startReplyFacts, type ReplyFacts } from '../../src/pipeline/reply-facts.ts';
import type { RequestContext } from '../../src/pipeline/request-context.ts';
import { requestLogFields } from '../../src/observability/request-log.ts';
import { summarize, type RequestSummary } from '../../src/observability/request-summary.ts';
import { toGatewayError } from '../../src/http/error-handler.ts';
import { StatsStore } from '../../src/observability/stats-store.ts';
import { RateLimitStats } from '../../src/ratelimit/rate-limit-stats.ts';
import { SlidingWindowLimiter } from '../../src/ratelimit/sliding-window-limiter.ts';
import { waitFor } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { NOOP_SPAN } from '../../src/observability/tracing/trace-span.ts';

const redis = testRedis();
const prefix = uniquePrefix('obs-units');

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function req(path: string, routePath?: string): Request {
  return { path, route: routePath ? { path: routePath } : undefined } as unknown as Request;
}

describe('EndpointLabeler', () => {
  const labeler = new EndpointLabeler([
    '/v1/chat/completions',
    '/v1/models/{model}',
    '/v1/chat/completions/jobs/{id}/cancel',
    '/health',
  ]);

  it('names requests by route pattern, including ones rejected before routing', () => {
    expect(labeler.label(req('/v1/chat/completions'))).toBe('/v1/chat/completions');
    expect(labeler.label(req('/v1/chat/completions/'))).toBe('/v1/chat/completions');
    expect(labeler.label(req('/v1/models/a-4o'))).toBe('/v1/models/{model}');
    expect(labeler.label(req('/v1/chat/completions/jobs/abc123/cancel'))).toBe('/v1/chat/completions/jobs/{id}/cancel');
  });

  it('falls back to the Express route, then to "unmatched", never to the raw path', () => {
    expect(labeler.label(req('/docs/assets/x.js', '/docs/assets/x.js'))).toBe('/docs/assets/x.js');
    expect(labeler.label(req('/things/42', '/things/:id'))).toBe('/things/{id}');
    expect(labeler.label(req('/v1/models/a/b'))).toBe('unmatched');
    expect(labeler.label(req('/random-secret-looking-path'))).toBe('unmatched');
  });
});

describe('GatewayMetrics', () => {
  it('counts requests per model only for models config.yaml lists; every other is "other"', async () => {
    const metrics = new GatewayMetrics({ collectDefaults: false, knownModel: (m) => m === 'a-4o' });
    metrics.modelRequest('a-4o', 200);
    metrics.modelRequest('made-up-model-1', 200);
    metrics.modelRequest('made-up-model-2', 200);
    const text = await metrics.render();
    expect(text).toContain('gateway_model_requests_total{model="a-4o",status="200"} 1');
    expect(text).toContain('gateway_model_requests_total{model="other",status="200"} 2');
    expect(text).not.toContain('made-up-model');
  });

  it('has the documented duration buckets and its own registry per instance', async () => {
    expect(REQUEST_DURATION_BUCKETS).toEqual(expect.arrayContaining([0.1, 0.5, 1.0]));
    const a = new GatewayMetrics({ collectDefaults: false });
    const b = new GatewayMetrics({ collectDefaults: false });
    a.observeRequest({ method: 'GET', endpoint: '/health', status: 200, seconds: 0.3 });
    const text = await a.render();
    expect(text).toContain('gateway_requests_total{method="GET",endpoint="/health",status="200"} 1');
    expect(text).toContain('gateway_request_duration_seconds_bucket{le="0.1"} 0');
    expect(text).toContain('gateway_request_duration_seconds_bucket{le="0.5"} 1');
    expect(text).toContain('gateway_request_duration_seconds_bucket{le="1"} 1');
    expect(text).not.toContain('process_cpu');
    expect(await b.render()).not.toContain('endpoint="/health"');
  });

  it('keeps label values bounded whatever it is given', async () => {
    const m = new GatewayMetrics({ collectDefaults: false });
    m.observeRequest({ method: 'BREW', endpoint: '/x', status: 418, seconds: 0.01 });
    m.dlpFindingsSeen([
      { entityType: 'EMAIL_ADDRESS', action: 'redact', count: 2 },
      { entityType: 'jane@example.com', action: 'redact' },
    ]);
    const text = await m.render();
    expect(text).toContain('gateway_requests_total{method="OTHER",endpoint="/x",status="418"} 1');
    expect(text).toContain('gateway_dlp_findings_total{entity_type="EMAIL_ADDRESS",action="redact"} 2');
    expect(text).toContain('gateway_dlp_findings_total{entity_type="other",action="redact"} 1');
    expect(text).not.toContain('jane@example.com');
  });

  it('reads queue depths at scrape time and still answers when they cannot be read', async () => {
    let depth = 3;
    const ok = new GatewayMetrics({
      collectDefaults: false,
      queueDepths: async () => [{ provider: 'provider_a', depth }],
    });
    expect(await ok.render()).toContain('gateway_queue_depth{provider="provider_a"} 3');
    depth = 0;
    expect(await ok.render()).toContain('gateway_queue_depth{provider="provider_a"} 0');

    const failing = new GatewayMetrics({
      collectDefaults: false,
      queueDepths: () => Promise.reject(new Error('Redis down')),
    });
    const text = await failing.render();
    expect(text).toContain('gateway_requests_total');
    expect(text).not.toMatch(/^gateway_queue_depth\{/m);

    const hanging = new GatewayMetrics({
      collectDefaults: false,
      timeoutMs: 50,
      queueDepths: () => new Promise(() => {}),
    });
    const started = Date.now();
    expect(await hanging.render()).toContain('gateway_requests_total');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('reads live workers and the Redis connection at scrape time, for the alerts', async () => {
    let up = true;
    const m = new GatewayMetrics({
      collectDefaults: false,
      liveWorkers: async () =>
        new Map([
          ['provider_a', 2],
          ['provider_b', 0],
        ]),
      redisUp: () => up,
    });
    let text = await m.render();
    expect(text).toContain('gateway_live_workers{provider="provider_a"} 2');
    expect(text).toContain('gateway_live_workers{provider="provider_b"} 0');
    expect(text).toMatch(/^gateway_redis_up 1$/m);
    up = false;
    text = await m.render();
    expect(text).toMatch(/^gateway_redis_up 0$/m);
    // Heartbeats that cannot be read leave the gauge empty rather than claiming 0 workers.
    const unreadable = new GatewayMetrics({
      collectDefaults: false,
      liveWorkers: () => Promise.reject(new Error('Redis down')),
    });
    expect(await unreadable.render()).not.toMatch(/^gateway_live_workers\{/m);
  });

  it('counts tokens by type, skipping zeros', async () => {
    const m = new GatewayMetrics({ collectDefaults: false });
    m.tokens('provider_a', 'a-4o', 7, 0);
    const text = await m.render();
    expect(text).toContain('gateway_tokens_used_total{provider="provider_a",model="a-4o",type="prompt"} 7');
    expect(text).not.toContain('type="completion"');
  });
});

describe('reply facts', () => {
  const res = (): RequestContext => ({ requestId: 'req_1', startedAt: performance.now() - 20, span: NOOP_SPAN });

  it('take timings from the first entry and usage from the terminal one', () => {
    const r = res();
    startReplyFacts(r, { streamed: true, coalesced: false });
    noteReplyEntry(r, { id: '1', t: 'chunk', d: '{}', q: 4, u: 30 });
    noteReplyEntry(r, { id: '2', t: 'chunk', d: '{}' });
    noteReplyEntry(r, { id: '3', t: 'end', d: '{}', pt: 7, ct: 11 });
    const facts = r.reply as ReplyFacts;
    expect(facts).toMatchObject({
      streamed: true,
      queueMs: 4,
      upstreamMs: 30,
      terminal: 'end',
      promptTokens: 7,
      completionTokens: 11,
    });
    expect(facts.firstTokenMs).toBeGreaterThanOrEqual(20);
    expect(facts.firstTokenMs).toBe(facts.firstEntryMs);
  });

  it('have no time to first token when the first entry is an error, and nothing before dispatch', () => {
    const failed = res();
    startReplyFacts(failed, { streamed: true, coalesced: false });
    noteReplyEntry(failed, { id: '1', t: 'error', d: '{"code":"provider_error","message":"x"}', q: 2, u: 9 });
    expect(failed.reply).toMatchObject({ terminal: 'error', queueMs: 2 });
    expect((failed.reply as ReplyFacts).firstTokenMs).toBeUndefined();

    const cached = res();
    noteReplyEntry(cached, { id: '1', t: 'result', d: '{}', pt: 1, ct: 1 });
    expect(cached.reply).toBeUndefined();
  });
});

describe('request log fields', () => {
  it('name the owner, never the key, and carry the timings', () => {
    const summary: RequestSummary = {
      requestId: 'req_1',
      method: 'POST',
      path: '/v1/chat/completions',
      endpoint: '/v1/chat/completions',
      status: 200,
      durationMs: 12.345,
      aborted: false,
      owner: 'team-a',
      model: 'a-4o',
      provider: 'provider_a',
      cacheStatus: 'MISS',
      reply: {
        streamed: true,
        coalesced: false,
        queueMs: 3,
        upstreamMs: 40,
        firstEntryMs: 50,
        firstTokenMs: 50,
        promptTokens: 5,
        completionTokens: 9,
      },
    };
    expect(requestLogFields(summary)).toEqual({
      requestId: 'req_1',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      durationMs: 12.3,
      owner: 'team-a',
      model: 'a-4o',
      provider: 'provider_a',
      cache: 'MISS',
      queueMs: 3,
      upstreamMs: 40,
      ttftMs: 50,
      promptTokens: 5,
      completionTokens: 9,
    });
  });
});

describe('request summary', () => {
  const labeler = new EndpointLabeler(['/v1/models']);
  const res = (over: Partial<Record<string, unknown>>) =>
    ({
      statusCode: 200,
      writableFinished: true,
      headersSent: true,
      locals: { ctx: { requestId: 'req_9', startedAt: performance.now() - 5, span: NOOP_SPAN } },
      ...over,
    }) as unknown as Response;

  it('reads the owner and facts from the request context, never the key', () => {
    const principal = { keyHash: 'a'.repeat(64), owner: 'team-x', maskedKey: 'gw_abc…wxyz', admin: false };
    const s = summarize(
      req('/v1/models'),
      res({
        locals: {
          ctx: {
            requestId: 'req_9',
            startedAt: performance.now() - 5,
            span: NOOP_SPAN,
            principal,
            cacheStatus: 'MISS',
            errorCode: 'x',
          },
        },
      }),
      labeler,
    );
    expect(s).toMatchObject({
      requestId: 'req_9',
      endpoint: '/v1/models',
      status: 200,
      owner: 'team-x',
      cacheStatus: 'MISS',
      errorCode: 'x',
      aborted: false,
    });
    expect(s.durationMs).toBeGreaterThanOrEqual(4);
    expect(JSON.stringify(s)).not.toContain('aaaaaaaa');
    expect(JSON.stringify(s)).not.toContain('gw_abc');
  });

  it('reports 499 when the client left before any response, and keeps the status once one started', () => {
    expect(summarize(req('/v1/models'), res({ writableFinished: false, headersSent: false }), labeler)).toMatchObject({
      status: 499,
      aborted: true,
    });
    expect(summarize(req('/v1/models'), res({ writableFinished: false, headersSent: true }), labeler)).toMatchObject({
      status: 200,
      aborted: true,
    });
  });
});

describe('StatsStore (real Redis, real cache and rate-limit counters)', () => {
  const storePrefix = `${prefix}:store`;
  const cacheStats = new CacheStats(redis, cacheKeys(storePrefix));
  const limiter = new SlidingWindowLimiter({ redis, prefix: storePrefix });
  const rateLimitStats = new RateLimitStats({ redis, prefix: storePrefix });
  const store = new StatsStore({
    redis,
    prefix: storePrefix,
    cache: cacheStats,
    rateLimit: rateLimitStats,
    topUsers: 2,
  });
  const summary = (path: string): RequestSummary => ({
    requestId: 'r',
    method: 'GET',
    path,
    endpoint: path,
    status: 200,
    durationMs: 1,
    aborted: false,
  });

  beforeEach(async () => {
    await deletePrefix(redis, storePrefix);
  });

  it('reads zeros, with every configured provider, before anything happened', async () => {
    expect(await store.read(['provider_b', 'provider_a'])).toEqual({
      total_requests: 0,
      cache_stats: {
        exact_cache: { hits: 0, misses: 0, hit_rate: 0 },
        semantic_cache: { hits: 0, misses: 0, hit_rate: 0 },
      },
      provider_stats: {
        provider_a: { requests: 0, tokens: 0, avg_latency: 0 },
        provider_b: { requests: 0, tokens: 0, avg_latency: 0 },
      },
      spend_saved: {
        gateway_cache_usd: 0,
        gateway_cache_tokens: 0,
        prompt_cache_usd: 0,
        prompt_cache_read_tokens: 0,
        prompt_cache_write_tokens: 0,
      },
      rate_limit_stats: { requests_throttled: 0, top_users: [] },
    });
  });

  it('counts /v1 requests only, and provider calls from finished jobs', async () => {
    for (const path of ['/v1/chat/completions', '/v1/models', '/health', '/metrics', '/v1x'])
      store.recordRequest(summary(path));
    store.recordJob({
      provider: 'provider_a',
      status: 'ok',
      usage: { prompt_tokens: 10, completion_tokens: 5 },
      upstreamMs: 200,
    });
    store.recordJob({
      provider: 'provider_a',
      status: 'ok',
      usage: { prompt_tokens: 1, completion_tokens: 1 },
      upstreamMs: 400,
    });
    store.recordJob({ provider: 'provider_a', status: 'error', upstreamMs: 5_000 });
    store.recordJob({ provider: 'provider_a', status: 'cancelled', upstreamMs: 1 });
    store.recordJob({ provider: 'provider_a', status: 'skipped', upstreamMs: 1 });
    store.recordJob({
      provider: 'provider_removed',
      status: 'ok',
      usage: { prompt_tokens: 2, completion_tokens: 2 },
      upstreamMs: 100,
    });
    await waitFor(
      async () => (await store.read([])).provider_stats.provider_removed?.requests === 1,
      2_000,
      'counters',
    );
    const stats = await store.read(['provider_a', 'provider_b']);
    expect(stats.total_requests).toBe(2);
    // Failed calls are requests; latency averages the successful ones (200 and 400 ms).
    expect(stats.provider_stats.provider_a).toEqual({ requests: 3, tokens: 17, avg_latency: 0.3 });
    expect(stats.provider_stats.provider_b).toEqual({ requests: 0, tokens: 0, avg_latency: 0 });
    // A provider dropped from config.yaml by a reload still shows what it did.
    expect(stats.provider_stats.provider_removed).toEqual({ requests: 1, tokens: 4, avg_latency: 0.1 });
  });

  it('reads hits / lookups from the cache counters and the busiest keys, masked, from the rate limiter', async () => {
    cacheStats.record('exact', true);
    cacheStats.record('exact', false);
    cacheStats.record('exact', false);
    cacheStats.record('semantic', true, 0.97);
    const keys = [
      'gw_stats_key_one_0123456789abcdefghijklmnopqrstuv',
      'gw_stats_key_two_0123456789abcdefghijklmnopqrstuv',
      'gw_stats_key_tri_0123456789abcdefghijklmnopqrstuv',
    ];
    const rule = { limit: 2, windowMs: 60_000 };
    for (let i = 0; i < 3; i++) await limiter.consume(hashApiKey(keys[0]!), rule, maskApiKey(keys[0]!));
    await limiter.consume(hashApiKey(keys[1]!), rule, maskApiKey(keys[1]!));
    await limiter.consume(hashApiKey(keys[1]!), rule, maskApiKey(keys[1]!));
    await limiter.consume(hashApiKey(keys[2]!), rule, maskApiKey(keys[2]!));
    await waitFor(async () => (await store.read([])).cache_stats.semantic_cache.hits === 1, 2_000, 'cache counters');

    const stats = await store.read([]);
    expect(stats.cache_stats.exact_cache).toEqual({ hits: 1, misses: 2, hit_rate: 0.3333 });
    expect(stats.cache_stats.semantic_cache).toEqual({ hits: 1, misses: 0, hit_rate: 1 });
    expect(stats.rate_limit_stats).toEqual({
      requests_throttled: 1,
      top_users: [
        { api_key: maskApiKey(keys[0]!), requests: 3 },
        { api_key: maskApiKey(keys[1]!), requests: 2 },
      ],
    });
    expect(JSON.stringify(stats)).not.toContain(keys[0]!.slice(8));
  });

  it('masks a full key even if a source hands one over', async () => {
    const leaky = new StatsStore({
      redis,
      prefix: storePrefix,
      rateLimit: {
        read: async () => ({
          requests_throttled: 0,
          top_users: [{ api_key: 'gw_full_key_that_should_never_show_0123456789', requests: 1 }],
        }),
      },
    });
    const stats = await leaky.read([]);
    expect(stats.rate_limit_stats.top_users).toEqual([
      { api_key: maskApiKey('gw_full_key_that_should_never_show_0123456789'), requests: 1 },
    ]);
  });

  it('fails a read with an error the handler answers as 503 when Redis is gone', async () => {
    const dead = testRedis();
    dead.disconnect();
    const err = await new StatsStore({ redis: dead, prefix: storePrefix }).read([]).catch((e: unknown) => e);
    expect(toGatewayError(err, 1024).status).toBe(503);
  });

  it('never throws into the request when Redis is gone; reports the write failure', async () => {
    const dead = testRedis();
    dead.disconnect();
    const errors: Error[] = [];
    const offline = new StatsStore({ redis: dead, prefix: storePrefix, onError: (err) => errors.push(err) });
    expect(() => offline.recordRequest(summary('/v1/models'))).not.toThrow();
    expect(() => offline.recordJob({ provider: 'provider_a', status: 'ok', upstreamMs: 1 })).not.toThrow();
    // Increments are batched: the failed flush that carried both is reported.
    await waitFor(() => errors.length >= 1, 2_000, 'write failure reported');
    expect(errors[0]?.message).toBeTruthy();
  });
});

describe('settings', () => {
  it('leave METRICS_PORT unset by default (the API port serves /metrics) and reject a bad one', () => {
    expect(loadSettings({}).METRICS_PORT).toBeUndefined();
    expect(loadSettings({ METRICS_PORT: '9100' }).METRICS_PORT).toBe(9100);
    expect(() => loadSettings({ METRICS_PORT: 'ninety' })).toThrow(/METRICS_PORT: expected a number/);
    expect(() => loadSettings({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
    expect(loadSettings({ PROMETHEUS_METRICS_ENABLED: 'false' }).PROMETHEUS_METRICS_ENABLED).toBe(false);
    expect(() => loadSettings({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
  });
});
