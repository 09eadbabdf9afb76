import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { OnnxEmbedder } from '../src/cache/embedders/onnx-embedder.ts';
import { StaticEmbedder } from '../src/cache/embedders/static-embedder.ts';
import { canonicalPrompt } from '../src/cache/prompt-canonical.ts';
import { VectorIndex, normalize } from '../src/cache/vector-index.ts';
import { MINILM, SHARED_MODELS } from '../test/support/tiny-onnx-model.ts';
import { GATEWAY_CORE, pin, pinned } from './support/pinning.ts';

/**
 * Where a semantic-cache miss spends the API's CPU, step by step, in one
 * process: canonical form, tokenizers, the transformer in this thread and
 * through the embedder's worker thread, a bare round trip to a worker thread,
 * the static embedding, and the index search over 10,000 entries (a flat
 * scan against the sketch search). Mean µs per call after a warm-up.
 * BENCH_PIN=1 runs it on the gateway's core. Needs the real model with its
 * static table in EMBEDDING_TEST_MODELS.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const dir = join(SHARED_MODELS, MINILM);
if (!existsSync(join(dir, 'static', 'embeddings.f32'))) {
  console.log(`semantic-breakdown: skipped, no model with a static table in ${SHARED_MODELS}`);
  process.exit(0);
}
if (pinned) await pin(GATEWAY_CORE, [process.pid]);

const words =
  'the committee reviewed quarterly revenue while engineers deployed services and analysts compared regional sales figures across markets'.split(
    ' ',
  );
const short =
  'How do I configure nginx as a reverse proxy so that websocket connections to the backend stay open for a long time?';
const long = Array.from({ length: 2000 }, (_, i) => words[(i * 7) % words.length]).join(' ');

async function time(requested: number, step: () => unknown): Promise<number> {
  const iterations = Math.max(1, Math.floor(requested));
  for (let i = 0; i < Math.max(3, iterations / 10); i++) await step();
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await step();
  return ((performance.now() - started) * 1000) / iterations;
}
const n = (full: number) => (smoke ? Math.max(3, Math.floor(full / 20)) : full);

const transformers = await import('@huggingface/transformers');
transformers.env.localModelPath = `${SHARED_MODELS}/`;
transformers.env.allowRemoteModels = false;
const tokenizer = await transformers.AutoTokenizer.from_pretrained(MINILM);
const pipeline = (await transformers.pipeline('feature-extraction', MINILM, {
  dtype: 'q8',
  device: 'cpu',
  session_options: { intraOpNumThreads: 1, interOpNumThreads: 1 },
} as never)) as unknown as (t: string[], o: object) => Promise<unknown>;
const threaded = new OnnxEmbedder({ localModelPath: SHARED_MODELS, threads: 1 });
await threaded.ready();
const retriever = new StaticEmbedder({ modelDir: dir, id: 'static' });
await retriever.ready();

// The hop alone: a message to a worker thread and back, carrying a 384-float vector as the embedder's reply does.
const echo = new Worker(
  "require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m))",
  { eval: true },
);
const vector = new Float32Array(384);
const hop = await time(
  n(5000),
  () =>
    new Promise((resolve) => {
      echo.once('message', resolve);
      echo.postMessage({ id: 1, data: vector });
    }),
);
await echo.terminate();

const rows: string[] = [];
for (const [label, text, scale] of [
  ['~30 tokens', short, 1],
  ['2,000 words', long, 20],
] as const) {
  const canonical = canonicalPrompt(text).text;
  const cells = [
    await time(n(2000) / scale, () => canonicalPrompt(text)),
    await time(n(1000) / scale, () => tokenizer.encode(canonical)),
    await time(n(200) / scale, () => pipeline([canonical], { pooling: 'mean', normalize: true })),
    await time(n(200) / scale, () => threaded.embed([canonical])),
    await time(n(5000) / scale, () => retriever.embed(canonical)),
  ];
  rows.push(`| ${label} | ${cells.map((c) => c.toFixed(0)).join(' | ')} | ${hop.toFixed(0)} |`);
}
await threaded.close();

let state = 3;
const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
const searchRows: string[] = [];
for (const dims of [384, 256]) {
  const index = new VectorIndex();
  const flat = new Float32Array(10_000 * dims);
  for (let i = 0; i < 10_000; i++) {
    const v = normalize(Float32Array.from({ length: dims }, random));
    flat.set(v, i * dims);
    index.add({ id: `e${i}`, partition: 'p', guard: 'g', expiresAt: Date.now() + 3_600_000, vector: v });
  }
  const query = normalize(Float32Array.from({ length: dims }, random));
  const scan = await time(n(300), () => {
    let best = -1;
    for (let slot = 0; slot < 10_000; slot++) {
      let dot = 0;
      for (let i = 0; i < dims; i++) dot += (flat[slot * dims + i] as number) * (query[i] as number);
      if (dot > best) best = dot;
    }
    return best;
  });
  const bits = await time(n(1000), () => index.search('p', query, 0.7, 'g', { limit: 4 }));
  searchRows.push(`| ${dims} | ${scan.toFixed(0)} | ${bits.toFixed(0)} |`);
}

console.log(`${pinned ? 'pinned to core 0' : 'not pinned'}; mean µs per call, one text per call\n`);
console.log(
  '| prompt | canonical form | transformers.js tokenizer | transformer in this thread (tokenizer + ONNX session + pooling) | transformer through the worker thread | static embedding (WordPiece + table sum) | thread hop alone (echo of a 384-float message) |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
console.log('\nIndex search over 10,000 entries, µs per search\n');
console.log('| dims | flat scan | sketch + rerank of 32 (VectorIndex) |');
console.log('|---|---|---|');
for (const r of searchRows) console.log(r);
