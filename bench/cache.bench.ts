import { MINILM, SHARED_MODELS, realModelPresent } from '../test/support/tiny-onnx-model.ts';
import { runLoad, type LoadResult } from './support/load.ts';
import { startStack } from './support/stack.ts';

/**
 * The cache hit path through a running API process: exact hits (JSON and
 * SSE replay) and semantic hits (embed the prompt, search the in-memory
 * index, read the entry from Redis). No request reaches the queue or the
 * upstream; DLP is off so only the cache is measured.
 *
 * The semantic embedder is the real all-MiniLM-L6-v2 (ONNX, in a worker
 * thread) when its weights are in shared/models, else the OpenAI-compatible
 * endpoint embedder against the fake upstream's /v1/embeddings on loopback.
 * BENCH_EMBEDDER=onnx|endpoint forces one.
 *
 * BENCH_SMOKE=1: one short run at 16 connections. BENCH_DURATION_MS and
 * BENCH_CONNECTIONS (comma list) tune it.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 1500 : 8000));
const connectionsList = (process.env.BENCH_CONNECTIONS ?? (smoke ? '16' : '1,16,64')).split(',').map(Number);
const embedder = process.env.BENCH_EMBEDDER ?? (realModelPresent() ? 'onnx' : 'endpoint');
const ADMIN_KEY = 'gw_bench_admin_0123456789abcdefghijklmnopqrstu';

const stack = await startStack({
  env: {
    DLP_ENABLED: 'false',
    ADMIN_API_KEYS: ADMIN_KEY,
    SEMANTIC_CACHE_ENABLED: 'true',
    SEMANTIC_CACHE_THRESHOLD: '0.8',
    EMBEDDING_BACKEND: embedder,
    ...(embedder === 'onnx' ? { EMBEDDING_MODEL_PATH: SHARED_MODELS } : { EMBEDDING_MODEL: 'text-embedding-fake' }),
  },
});

const chatUrl = `${stack.gateway.baseUrl}/v1/chat/completions`;
const headers = { 'x-api-key': stack.key };
const body = (content: string, stream = false) =>
  JSON.stringify({ model: 'a-4o', stream, messages: [{ role: 'user', content }] });

async function post(content: string): Promise<string | null> {
  const res = await fetch(chatUrl, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: body(content),
  });
  await res.text();
  return res.headers.get('x-cache');
}

async function semanticStatus(): Promise<string> {
  const res = await fetch(`${stack.gateway.baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN_KEY } });
  return ((await res.json()) as { semantic_cache: { status: string } }).semantic_cache.status;
}

const rows: string[] = [];
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
function row(scenario: string, connections: number, r: LoadResult): void {
  const bad = r.errors + Object.values(r.statuses).reduce((a, b) => a + b, 0);
  rows.push(
    `| ${scenario} | ${connections} | ${r.rps.toFixed(0)} | ${fmt(r.latency.p50)} | ${fmt(r.latency.p90)} | ${fmt(r.latency.p99)} | ${bad} |`,
  );
}

try {
  const until = Date.now() + 60_000;
  let status = await semanticStatus();
  while (status !== 'ready' && status !== 'unavailable' && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    status = await semanticStatus();
  }
  const seed = 'What is the capital of France?';
  const paraphrase = embedder === 'onnx' ? "what's the capital of france?" : 'France: what is its capital?';
  await post(seed);
  const checks = { exact: await post(seed), semantic: status === 'ready' ? await post(paraphrase) : 'unavailable' };
  if (checks.exact !== 'HIT') throw new Error(`the warm-up did not produce an exact hit (X-Cache: ${checks.exact})`);

  // Warm-up (JIT, connection pools), not reported.
  await runLoad({ url: chatUrl, headers, body: body(seed), connections: 4, durationMs: 1000 });
  for (const connections of connectionsList) {
    row(
      'exact hit, JSON',
      connections,
      await runLoad({ url: chatUrl, headers, body: body(seed), connections, durationMs }),
    );
    row(
      'exact hit, SSE replay',
      connections,
      await runLoad({ url: chatUrl, headers, body: body(seed, true), connections, durationMs }),
    );
    if (checks.semantic === 'SEMANTIC_HIT') {
      row(
        `semantic hit, JSON (${embedder})`,
        connections,
        await runLoad({ url: chatUrl, headers, body: body(paraphrase), connections, durationMs }),
      );
    }
  }
  const embedderNote =
    embedder === 'onnx'
      ? `onnx ${MINILM} from ${SHARED_MODELS}`
      : 'endpoint: fake upstream /v1/embeddings on loopback (the real ONNX model is absent or not chosen)';
  console.log(`embedder: ${embedderNote}; semantic check: ${checks.semantic}; ${durationMs} ms per run, times in ms\n`);
  console.log('| scenario | conns | req/s | p50 | p90 | p99 | errors |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  if (checks.semantic !== 'SEMANTIC_HIT')
    console.log(`\nsemantic hit path not measured: the paraphrase answered ${checks.semantic}`);
} finally {
  await stack.stop();
}
