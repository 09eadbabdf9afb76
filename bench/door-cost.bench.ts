import { withCpu } from './support/cpu.ts';
import { runLoad, type LoadResult } from './support/load.ts';
import { startStack } from './support/stack.ts';

/**
 * What a request costs the gateway's CPU by the door it comes in through:
 * the same unique prompt (cache misses) to the same OpenAI-format upstream
 * through `POST /v1/chat/completions`, `POST /v1/messages` and
 * `POST /v1/responses` (`store: false`, so no database write), non-streamed
 * and streamed, in interleaved rounds so that every door sees the same
 * machine. Reports the CPU time of the API and worker processes per request
 * (user + system, all threads, from Linux /proc), summed and apart, and each
 * door's ratio to the chat door. CPU time rather than wall time, since the
 * machine is shared: a busy neighbour slows a run down but does not add to
 * what the gateway's processes spend.
 *
 * BENCH_SMOKE=1: one short round. BENCH_DURATION_MS (per run), BENCH_ROUNDS,
 * BENCH_CONNECTIONS (one count) tune it.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 800 : 5000));
const rounds = Number(process.env.BENCH_ROUNDS ?? (smoke ? 1 : 3));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const MAX_TOKENS = 256;

const stack = await startStack({ env: { DLP_ENABLED: 'true', SEMANTIC_CACHE_ENABLED: 'false' } });
// Every door reads the key from x-api-key; anthropic-version is what Anthropic's SDKs send.
const headers = { 'x-api-key': stack.key, 'cache-control': 'no-store', 'anthropic-version': '2023-06-01' };
const prompt = (i: number) => `benchmark prompt number ${i} ${Math.random()}`;

interface Door {
  name: string;
  path: string;
  body: (stream: boolean) => (i: number) => string;
}

const doors: Door[] = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    body: (stream) => (i) => JSON.stringify({ model: 'a-4o', stream, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: prompt(i) }] }),
  },
  {
    name: 'messages',
    path: '/v1/messages',
    body: (stream) => (i) => JSON.stringify({ model: 'a-4o', stream, max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: prompt(i) }] }),
  },
  {
    name: 'responses',
    path: '/v1/responses',
    body: (stream) => (i) => JSON.stringify({ model: 'a-4o', stream, store: false, max_output_tokens: MAX_TOKENS, input: prompt(i) }),
  },
];

interface Total {
  apiMs: number;
  workerMs: number;
  requests: number;
  bad: number;
}

const totals = new Map<string, Total>();
const pids: Record<string, number | undefined> = { api: stack.gateway.api.child.pid };
for (const [i, worker] of [...stack.gateway.workers.values()].flat().entries()) pids[`worker${i}`] = worker.child.pid;

function badOf(r: LoadResult): number {
  return r.errors + Object.values(r.statuses).reduce((a, b) => a + b, 0);
}

try {
  // A first short pass compiles every path before anything is counted.
  for (const door of doors) {
    for (const stream of [false, true]) await runLoad({ url: `${stack.gateway.baseUrl}${door.path}`, headers, body: door.body(stream), connections, durationMs: smoke ? 300 : 1000, warmupMs: 0 });
  }
  for (let round = 0; round < rounds; round++) {
    for (const stream of [false, true]) {
      // Each round starts with another door, so none always runs on a warmer machine.
      const order = doors.map((_, i) => doors[(i + round) % doors.length] as Door);
      for (const door of order) {
        const { result, cpu } = await withCpu(pids, () => runLoad({ url: `${stack.gateway.baseUrl}${door.path}`, headers, body: door.body(stream), connections, durationMs }));
        const key = `${door.name}, ${stream ? 'stream' : 'sync'}`;
        const total = totals.get(key) ?? { apiMs: 0, workerMs: 0, requests: 0, bad: 0 };
        total.apiMs += cpu.api ?? NaN;
        total.workerMs += Object.entries(cpu).reduce((sum, [name, ms]) => (name.startsWith('worker') ? sum + ms : sum), 0);
        // `finished` counts every request of the run, as the CPU does.
        total.requests += result.finished;
        total.bad += badOf(result);
        totals.set(key, total);
      }
    }
  }
} finally {
  await stack.stop();
}

const perRequest = (ms: number, requests: number) => (ms * 1000) / Math.max(1, requests);
const format = (us: number) => (Number.isFinite(us) ? us.toFixed(0) : '-');

console.log(`${rounds} interleaved round(s) of ${durationMs} ms per door at ${connections} connections; CPU per request (user + system, all threads), µs\n`);
console.log('| door | requests | API | worker | API + worker | ratio to chat | errors |');
console.log('|---|---|---|---|---|---|---|');
for (const stream of ['sync', 'stream']) {
  const chat = totals.get(`chat, ${stream}`);
  const chatCost = chat ? perRequest(chat.apiMs + chat.workerMs, chat.requests) : NaN;
  for (const door of doors) {
    const t = totals.get(`${door.name}, ${stream}`);
    if (!t) continue;
    const cost = perRequest(t.apiMs + t.workerMs, t.requests);
    const ratio = cost / chatCost;
    console.log(
      `| ${door.name}, ${stream} | ${t.requests} | ${format(perRequest(t.apiMs, t.requests))} | ${format(perRequest(t.workerMs, t.requests))} | ${format(cost)} | ${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'} | ${t.bad} |`,
    );
  }
}
const failed = [...totals.values()].reduce((sum, t) => sum + t.bad, 0);
if (failed > 0) process.exitCode = 1;
