import { faker } from '@faker-js/faker';
import { redisPid, withCpu } from './support/cpu.ts';
import { runLoad } from './support/load.ts';
import { GATEWAY_CORE, LOAD_CORE, pin, pinned } from './support/pinning.ts';
import { startStack, type BenchStack } from './support/stack.ts';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.ts';
import { testRedis } from '../test/support/redis.ts';
import { MINILM, SHARED_MODELS } from '../test/support/tiny-onnx-model.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the semantic cache costs a cache miss: one gateway with it off, one
 * with the two-stage lookup (the static retriever; the model only confirms a
 * verified candidate) and one where the model embeds every lookup
 * (`EMBEDDING_RETRIEVER=none`), side by side in interleaved rounds (each
 * round rotates which goes first), medians over the rounds. Every prompt is
 * new (about 30 tokens of random English words, no number), so every request
 * is an exact and a semantic miss and is stored: the index grows through the
 * run up to SEMANTIC_CACHE_MAX_ENTRIES. A long-prompt scenario sends 2,000
 * words at one connection.
 *
 * BENCH_PIN=1 (see support/pinning.ts) starts a private redis-server and puts
 * the three gateways and it on core 0, the load generator and the fake
 * upstream on core 1. Needs the real model with its static table in
 * EMBEDDING_TEST_MODELS (`bash scripts/export-minilm-onnx.sh`).
 *
 * BENCH_SMOKE=1, BENCH_DURATION_MS (default 4000 per run), BENCH_ROUNDS (3),
 * BENCH_CONNECTIONS (`1,64`).
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 800 : 4000));
const rounds = Number(process.env.BENCH_ROUNDS ?? (smoke ? 1 : 3));
const connectionsList = (process.env.BENCH_CONNECTIONS ?? '1,64').split(',').map(Number);

if (!existsSync(join(SHARED_MODELS, MINILM, 'static', 'embeddings.f32'))) {
  console.log(
    `semantic-cost: skipped, no model with a static table in ${SHARED_MODELS} (bash scripts/export-minilm-onnx.sh, then EMBEDDING_TEST_MODELS=<its output>)`,
  );
  process.exit(0);
}

// Prompts from a fixed vocabulary and a cheap generator: the load generator must not spend the core it shares with the upstream.
faker.seed(20);
const vocabulary = Array.from(new Set(Array.from({ length: 6000 }, () => faker.word.sample()))).filter((w) =>
  /^[a-z]+$/.test(w),
);
let state = 1;
function nextWord(): string {
  state = (Math.imul(state, 1103515245) + 12345) >>> 0;
  return vocabulary[state % vocabulary.length] as string;
}
function prompt(words: number): string {
  return Array.from({ length: words }, nextWord).join(' ');
}
const body = (words: number) => () =>
  JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: prompt(words) }] });

const variants = [
  { name: 'semantic off', env: { SEMANTIC_CACHE_ENABLED: 'false' } },
  { name: 'semantic on, two stages', env: {} },
  { name: 'semantic on, model on every lookup', env: { EMBEDDING_RETRIEVER: 'none' } },
] as const;

let redisServer: RedisServer | undefined;
if (pinned) redisServer = await startRedisServer();
const stacks: BenchStack[] = [];
for (const variant of variants) {
  stacks.push(
    await startStack({
      ...(stacks[0] ? { shareUpstreamOf: stacks[0] } : {}),
      ...(redisServer ? { redisPort: redisServer.port } : {}),
      env: { DLP_ENABLED: 'true', EMBEDDING_MODEL_PATH: SHARED_MODELS, ...variant.env },
    }),
  );
}
const probe = redisServer
  ? new (await import('ioredis')).Redis({ port: redisServer.port, host: '127.0.0.1' })
  : testRedis();
const redis = await redisPid(probe).catch(() => undefined);
probe.disconnect();
if (pinned) {
  await pin(GATEWAY_CORE, [
    redis,
    ...stacks.flatMap((s) => [
      s.gateway.api.child.pid,
      ...[...s.gateway.workers.values()].flat().map((w) => w.child.pid),
    ]),
  ]);
  await pin(LOAD_CORE, [process.pid, stacks[0]?.upstreamPid]);
}

const scenarios = [
  ...connectionsList.map((connections) => ({ label: '~30-token prompts', words: 20, connections })),
  { label: '2,000-word prompts', words: 2000, connections: 1 },
];
const results = new Map<string, { rps: number[]; p50: number[]; p99: number[]; api: number[]; errors: number }>();

async function semanticReady(stack: BenchStack): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${stack.gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stack.key },
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'warm the embedding model up' }] }),
    });
    await res.text();
    if (res.ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

try {
  for (const stack of stacks) await semanticReady(stack);
  for (let round = 0; round < rounds + 1; round++) {
    for (const scenario of scenarios) {
      for (let v = 0; v < variants.length; v++) {
        const index = (v + round) % variants.length;
        const stack = stacks[index] as BenchStack;
        const { result, cpu } = await withCpu({ api: stack.gateway.api.child.pid }, () =>
          runLoad({
            url: `${stack.gateway.baseUrl}/v1/chat/completions`,
            headers: { 'x-api-key': stack.key },
            body: body(scenario.words),
            connections: scenario.connections,
            durationMs,
            warmupMs: 300,
          }),
        );
        if (round === 0) continue; // the first round warms every gateway up
        const key = `${scenario.label}|${scenario.connections}|${index}`;
        const entry = results.get(key) ?? { rps: [], p50: [], p99: [], api: [], errors: 0 };
        entry.rps.push(result.rps);
        entry.p50.push(result.latency.p50);
        entry.p99.push(result.latency.p99);
        entry.api.push(((cpu.api ?? NaN) * 1000) / Math.max(1, result.finished));
        entry.errors += result.errors + Object.values(result.statuses).reduce((a, b) => a + b, 0);
        results.set(key, entry);
      }
    }
  }
} finally {
  for (const stack of [...stacks].reverse()) await stack.stop();
  await redisServer?.stop();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
console.log(
  `${pinned ? 'pinned: gateways and Redis on core 0, load generator and upstream on core 1' : 'not pinned (BENCH_PIN=1 pins)'}; ${rounds} interleaved rounds of ${durationMs} ms after one warm-up round, medians; every request a miss\n`,
);
console.log(
  '| prompts | conns | gateway | req/s | p50 | p99 | added p50 vs off | req/s vs off | API CPU µs/req | errors |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const scenario of scenarios) {
  const off = results.get(`${scenario.label}|${scenario.connections}|0`);
  variants.forEach((variant, index) => {
    const r = results.get(`${scenario.label}|${scenario.connections}|${index}`);
    if (!r || !off) return;
    const added = index === 0 ? '' : fmt(median(r.p50) - median(off.p50));
    const ratio = index === 0 ? '' : `${fmt((100 * median(r.rps)) / median(off.rps), 0)} %`;
    console.log(
      `| ${scenario.label} | ${scenario.connections} | ${variant.name} | ${fmt(median(r.rps), 0)} | ${fmt(median(r.p50))} | ${fmt(median(r.p99))} | ${added} | ${ratio} | ${fmt(median(r.api), 0)} | ${r.errors} |`,
    );
  });
}
