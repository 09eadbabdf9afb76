import { Redis } from 'ioredis';
import { startRedisServer } from '../test/support/redis-server.ts';
import { BENCH_KEY, startStack, type BenchStack } from './support/stack.ts';

/**
 * Redis commands per chat request, counted by a private `redis-server`
 * (`INFO commandstats`) around a run of sequential requests, minus what the
 * idle processes send meanwhile (heartbeats, worker polls), measured just
 * before. Counting is exact where timing on a shared VM is not: it shows
 * what a feature costs the hot path in round trips.
 *
 * Scenarios: the default stack (one provider entry, nothing routed); the
 * same model on two provider entries (a routed model, see docs/routing.md);
 * with BENCH_COMPARE_CHECKOUT, the default stack on that checkout's code.
 * Misses (`Cache-Control: no-store`), non-streamed and streamed. BENCH_SMOKE=1:
 * fewer requests; BENCH_REQUESTS sets how many (default 400).
 * `npm run bench -- routing-commands`.
 */

const requests = Number(process.env.BENCH_REQUESTS ?? (process.env.BENCH_SMOKE ? 40 : 400));
const IDLE_MS = process.env.BENCH_SMOKE ? 1_000 : 3_000;

type Counts = Map<string, number>;

async function commandCounts(redis: Redis): Promise<Counts> {
  const counts: Counts = new Map();
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    counts.set(match[1] as string, Number(match[2]));
  return counts;
}

function delta(after: Counts, before: Counts): Counts {
  const out: Counts = new Map();
  for (const [name, calls] of after)
    if (calls - (before.get(name) ?? 0) > 0) out.set(name, calls - (before.get(name) ?? 0));
  return out;
}

async function chat(stack: BenchStack, model: string, stream: boolean): Promise<void> {
  const res = await fetch(`${stack.gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_KEY}`, 'cache-control': 'no-store' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'count my commands' }] }),
  });
  await res.text();
  if (res.status !== 200) throw new Error(`chat answered ${res.status}`);
}

/** Commands per request: the run's counts minus the idle rate over the run's length. */
async function perRequest(redis: Redis, stack: BenchStack, model: string, stream: boolean): Promise<Counts> {
  for (let i = 0; i < 20; i++) await chat(stack, model, stream);
  const idleStart = await commandCounts(redis);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idle = delta(await commandCounts(redis), idleStart);
  const before = await commandCounts(redis);
  const startedAt = Date.now();
  for (let i = 0; i < requests; i++) await chat(stack, model, stream);
  const elapsed = Date.now() - startedAt;
  const run = delta(await commandCounts(redis), before);
  const out: Counts = new Map();
  for (const [name, calls] of run) out.set(name, (calls - ((idle.get(name) ?? 0) * elapsed) / IDLE_MS) / requests);
  return out;
}

const routedConfig = (url: string) => ({
  config: {
    providers: [
      { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: url, models: ['a-4o'] },
      { name: 'provider_a2', format: 'openai', api_key_env: 'PROVIDER_A_API_KEY', base_url: url, models: ['a-4o'] },
    ],
  },
  providers: ['provider_a', 'provider_a2'],
});

const server = await startRedisServer();
const redis = new Redis({ port: server.port, host: '127.0.0.1' });
const env = { REDIS_PORT: String(server.port), SEMANTIC_CACHE_ENABLED: 'false' };
const scenarios: Array<{ label: string; start: () => Promise<BenchStack> }> = [
  { label: 'one provider entry (nothing routed)', start: () => startStack({ env }) },
  { label: 'a-4o on two provider entries (routed)', start: () => startStack({ env, configure: routedConfig }) },
];
const compare = process.env.BENCH_COMPARE_CHECKOUT;
if (compare)
  scenarios.push({ label: `one provider entry, ${compare}`, start: () => startStack({ env, root: compare }) });

const results: Array<{ label: string; stream: boolean; counts: Counts }> = [];
for (const scenario of scenarios) {
  const stack = await scenario.start();
  try {
    for (const stream of [false, true])
      results.push({ label: scenario.label, stream, counts: await perRequest(redis, stack, 'a-4o', stream) });
  } finally {
    await stack.stop();
  }
}
/** Commands whose count per request differs by 0.5 or more from the first scenario's, same reply kind. */
function differences(counts: Counts, base: Counts): string {
  const names = new Set([...counts.keys(), ...base.keys()]);
  const out = [...names].sort().flatMap((name) => {
    const d = (counts.get(name) ?? 0) - (base.get(name) ?? 0);
    return Math.abs(d) >= 0.5 ? [`${name} ${d > 0 ? '+' : ''}${d.toFixed(1)}`] : [];
  });
  return out.length > 0 ? out.join(', ') : 'none';
}
console.log(`${requests} sequential misses per row; Redis commands per request, idle traffic subtracted\n`);
console.log('| scenario | reply | commands / request | commands that differ from the first row (±0.5 or more) |');
console.log('|---|---|---|---|');
for (const r of results) {
  const base = results.find((b) => b.stream === r.stream)?.counts ?? new Map();
  const total = [...r.counts.values()].reduce((a, b) => a + b, 0);
  console.log(
    `| ${r.label} | ${r.stream ? 'streamed' : 'JSON'} | ${total.toFixed(1)} | ${differences(r.counts, base)} |`,
  );
}
redis.disconnect();
await server.stop();
