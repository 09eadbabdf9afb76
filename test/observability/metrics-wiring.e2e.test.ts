import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { freePort, startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The metrics an operator alerts and draws on, through the real processes:
 * the worker's own /metrics (WORKER_METRICS_PORT) counting upstream attempts
 * by outcome and retries, the API's per-model request counts; and what is
 * built on them in deploy/: the Grafana dashboard is a well-formed dashboard
 * whose every query names metrics these processes export, the alert rules
 * pass `promtool check rules` and their unit tests (`promtool test rules`)
 * and name only exported metrics too.
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

const DASHBOARD = 'deploy/grafana/gateway-dashboard.json';
const RULES = 'deploy/prometheus/gateway-alerts.yml';
const RULE_TESTS = 'deploy/prometheus/gateway-alerts.test.yml';

// CI installs promtool (Debian's prometheus package, .ci/run); without it the rule checks are skipped, loudly.
const havePromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
if (!havePromtool)
  console.warn(
    '\n*** SKIPPED: promtool is not installed (apt-get install prometheus): the alert rules are not checked ***\n',
  );

type Json = Record<string, Untyped>;
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Json;
const rules = parseYaml(readFileSync(RULES, 'utf8')) as Json;

/** Every series name the API and the worker expose: declared metrics, with a histogram's _bucket/_sum/_count. */
const exported = new Set<string>();

function declared(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = match as unknown as [string, string, string];
    names.push(name);
    if (type === 'histogram') names.push(`${name}_bucket`, `${name}_sum`, `${name}_count`);
    if (type === 'summary') names.push(`${name}_sum`, `${name}_count`);
  }
  return names;
}

/** Metric names in a PromQL expression: identifiers followed by a selector or a range, or standing alone, minus functions and keywords. */
function metricNames(expr: string): string[] {
  const withoutLabels = expr.replace(/\{[^}]*\}/g, '{}').replace(/"[^"]*"/g, '""');
  const words = [...withoutLabels.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]);
  const promql = new Set([
    'sum',
    'max',
    'min',
    'avg',
    'count',
    'rate',
    'irate',
    'increase',
    'histogram_quantile',
    'by',
    'without',
    'on',
    'ignoring',
    'and',
    'or',
    'unless',
    'bool',
    'le',
    'provider',
    'status',
    'model',
    'outcome',
    'reason',
    'type',
    'cache_type',
    'entity_type',
    'action',
    'instance',
    'm',
  ]);
  return words.filter((w) => !promql.has(w) && !/^\d/.test(w));
}

function dashboardPanels(): Json[] {
  return (dashboard.panels as Json[]).flatMap((p) => [p, ...((p.panels as Json[] | undefined) ?? [])]);
}

function ruleExprs(): { alert: string; expr: string }[] {
  return (rules.groups as Json[]).flatMap((g) =>
    (g.rules as Json[]).map((r) => ({ alert: r.alert as string, expr: r.expr as string })),
  );
}

const ask = (content: string) =>
  client.chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content }] });

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  const metricsPort = await freePort();
  workerMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: UPSTREAM_KEY,
      SEMANTIC_CACHE_ENABLED: 'false',
      CACHE_ENABLED: 'false',
      WORKER_METRICS_PORT: String(metricsPort),
      HOST: '127.0.0.1',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          max_retries: 1,
          timeout_ms: 400,
        },
      ],
    },
    providers: ['provider_a'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  const api = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } })).text();
  const worker = await (await fetch(workerMetricsUrl)).text();
  for (const name of [...declared(api), ...declared(worker)]) exported.add(name);
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

describe('the Grafana dashboard', () => {
  it('is an importable dashboard: uid, title, schema version, a Prometheus data source input, panels on the grid with unique ids', () => {
    expect(dashboard).toMatchObject({
      uid: 'llm-gateway',
      title: expect.any(String),
      schemaVersion: expect.any(Number),
      panels: expect.any(Array),
    });
    expect(dashboard.__inputs).toEqual([
      expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' }),
    ]);
    const panels = dashboardPanels();
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const panel of panels) {
      expect(['row', 'timeseries', 'stat'], panel.title).toContain(panel.type);
      expect(panel.gridPos, panel.title).toEqual({
        h: expect.any(Number),
        w: expect.any(Number),
        x: expect.any(Number),
        y: expect.any(Number),
      });
      expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24);
      if (panel.type === 'row') continue;
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets)
        expect(target).toMatchObject({ refId: expect.stringMatching(/^[A-Z]$/), expr: expect.any(String) });
    }
  });

  it('queries only metrics the gateway exports, and draws traffic, queue, workers, Redis, upstream attempts, models and semantic verification', () => {
    expect(exported.size).toBeGreaterThan(20);
    const used = new Set<string>();
    for (const panel of dashboardPanels().filter((p) => p.type !== 'row')) {
      for (const { expr } of panel.targets as Json[]) {
        const names = metricNames(expr);
        expect(names.length, expr).toBeGreaterThan(0);
        for (const name of names) {
          expect(exported, `${panel.title}: ${name}`).toContain(name);
          used.add(name.replace(/_bucket$/, ''));
        }
      }
    }
    for (const metric of [
      'gateway_requests_total',
      'gateway_queue_depth',
      'gateway_live_workers',
      'gateway_redis_up',
      'gateway_upstream_attempts_total',
      'gateway_upstream_retries_total',
      'gateway_model_requests_total',
      'gateway_semantic_candidates_total',
    ]) {
      expect(used).toContain(metric);
    }
  });
});

describe('the alert rules', () => {
  it('cover error rate, queue wait, no live worker and Redis down, with exported metrics only', () => {
    const alerts = ruleExprs();
    expect(alerts.map((a) => a.alert)).toEqual(
      expect.arrayContaining([
        'GatewayHighErrorRate',
        'GatewayQueueWaitHigh',
        'GatewayNoLiveWorker',
        'GatewayRedisDown',
      ]),
    );
    for (const { alert, expr } of alerts)
      for (const name of metricNames(expr)) expect(exported, `${alert}: ${name}`).toContain(name);
  });

  it.skipIf(!havePromtool)('pass promtool check rules and their unit tests', () => {
    expect(execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' })).toMatch(/SUCCESS: 5 rules found/);
    expect(execFileSync('promtool', ['test', 'rules', RULE_TESTS], { encoding: 'utf8' })).toMatch(/SUCCESS/);
  });
});
