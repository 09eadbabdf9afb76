import { DlpEngine } from '../src/dlp/engine.ts';
import { evaluate } from '../test/dlp/support/evaluate.ts';
import { generateEvalSet } from '../test/dlp/support/eval-set.ts';

/**
 * `npm run dlp:eval [-- --threshold 0.8 --per-generator 200 --seed 1 --errors]`:
 * generates the labelled set of test/dlp/support/eval-set.ts, runs the
 * default engine over it and prints precision and recall per entity type.
 * `--errors` also prints every miss and false finding (synthetic data only).
 */
function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? Number(process.argv[i + 1]) : fallback;
}

const threshold = flag('threshold', 0.8);
const samples = generateEvalSet({ seed: flag('seed', 20240607), perGenerator: flag('per-generator', 200) });
const { scores, errors } = evaluate(new DlpEngine(), samples, threshold);

const positives = samples.filter((s) => s.kind === 'positive').length;
process.stdout.write(`DLP evaluation: ${samples.length} samples (${positives} positive, ${samples.length - positives} look-alike), threshold ${threshold}\n\n`);
process.stdout.write('| entity | TP | FP | FN | precision | recall |\n|---|---:|---:|---:|---:|---:|\n');
for (const s of scores) {
  process.stdout.write(`| ${s.entity} | ${s.truePositives} | ${s.falsePositives} | ${s.falseNegatives} | ${s.precision.toFixed(3)} | ${s.recall.toFixed(3)} |\n`);
}
if (process.argv.includes('--errors')) {
  process.stdout.write('\n');
  for (const e of errors) process.stdout.write(`${e.kind} ${e.entity} [${e.generator}] ${JSON.stringify(e.text)}\n`);
}
