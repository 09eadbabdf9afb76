import { DlpEngine } from '../src/dlp/engine.ts';
import { ENTITY_TYPES } from '../src/dlp/entities.ts';
import { evaluate } from '../test/dlp/support/evaluate.ts';
import { generateEvalSet, type EvalSample } from '../test/dlp/support/eval-set.ts';
import { generateHoldoutSet, type HoldoutSplit } from '../test/dlp/support/holdout-set.ts';
import { runPublicEval } from './dlp-eval-public.ts';

/**
 * `npm run eval:dlp [-- --set holdout|calibration --split test|dev --size 1500 --threshold 0.8 --seed N --errors]`:
 * runs the engine over a generated labelled set and prints
 * precision, recall and F1 per entity type.
 *
 * - `--set holdout` (default): test/dlp/support/holdout-set.ts, split `test`
 *   (measured only) or `dev` (what rules may be tuned on).
 * - `--set calibration`: test/dlp/support/eval-set.ts, the set the first
 *   rules were calibrated on (`--per-generator 200`).
 *
 * - `--set public`: labelled data the project did not write, with or without
 *   a Presidio analyzer (`--analyzer URL`); see scripts/dlp-eval-public.ts.
 *
 * `--errors` also prints every miss and false finding (synthetic data only).
 */
function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const num = (name: string, fallback: number) => (flag(name) === undefined ? fallback : Number(flag(name)));

const threshold = num('threshold', 0.8);
const set = flag('set') ?? 'holdout';
if (set === 'public') {
  await runPublicEval();
  process.exit(0);
}
const split = (flag('split') ?? 'test') as HoldoutSplit;
if (set !== 'holdout' && set !== 'calibration') throw new Error(`--set must be holdout or calibration, got ${set}`);
if (split !== 'dev' && split !== 'test') throw new Error(`--split must be dev or test, got ${split}`);
const seed = flag('seed') === undefined ? undefined : Number(flag('seed'));
const samples: EvalSample[] =
  set === 'holdout'
    ? generateHoldoutSet({ split, size: num('size', 1500), ...(seed === undefined ? {} : { seed }) })
    : generateEvalSet({ seed: seed ?? 20240607, perGenerator: num('per-generator', 200) });
// The held-out set labels people, so it is run with every type, the opt-in ones (PERSON) included;
// the calibration set does not, so it is run with the default types.
const engine = set === 'holdout' ? new DlpEngine({ entities: ENTITY_TYPES }) : new DlpEngine();
const { scores, errors } = evaluate(engine, samples, threshold);

const label = set === 'holdout' ? `held-out set, split ${split}` : 'calibration set';
process.stdout.write(`DLP evaluation on the ${label}: ${samples.length} samples, threshold ${threshold}\n\n`);
process.stdout.write('| entity | TP | FP | FN | precision | recall | F1 |\n|---|---:|---:|---:|---:|---:|---:|\n');
for (const s of scores) {
  process.stdout.write(
    `| ${s.entity} | ${s.truePositives} | ${s.falsePositives} | ${s.falseNegatives} | ${s.precision.toFixed(3)} | ${s.recall.toFixed(3)} | ${s.f1.toFixed(3)} |\n`,
  );
}
if (process.argv.includes('--errors')) {
  process.stdout.write('\n');
  for (const e of errors) process.stdout.write(`${e.kind} ${e.entity} [${e.generator}] ${JSON.stringify(e.text)}\n`);
}
