/**
 * Measures the semantic-cache verifier's typo folding in German on real typos: a list of misspelled words
 * and their corrections that another project published (`Error_List.csv` of
 * `blueberryhub92/Spelling-correction-of-short-German-queries-by-means-of-phonetic-similarity-search`, 967
 * words misspelled in user search queries; not shipped here, its licence is unstated). Each word of one
 * edit is put into the same German question twice, corrected and as misspelled (with the corrected word's
 * first-letter case), and the verifier is asked whether the cached corrected prompt answers the misspelled one.
 *
 *   node --experimental-strip-types scripts/semantic-typo-eval.ts --file <Error_List.csv>
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isWordOf } from '../src/cache/other-dictionaries.ts';
import { canonicalPrompt } from '../src/cache/prompt-canonical.ts';
import { verifyCandidate } from '../src/cache/prompt-verifier.ts';

const { values: args } = parseArgs({ options: { file: { type: 'string' } } });
if (!args.file) {
  console.error('usage: scripts/semantic-typo-eval.ts --file <Error_List.csv>');
  process.exit(2);
}

const question = (word: string) => `Wo finde ich ${word} in der Stadt?`;
const rows = readFileSync(args.file, 'utf8').split('\n').slice(1).filter(Boolean);
const counts = { pairs: 0, folded: 0, misspellingIsWord: 0, correctionUnknown: 0, other: 0 };
const missed: string[] = [];
for (const row of rows) {
  const [, error, correct, , , , , edits] = row.trim().split(';');
  if (!error || !correct || edits !== '1' || correct.includes(' ')) continue;
  const lower = error.toLowerCase();
  if (lower === correct.toLowerCase()) continue;
  const typed = /^\p{Lu}/u.test(correct) ? `${lower[0]?.toUpperCase()}${lower.slice(1)}` : lower;
  counts.pairs++;
  const verdict = verifyCandidate(canonicalPrompt(question(correct)).tokens, canonicalPrompt(question(typed)).tokens);
  if (verdict.ok) counts.folded++;
  else {
    missed.push(`${typed} / ${correct}`);
    if (isWordOf('de', typed)) counts.misspellingIsWord++;
    else if (!isWordOf('de', correct)) counts.correctionUnknown++;
    else counts.other++;
  }
}
const share = (n: number) => `${((100 * n) / counts.pairs).toFixed(1)} %`;
console.log(`misspellings of one edit: ${counts.pairs}`);
console.log(`folded (served the corrected prompt's answer): ${counts.folded} (${share(counts.folded)})`);
console.log(`not folded, the misspelling is in the German list: ${counts.misspellingIsWord}`);
console.log(`not folded, the correction is not in the list: ${counts.correctionUnknown}`);
console.log(`not folded, other (first letter, not a slip of the finger on QWERTZ): ${counts.other}`);
console.log(`missed, first 40: ${missed.slice(0, 40).join(', ')}`);
