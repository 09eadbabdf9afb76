import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRetriever } from '../src/cache/create-response-cache.ts';
import { OnnxEmbedder } from '../src/cache/embedders/onnx-embedder.ts';
import { canonicalPrompt } from '../src/cache/prompt-canonical.ts';
import { guardSignatureOf } from '../src/cache/prompt-guards.ts';
import { promptLanguage } from '../src/cache/prompt-language.ts';
import { MAX_DIFFERING_WORDS, promptSize, verifyCandidate } from '../src/cache/prompt-verifier.ts';
import { loadSettings } from '../src/config/settings.ts';
import { CLASS_SET_NAMES, readClassSet, type ClassSetName } from '../eval/semantic/class-set.ts';
import { readPairSet, SET_NAMES, type Pair, type SetName } from '../eval/semantic/pair-set.ts';

/**
 * `node --experimental-strip-types scripts/pair-judge-candidates.ts --set classes-dev,dev --out pairs.jsonl`
 *
 * The offline half of the learned pair judge's evaluation (docs/decisions/learned-pair-judge.md):
 * for every pair of the named tuning sets, what the cache's own stages say of `b` looked up
 * against a stored `a`, without a gateway: whether the first stage proposes `a` (guards agree,
 * sizes within the verifier's tolerance, static similarity at or above the retriever threshold),
 * the verifier's verdict and reason, and the second-stage (transformer) similarity. One JSON line
 * per pair, written to `--out`; `scripts/pair-judge-eval.py` adds the judge's probability.
 */

const { values: args } = parseArgs({ options: { set: { type: 'string' }, out: { type: 'string' } } });
const HELD_OUT = new Set(['holdout7', 'classes-holdout', 'public-holdout']);
const names = (args.set ?? '').split(',').filter(Boolean);
if (names.length === 0 || !args.out) throw new Error('usage: --set <tuning set>[,...] --out <file.jsonl>');
for (const name of names) {
  if (HELD_OUT.has(name))
    throw new Error(`${name} is held out: it is run once through npm run eval:semantic, never here`);
  if (![...SET_NAMES, ...CLASS_SET_NAMES].includes(name as SetName)) throw new Error(`unknown set ${name}`);
}

const models = resolve(process.env.EMBEDDING_MODEL_PATH || process.env.EMBEDDING_TEST_MODELS || '.tools/models');
const settings = loadSettings({ ...process.env, EMBEDDING_BACKEND: 'onnx', EMBEDDING_MODEL_PATH: models });
const retriever = createRetriever(settings);
if (!retriever) throw new Error('no first-stage retriever in these settings');
await retriever.ready();
const embedder = new OnnxEmbedder({ localModelPath: models, threads: 1 });
await embedder.ready();

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);
const lines: string[] = [];
for (const name of names) {
  const pairs: Pair[] = (CLASS_SET_NAMES as readonly string[]).includes(name)
    ? readClassSet(name as ClassSetName)
    : readPairSet(name as SetName);
  for (const pair of pairs) {
    const [a, b] = [canonicalPrompt(pair.a), canonicalPrompt(pair.b)];
    const verdict = verifyCandidate(a.tokens, b.tokens);
    const firstStage = dot(retriever.embed(a.text), retriever.embed(b.text));
    const [va] = await embedder.embed([a.text]);
    const [vb] = await embedder.embed([verdict.ok && verdict.corrected ? verdict.corrected.join(' ') : b.text]);
    lines.push(
      JSON.stringify({
        set: name,
        id: pair.id,
        category: pair.category,
        label: pair.label,
        a: pair.a,
        b: pair.b,
        canonicalA: a.text,
        canonicalB: b.text,
        exact: a.text === b.text,
        english: promptLanguage(a.tokens) === 'en' && promptLanguage(b.tokens) === 'en',
        tokensA: a.tokens,
        tokensB: b.tokens,
        guardsAgree: guardSignatureOf(pair.a) === guardSignatureOf(pair.b),
        sizeOk: Math.abs(promptSize(a.tokens) - promptSize(b.tokens)) <= MAX_DIFFERING_WORDS,
        firstStage,
        proposed: firstStage >= settings.SEMANTIC_CACHE_RETRIEVER_THRESHOLD,
        verified: verdict.ok,
        reason: verdict.ok ? 'verified' : verdict.reason,
        similarity: dot(va as Float32Array, vb as Float32Array),
      }),
    );
  }
  process.stderr.write(`${name}: ${pairs.length} pairs\n`);
}
writeFileSync(args.out, `${lines.join('\n')}\n`);
await embedder.close();
