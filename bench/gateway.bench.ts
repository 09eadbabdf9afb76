import { redisPid, withCpu } from './support/cpu.ts';
import { runLoad, type LoadResult } from './support/load.ts';
import { startStack, UPSTREAM_KEY } from './support/stack.ts';
import { testRedis } from '../test/support/redis.ts';

/**
 * Through-the-queue throughput and latency: the fake upstream directly versus
 * the gateway in front of it (cache miss: every prompt unique), non-streamed
 * and streamed, at several concurrencies. The difference is what the gateway
 * adds (API, BullMQ, worker, Redis stream). For the gateway runs it also
 * reports the CPU each process spent per request (Linux /proc), which shows
 * where a 2-core machine's budget goes.
 *
 * Every run first drives its own connections for BENCH_WARMUP_MS and discards
 * those results: the processes start cold, and a gateway measured in its first
 * seconds is still compiling its hot path (on the same two cores), which showed
 * as multi-ms stalls in the first one-connection run (bench/HISTORY.md).
 *
 * BENCH_SMOKE=1: one short run per scenario. BENCH_DURATION_MS, BENCH_WARMUP_MS
 * (default 10000, smoke 500), BENCH_CONNECTIONS (comma list),
 * BENCH_UPSTREAM_LATENCY_MS, BENCH_WORKERS tune it.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 1500 : 8000));
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? (smoke ? 500 : 10_000));
const connectionsList = (process.env.BENCH_CONNECTIONS ?? (smoke ? '1,16' : '1,16,64')).split(',').map(Number);
const latencyMs = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 0);

const stack = await startStack({
  latencyMs,
  workers: Number(process.env.BENCH_WORKERS ?? 1),
  env: { DLP_ENABLED: process.env.BENCH_DLP ?? 'true', SEMANTIC_CACHE_ENABLED: 'false' },
});

function body(stream: boolean) {
  return (i: number) =>
    JSON.stringify({
      model: 'a-4o',
      stream,
      messages: [{ role: 'user', content: `benchmark prompt number ${i} ${Math.random()}` }],
    });
}

const probe = testRedis();
const pids = {
  api: stack.gateway.api.child.pid,
  worker: stack.gateway.workers.get('provider_a')?.[0]?.child.pid,
  redis: await redisPid(probe).catch(() => undefined),
  upstream: stack.upstreamPid,
  'load generator': process.pid,
};
probe.disconnect();

const rows: string[] = [];
const cpuRows: string[] = [];
function cpuRow(scenario: string, connections: number, r: LoadResult, cpu: Record<string, number>): void {
  const perRequest = Object.values(cpu).map((ms) =>
    Number.isFinite(ms) ? ((ms * 1000) / Math.max(1, r.finished)).toFixed(0) : '-',
  );
  const total = Object.values(cpu).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  cpuRows.push(
    `| ${scenario} | ${connections} | ${perRequest.join(' | ')} | ${((total * 1000) / Math.max(1, r.finished)).toFixed(0)} |`,
  );
}
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
function row(scenario: string, connections: number, r: LoadResult): void {
  const bad = r.errors + Object.values(r.statuses).reduce((a, b) => a + b, 0);
  rows.push(
    `| ${scenario} | ${connections} | ${r.rps.toFixed(0)} | ${fmt(r.latency.p50)} | ${fmt(r.latency.p90)} | ${fmt(r.latency.p99)} | ${fmt(r.ttfb.p50)} | ${fmt(r.ttfb.p99)} | ${bad} |`,
  );
}

try {
  for (const stream of [false, true]) {
    for (const connections of connectionsList) {
      const mode = stream ? 'stream' : 'sync';
      const direct = await runLoad({
        url: `${stack.upstreamUrl}/chat/completions`,
        headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
        body: body(stream),
        connections,
        durationMs,
        warmupMs,
      });
      row(`direct upstream, ${mode}`, connections, direct);
      const { result: viaGateway, cpu } = await withCpu(pids, () =>
        runLoad({
          url: `${stack.gateway.baseUrl}/v1/chat/completions`,
          headers: { 'x-api-key': stack.key, 'cache-control': 'no-store' },
          body: body(stream),
          connections,
          durationMs,
          warmupMs,
        }),
      );
      row(`gateway miss (queue), ${mode}`, connections, viaGateway);
      cpuRow(`gateway miss (queue), ${mode}`, connections, viaGateway, cpu);
      rows.push(
        `| → added by the gateway, ${mode} | ${connections} | | ${fmt(viaGateway.latency.p50 - direct.latency.p50)} | | ${fmt(viaGateway.latency.p99 - direct.latency.p99)} | ${fmt(viaGateway.ttfb.p50 - direct.ttfb.p50)} | ${fmt(viaGateway.ttfb.p99 - direct.ttfb.p99)} | |`,
      );
    }
  }
} finally {
  await stack.stop();
}

console.log(
  `upstream latency ${latencyMs} ms, ${durationMs} ms per run after ${warmupMs} ms of warm-up on the same connections, times in ms\n`,
);
console.log('| scenario | conns | req/s | p50 | p90 | p99 | ttfb p50 | ttfb p99 | errors |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
console.log('\nCPU per request through the gateway, µs (all threads of each process; "-" where /proc cannot tell)\n');
console.log(`| scenario | conns | ${Object.keys(pids).join(' | ')} | total |`);
console.log(
  `|---|---|${Object.keys(pids)
    .map(() => '---|')
    .join('')}---|`,
);
for (const r of cpuRows) console.log(r);
