import { withCpu } from './support/cpu.ts';
import { runLoad, type LoadResult } from './support/load.ts';
import { startStack } from './support/stack.ts';

/**
 * What the Responses door costs the API process next to the chat door: the
 * same prompt through `POST /v1/chat/completions` and `POST /v1/responses`
 * (cache misses: every prompt unique; `store: false`, then `store: true`,
 * which adds a database write after each reply), non-streamed and streamed,
 * in interleaved rounds so that both doors see the same machine. Reports the
 * API's CPU per request (Linux /proc) and the latency; the worker, Redis and
 * the upstream do the same work for both doors.
 *
 * BENCH_SMOKE=1: one short round. BENCH_DURATION_MS (per run), BENCH_ROUNDS,
 * BENCH_CONNECTIONS (one count) tune it.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 1000 : 5000));
const rounds = Number(process.env.BENCH_ROUNDS ?? (smoke ? 1 : 3));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);

const stack = await startStack({ env: { DLP_ENABLED: 'true', SEMANTIC_CACHE_ENABLED: 'false' } });
const headers = { 'x-api-key': stack.key, 'cache-control': 'no-store' };
const prompt = (i: number) => `benchmark prompt number ${i} ${Math.random()}`;

interface Scenario {
  name: string;
  path: string;
  body: (stream: boolean) => (i: number) => string;
}

const scenarios: Scenario[] = [
  {
    name: 'chat completions',
    path: '/v1/chat/completions',
    body: (stream) => (i) =>
      JSON.stringify({ model: 'a-4o', stream, messages: [{ role: 'user', content: prompt(i) }] }),
  },
  {
    name: 'responses, store: false',
    path: '/v1/responses',
    body: (stream) => (i) => JSON.stringify({ model: 'a-4o', stream, store: false, input: prompt(i) }),
  },
  {
    name: 'responses, store: true',
    path: '/v1/responses',
    body: (stream) => (i) => JSON.stringify({ model: 'a-4o', stream, input: prompt(i) }),
  },
];

const totals = new Map<string, { cpuMs: number; requests: number; p50: number[]; bad: number }>();
const pid = { api: stack.gateway.api.child.pid };

try {
  // A first short pass compiles every path before anything is counted.
  for (const s of scenarios)
    for (const stream of [false, true])
      await runLoad({
        url: `${stack.gateway.baseUrl}${s.path}`,
        headers,
        body: s.body(stream),
        connections,
        durationMs: 500,
        warmupMs: 0,
      });
  for (let round = 0; round < rounds; round++) {
    for (const stream of [false, true]) {
      // Each round starts with another door, so neither always runs on a warmer machine.
      const order = scenarios.map((_, i) => scenarios[(i + round) % scenarios.length] as Scenario);
      for (const s of order) {
        const { result, cpu } = await withCpu(pid, () =>
          runLoad({ url: `${stack.gateway.baseUrl}${s.path}`, headers, body: s.body(stream), connections, durationMs }),
        );
        const key = `${s.name}, ${stream ? 'stream' : 'sync'}`;
        const total = totals.get(key) ?? { cpuMs: 0, requests: 0, p50: [], bad: 0 };
        total.cpuMs += cpu.api ?? NaN;
        total.requests += result.finished;
        total.p50.push(result.latency.p50);
        total.bad += badOf(result);
        totals.set(key, total);
      }
    }
  }
} finally {
  await stack.stop();
}

function badOf(r: LoadResult): number {
  return r.errors + Object.values(r.statuses).reduce((a, b) => a + b, 0);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(
  `${rounds} interleaved round(s) of ${durationMs} ms per scenario at ${connections} connections; API process CPU per request (all threads), µs\n`,
);
console.log('| scenario | requests | API CPU µs/request | p50 ms (median of rounds) | errors |');
console.log('|---|---|---|---|---|');
for (const [name, t] of totals) {
  console.log(
    `| ${name} | ${t.requests} | ${Number.isFinite(t.cpuMs) ? ((t.cpuMs * 1000) / Math.max(1, t.requests)).toFixed(0) : '-'} | ${median(t.p50).toFixed(2)} | ${t.bad} |`,
  );
}
const failed = [...totals.values()].reduce((sum, t) => sum + t.bad, 0);
if (failed > 0) process.exitCode = 1;
