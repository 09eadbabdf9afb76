import { bloomPositions, HASHES } from './dictionary/bloom.ts';
import { ENGLISH_WORD_BITS, ENGLISH_WORD_FILTER } from './dictionary/english-words.ts';

/**
 * Whether a word is English, as the semantic-cache verifier needs it to tell a
 * typo from another word: "recieve" is no word, so it may stand for "receive";
 * "house" is one, so it never stands for "horse". The list is WordNet's
 * single-word lemmas with the words WordNet leaves out (see
 * `scripts/build-english-words.ts`); an inflected form is a word when
 * stripping its ending as WordNet's `morphy` does gives one (`horses`,
 * `running`, `bigger`).
 */

/**
 * Endings stripped to find a lemma, with what replaces them and the part of speech the lemma must
 * have (`v:` verb, `a:` adjective, '' any): `morphy`'s rules, and doubled consonants.
 */
const ENDINGS: ReadonlyArray<readonly [suffix: string, replacement: string, tag: string]> = [
  ['s', '', ''],
  ['es', '', ''],
  ['ies', 'y', ''],
  ['ses', 's', ''],
  ['xes', 'x', ''],
  ['zes', 'z', ''],
  ['ches', 'ch', ''],
  ['shes', 'sh', ''],
  ['men', 'man', ''],
  ['ed', '', 'v:'],
  ['ed', 'e', 'v:'],
  ['ied', 'y', 'v:'],
  ['ing', '', 'v:'],
  ['ing', 'e', 'v:'],
  ['er', '', 'a:'],
  ['er', 'e', 'a:'],
  ['ier', 'y', 'a:'],
  ['est', '', 'a:'],
  ['est', 'e', 'a:'],
  ['iest', 'y', 'a:'],
];

let filter: Uint8Array | undefined;

function stored(word: string): boolean {
  filter ??= new Uint8Array(Buffer.from(ENGLISH_WORD_FILTER, 'base64'));
  const bits = filter;
  return bloomPositions(word, ENGLISH_WORD_BITS, HASHES).every(
    (position) => ((bits[position >> 3] as number) & (1 << (position & 7))) !== 0,
  );
}

/** Whether `word` (any case) is an English word or a regular inflection of one. */
export function isEnglishWord(word: string): boolean {
  const lower = word.toLowerCase();
  if (!/^[a-z]+$/.test(lower)) return false;
  if (stored(lower)) return true;
  for (const [suffix, replacement, tag] of ENDINGS) {
    if (lower.length <= suffix.length + 1 || !lower.endsWith(suffix)) continue;
    const stem = lower.slice(0, -suffix.length);
    if (stored(tag + stem + replacement)) return true;
    // A doubled final consonant after a one-syllable stem: `stopped`, `running`, `bigger` (not "gardenning").
    const single = stem.slice(0, -1);
    if (
      replacement === '' &&
      stem.length > 2 &&
      stem.at(-1) === stem.at(-2) &&
      (single.match(/[aeiouy]+/g) ?? []).length === 1 &&
      stored(tag + single)
    )
      return true;
  }
  return false;
}

/** Whether `word` (lower case) is an adverb in WordNet: `quickly` is, `butterfly` and `family` are not. */
export function isEnglishAdverb(word: string): boolean {
  return /^[a-z]+$/.test(word) && stored(`r:${word}`);
}
