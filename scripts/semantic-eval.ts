import { existsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRetriever } from '../src/cache/create-response-cache.ts';
import { OnnxEmbedder } from '../src/cache/embedders/onnx-embedder.ts';
import { canonicalPrompt } from '../src/cache/prompt-canonical.ts';
import { guardSignatureOf } from '../src/cache/prompt-guards.ts';
import { verifyCandidate } from '../src/cache/prompt-verifier.ts';
import { loadSettings } from '../src/config/settings.ts';
import { CLASS_SET_NAMES, readClassSet, type ClassSetName } from '../eval/semantic/class-set.ts';
import { readPairSet, SET_NAMES, type Pair, type SetName } from '../eval/semantic/pair-set.ts';
import {
  categoryRows,
  curve,
  disagreements,
  formatCategoryTable,
  formatCurve,
  formatTotals,
  totals,
  type PairOutcome,
} from '../eval/semantic/score.ts';
import { startFakeUpstream } from '../test/support/fake-upstream.ts';
import { startGateway, waitFor } from '../test/support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../test/support/redis.ts';
import { MINILM } from '../test/support/tiny-onnx-model.ts';

/**
 * `npm run eval:semantic [-- --set <set>[,<set>...]] [--threshold 0.95] [--limit n] [--json out.json]`
 *
 * Sets: dev, test, holdout2 to holdout7 (first round), classes-dev, classes-holdout, public-dev,
 * public-holdout (second round: the new near-miss classes and the public corpora), classes-holdout2
 * to classes-holdout11 (third to twelfth rounds: the same classes, written blind); `round2` is
 * `classes-holdout,public-holdout`, `round2-dev` is `classes-dev,public-dev`, `round3` to `round12`
 * are `classes-holdout2` to `classes-holdout11`. Each set gets its own
 * per-category table and totals.
 *
 * Runs the labelled pairs of eval/semantic/ through a real gateway (API and
 * worker processes, exact and semantic cache on, the real all-MiniLM-L6-v2
 * ONNX embedder, every other setting at its default) in front of a loopback
 * fake upstream. Per pair: `a` is sent (a miss, stored before its reply
 * ends), then `b`, and `X-Cache` of `b` is the gateway's decision. Every pair
 * uses its own API key, so with `CACHE_SCOPE=owner` (the default) each pair
 * has its own partition and pairs never see each other's entries; the
 * compared texts are unchanged.
 *
 * The threshold curve needs the similarity of misses too, which the gateway
 * does not report: the script embeds `a` and `b` itself with the same
 * embedder module and model, and recomputes the decision (exact hit, or
 * similarity >= t and the prompt guards agree; with two stages, also the
 * static retriever's similarity >= its threshold). At the run's threshold the
 * recomputed decisions are checked against the gateway's.
 */

const { values: args } = parseArgs({
  options: {
    set: { type: 'string', default: 'test' },
    threshold: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'string' },
  },
});

const ROOT = resolve(import.meta.dirname, '..');
type AnySet = SetName | ClassSetName;
const ALIASES: Readonly<Record<string, readonly AnySet[]>> = {
  round2: ['classes-holdout', 'public-holdout'],
  'round2-dev': ['classes-dev', 'public-dev'],
  round3: ['classes-holdout2'],
  round4: ['classes-holdout3'],
  round5: ['classes-holdout4'],
  round6: ['classes-holdout5'],
  round7: ['classes-holdout6'],
  round8: ['classes-holdout7'],
  round9: ['classes-holdout8'],
  round10: ['classes-holdout9'],
  round11: ['classes-holdout10'],
  round12: ['classes-holdout11'],
};
const ALL_SETS: readonly string[] = [...SET_NAMES, ...CLASS_SET_NAMES];
const sets = (args.set as string).split(',').flatMap((name) => ALIASES[name] ?? [name as AnySet]);
for (const name of sets)
  if (!ALL_SETS.includes(name))
    fail(`--set must name ${[...ALL_SETS, ...Object.keys(ALIASES)].join(', ')}, not ${name}`);
const set = sets.join(',');
const threshold = args.threshold === undefined ? loadSettings({}).SEMANTIC_CACHE_THRESHOLD : Number(args.threshold);
if (!(threshold >= 0 && threshold <= 1)) fail(`--threshold must be between 0 and 1, not ${args.threshold}`);
const limit = args.limit === undefined ? Infinity : Number(args.limit);
if (!(limit > 0)) fail(`--limit must be a positive number, not ${args.limit}`);

function fail(message: string): never {
  process.stderr.write(`semantic-eval: ${message}\n`);
  process.exit(2);
}

/**
 * The folder holding the q8 MiniLM weights: the one named by EMBEDDING_MODEL_PATH (the gateway's
 * variable) or EMBEDDING_TEST_MODELS (the tests'), else the export script's default or shared/models.
 * A folder named by a variable is the only one tried, so a wrong path is an error, not a silent fallback.
 */
function modelFolder(): string {
  const named = process.env.EMBEDDING_MODEL_PATH || process.env.EMBEDDING_TEST_MODELS;
  const candidates = named ? [named] : [join(ROOT, '.tools/models'), join(ROOT, '../shared/models')];
  const found = candidates.find((dir) => existsSync(join(dir, MINILM, 'onnx', 'model_quantized.onnx')));
  if (found) return resolve(found);
  return fail(
    `the real embedding model is missing: no ${MINILM}/onnx/model_quantized.onnx under ${candidates.join(', ')}.\n` +
      'Build it with `bash scripts/export-minilm-onnx.sh` (writes .tools/models, a few minutes), or copy the upstream q8 file\n' +
      '(docs/caches.md "Getting the model"), then run again, with EMBEDDING_MODEL_PATH=<folder> if it is elsewhere.',
  );
}

/** Round-robin over categories, so `--limit` still samples every category. */
function interleave(pairs: readonly Pair[]): Pair[] {
  const queues = new Map<string, Pair[]>();
  for (const p of pairs) queues.set(p.category, [...(queues.get(p.category) ?? []), p]);
  const out: Pair[] = [];
  while (out.length < pairs.length)
    for (const queue of queues.values()) if (queue.length) out.push(queue.shift() as Pair);
  return out;
}

/** A well-formed API key (`gw_` + 43 characters) of its own per pair: one owner, one cache partition. */
function keyOf(index: number): string {
  return `gw_semantic_eval_${String(index).padStart(6, '0')}`.padEnd(46, 'x');
}

const ADMIN_KEY = 'gw_semantic_eval_admin'.padEnd(46, 'x');
const UPSTREAM_KEY = 'semantic-eval-upstream';

const readAny = (name: AnySet): Pair[] =>
  (CLASS_SET_NAMES as readonly string[]).includes(name)
    ? readClassSet(name as ClassSetName)
    : readPairSet(name as SetName);
/** The set each pair comes from, for the per-set report. */
const setOf = new Map<string, AnySet>();
const pairs = sets.flatMap((name) => {
  const own = interleave(readAny(name)).slice(0, limit);
  for (const pair of own) setOf.set(pair.id, name);
  return own;
});
const models = modelFolder();
process.stdout.write(
  `semantic-eval: ${pairs.length} pairs of ${set}, threshold ${threshold}, model ${models}/${MINILM} (q8)\n`,
);

const upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY, record: false });
const prefix = uniquePrefix('semantic-eval');
const gateway = await startGateway({
  env: {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: pairs.map((_, i) => keyOf(i)).join(','),
    ADMIN_API_KEYS: ADMIN_KEY,
    PROVIDER_A_API_KEY: UPSTREAM_KEY,
    // Two requests per key; the limit only must not get in the way.
    RATE_LIMIT_REQUESTS: '1000',
    LOG_LEVEL: 'error',
    EMBEDDING_BACKEND: 'onnx',
    EMBEDDING_MODEL_PATH: models,
    ...(args.threshold === undefined ? {} : { SEMANTIC_CACHE_THRESHOLD: String(threshold) }),
    // The first stage below is recomputed from this process's settings: the gateway must use the same.
    ...(process.env.SEMANTIC_CACHE_RETRIEVER_THRESHOLD
      ? { SEMANTIC_CACHE_RETRIEVER_THRESHOLD: process.env.SEMANTIC_CACHE_RETRIEVER_THRESHOLD }
      : {}),
  },
  config: {
    providers: [
      {
        name: 'provider_a',
        api_key_env: 'PROVIDER_A_API_KEY',
        base_url: upstream.url,
        models: ['a-4o'],
        max_retries: 0,
      },
    ],
  },
  providers: ['provider_a'],
});
const embedder = new OnnxEmbedder({ localModelPath: models, threads: 1 });
// The gateway's first stage, recomputed beside it when the gateway reports one.
const settings = loadSettings({ ...process.env, EMBEDDING_MODEL_PATH: models });
const retriever = createRetriever(settings);

async function cacheStats(): Promise<{
  semantic_cache: { status: string; error?: string; embedder?: string; retriever?: string | null; threshold?: number };
}> {
  const res = await fetch(`${gateway.baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN_KEY } });
  return (await res.json()) as never;
}

async function ask(key: string, content: string): Promise<{ cache: string; similarity?: number }> {
  const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content }] }),
  });
  const body = await res.text();
  if (res.status !== 200)
    throw new Error(`HTTP ${res.status} for ${JSON.stringify(content.slice(0, 60))}: ${body.slice(0, 300)}`);
  const similarity = res.headers.get('x-cache-similarity');
  return {
    cache: res.headers.get('x-cache') ?? '?',
    ...(similarity === null ? {} : { similarity: Number(similarity) }),
  };
}

async function similarity(a: string, b: string): Promise<number> {
  // One text per call, as the gateway embeds a lone request, so both sides compute the same vectors.
  const [va] = await embedder.embed([a]);
  const [vb] = await embedder.embed([b]);
  return dot(va as Float32Array, vb as Float32Array);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

const outcomes: PairOutcome[] = [];
const started = Date.now();
try {
  await waitFor(
    async () => ['ready', 'unavailable'].includes((await cacheStats()).semantic_cache.status),
    120_000,
    'the semantic cache to load the model',
  );
  const stats = (await cacheStats()).semantic_cache;
  if (stats.status !== 'ready')
    throw new Error(`the gateway's semantic cache is ${stats.status}: ${stats.error ?? ''}`);
  await embedder.ready();
  const twoStages = Boolean(stats.retriever && retriever);
  if (twoStages) await retriever?.ready();
  for (const [i, pair] of pairs.entries()) {
    const key = keyOf(i);
    const first = await ask(key, pair.a);
    const second = await ask(key, pair.b);
    const [canonicalA, canonicalB] = [canonicalPrompt(pair.a), canonicalPrompt(pair.b)];
    const verdict = verifyCandidate(canonicalA.tokens, canonicalB.tokens);
    // With two stages the transformer compares the prompt with the typos and acronyms the verifier explained corrected.
    const compared = twoStages && verdict.ok && verdict.corrected ? verdict.corrected.join(' ') : canonicalB.text;
    outcomes.push({
      id: pair.id,
      category: pair.category,
      label: pair.label,
      cacheA: first.cache,
      cacheB: second.cache,
      ...(second.similarity === undefined ? {} : { gatewaySimilarity: second.similarity }),
      // The gateway embeds and verifies the canonical form of each prompt; so does the recomputation.
      rawSimilarity: await similarity(canonicalA.text, compared),
      ...(twoStages && retriever
        ? {
            firstStage: {
              similarity: dot(retriever.embed(canonicalA.text), retriever.embed(canonicalB.text)),
              threshold: settings.SEMANTIC_CACHE_RETRIEVER_THRESHOLD,
            },
          }
        : {}),
      guardsAgree: guardSignatureOf(pair.a) === guardSignatureOf(pair.b),
      verified: verdict.ok,
    });
    if ((i + 1) % 50 === 0) process.stderr.write(`  ${i + 1}/${pairs.length}\n`);
  }
  const embedderId = twoStages
    ? `${stats.retriever} (first stage, >= ${settings.SEMANTIC_CACHE_RETRIEVER_THRESHOLD}) then ${stats.embedder}`
    : (stats.embedder ?? '?');
  const all = outcomes.splice(0);
  for (const name of sets) {
    outcomes.push(...all.filter((o) => setOf.get(o.id) === name));
    report(embedderId, name);
    outcomes.splice(0);
  }
} finally {
  await embedder.close();
  await gateway.stop();
  await upstream.close();
  const redis = testRedis();
  await deletePrefix(redis, prefix);
  redis.disconnect();
}

function report(embedderId: string, set: string): void {
  const rows = categoryRows(outcomes, threshold);
  const total = totals(outcomes);
  const points = curve(outcomes);
  const out = process.stdout;
  out.write(
    `\nSemantic cache evaluation, ${set} set: ${outcomes.length} pairs, embedder ${embedderId}, threshold ${threshold}, guards and verifier on, exact cache on\n`,
  );
  out.write(
    `${new Date().toISOString().slice(0, 10)}, ${hostname()}, Node ${process.versions.node}, ${((Date.now() - started) / 1000).toFixed(0)} s\n\n`,
  );
  out.write(`${formatCategoryTable(rows)}\n\n${formatTotals(total)}\n\n`);
  out.write(
    'Threshold curve (decision recomputed: exact hit, or similarity >= t, the guards agree and the verifier accepts; with two stages, only first-stage candidates):\n\n',
  );
  out.write(`${formatCurve(points)}\n`);
  // Checks of the run itself: nothing leaked between pairs, and the recomputed decision is the gateway's.
  const leaked = outcomes.filter((o) => o.cacheA !== 'MISS');
  const differing = disagreements(outcomes, threshold);
  const drift = outcomes.filter(
    (o) => o.gatewaySimilarity !== undefined && Math.abs(o.gatewaySimilarity - o.rawSimilarity) > 0.0005,
  );
  out.write(
    `\nchecks: first request not a MISS: ${leaked.length}; recomputed decision differs from the gateway's: ${differing.length}; similarity header vs recomputed differ by > 0.0005: ${drift.length}\n`,
  );
  for (const o of [...leaked, ...differing, ...drift])
    out.write(
      `  ${o.id}: a=${o.cacheA} b=${o.cacheB} header=${o.gatewaySimilarity ?? '-'} raw=${o.rawSimilarity.toFixed(4)} guards=${o.guardsAgree} verified=${o.verified}\n`,
    );
  if (args.json) {
    const file = sets.length > 1 ? args.json.replace(/(\.json)?$/, `.${set}.json`) : args.json;
    writeFileSync(
      file,
      JSON.stringify(
        {
          set,
          threshold,
          embedder: embedderId,
          date: new Date().toISOString(),
          categories: rows,
          totals: total,
          curve: points,
          pairs: outcomes,
        },
        null,
        2,
      ),
    );
    out.write(`\nwritten ${file}\n`);
  }
}
