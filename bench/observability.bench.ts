import { createServer, type Server } from 'node:http';
import express, { type Express } from 'express';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { requestId } from '../src/http/middleware/request-id.ts';
import { contextOf } from '../src/pipeline/request-context.ts';
import { EndpointLabeler } from '../src/observability/endpoint-label.ts';
import { REDACT_PATHS } from '../src/observability/logger.ts';
import { GatewayMetrics } from '../src/observability/metrics.ts';
import { observeRequests } from '../src/observability/request-observer.ts';
import { StatsStore } from '../src/observability/stats-store.ts';
import { loadSettings } from '../src/config/settings.ts';
import { openTracing } from '../src/observability/tracing/open-tracing.ts';
import { traceRequests } from '../src/observability/tracing/request-tracing.ts';
import { NO_TRACING, type Tracing } from '../src/observability/tracing/trace-span.ts';
import { runLoad, type LoadResult } from './support/load.ts';

/**
 * What observability costs per request: the same trivial Express route with
 * and without the request observer (access log line to /dev/null, metrics,
 * the /stats counter in Redis), and with the observer and OpenTelemetry
 * tracing on (a server span and one child per request, exported as OTLP/HTTP
 * JSON to a loopback sink that answers 200), over loopback HTTP; then the cost
 * of one metrics observation, of rendering /metrics, and of the spans of the
 * tracing-off path (the shared no-op).
 *
 * BENCH_SMOKE=1: short runs. BENCH_DURATION_MS, BENCH_CONNECTIONS (comma list) tune it.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 1000 : 5000));
const connectionsList = (process.env.BENCH_CONNECTIONS ?? (smoke ? '1,16' : '1,16,64')).split(',').map(Number);

const redis = new Redis({
  host: process.env.REDIS_HOST ?? '127.0.0.1',
  port: Number(process.env.REDIS_PORT ?? 6379),
  enableAutoPipelining: true,
});
const prefix = `gwbench:obs:${process.pid}`;
const metrics = new GatewayMetrics();
const stats = new StatsStore({ redis, prefix });
const logger = pino(
  { level: 'info', redact: { paths: REDACT_PATHS, censor: '[redacted]' } },
  pino.destination({ dest: '/dev/null', sync: false }),
);
const labeler = new EndpointLabeler(['/v1/echo']);

function app(observed: boolean, tracing: Tracing = NO_TRACING): Express {
  const a = express();
  a.use(requestId());
  if (tracing.enabled) a.use(traceRequests(tracing, labeler));
  if (observed) a.use(observeRequests({ logger, labeler, metrics, stats }));
  a.post('/v1/echo', (_req, res) => {
    contextOf(res).span.child('handler').end();
    res.json({ ok: true });
  });
  return a;
}

function listen(a: Express): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = a.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({ server, url: `http://127.0.0.1:${port}/v1/echo` });
    });
  });
}

const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : '-');
const rows: string[] = [];
const row = (scenario: string, c: number, r: LoadResult) =>
  rows.push(
    `| ${scenario} | ${c} | ${r.rps.toFixed(0)} | ${fmt(r.latency.p50)} | ${fmt(r.latency.p99)} | ${r.errors} |`,
  );

// The OTLP endpoint spans are exported to: reads each body, answers 200.
const sink = createServer((req, res) =>
  req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')),
);
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkAddress = sink.address();
// The exporter reads the standard variable itself.
process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${typeof sinkAddress === 'object' && sinkAddress ? sinkAddress.port : 0}`;
const tracing = await openTracing(
  loadSettings({
    OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    OTEL_BSP_SCHEDULE_DELAY: '500',
  }),
  'bench',
);

const bare = await listen(app(false));
const observed = await listen(app(true));
const traced = await listen(app(true, tracing));
try {
  for (const connections of connectionsList) {
    row('bare route', connections, await runLoad({ url: bare.url, body: '{}', connections, durationMs }));
    row(
      'with request observer',
      connections,
      await runLoad({ url: observed.url, body: '{}', connections, durationMs }),
    );
    row(
      'with request observer and tracing on',
      connections,
      await runLoad({ url: traced.url, body: '{}', connections, durationMs }),
    );
  }

  // The tracing-off path of a request: the spans the handlers open and end, all the shared no-op.
  const spans = smoke ? 200_000 : 2_000_000;
  const t = performance.now();
  for (let i = 0; i < spans; i++) NO_TRACING.start('request', undefined).child('auth').end();
  const noopNs = ((performance.now() - t) * 1e6) / spans;

  const n = smoke ? 20_000 : 200_000;
  const endpoints = ['/v1/chat/completions', '/v1/models', '/health', '/metrics', '/stats'];
  let t0 = performance.now();
  for (let i = 0; i < n; i++)
    metrics.observeRequest({ method: 'POST', endpoint: endpoints[i % 5]!, status: 200, seconds: 0.05 });
  const observeNs = ((performance.now() - t0) * 1e6) / n;
  const renders = smoke ? 50 : 500;
  t0 = performance.now();
  for (let i = 0; i < renders; i++) await metrics.render();
  const renderMs = (performance.now() - t0) / renders;

  process.stdout.write(
    `| scenario | connections | req/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|---|\n${rows.join('\n')}\n\n`,
  );
  process.stdout.write(`metrics.observeRequest: ${observeNs.toFixed(0)} ns/op (${n} ops)\n`);
  process.stdout.write(`/metrics render (defaults + gateway series): ${renderMs.toFixed(2)} ms\n`);
  process.stdout.write(`tracing off, a span and a child opened and ended: ${noopNs.toFixed(1)} ns/op (${spans} ops)\n`);
} finally {
  for (const { server } of [bare, observed, traced]) {
    server.close();
    server.closeAllConnections();
  }
  await tracing.shutdown();
  sink.close();
  await redis.del(`${prefix}:{stats}:counters`, `${prefix}:{stats}:providers`);
  redis.disconnect();
}
