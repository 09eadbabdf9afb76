import { bloomHas, HASHES } from './dictionary/bloom.ts';
import { ENGLISH_WORD_BITS, ENGLISH_WORD_FILTER } from './dictionary/english-words.ts';
import { isWordOrInflection } from './dictionary/inflections.ts';

/**
 * Whether a word is English, as the semantic-cache verifier needs it to tell a
 * typo from another word: "recieve" is no word, so it may stand for "receive";
 * "house" is one, so it never stands for "horse". The list is WordNet's
 * single-word lemmas with the words WordNet leaves out (see
 * `scripts/build-english-words.ts`); an inflected form is a word when
 * stripping its ending as WordNet's `morphy` does gives one (`horses`,
 * `running`, `bigger`).
 */

let filter: Uint8Array | undefined;

function stored(word: string): boolean {
  filter ??= new Uint8Array(Buffer.from(ENGLISH_WORD_FILTER, 'base64'));
  return bloomHas(filter, ENGLISH_WORD_BITS, HASHES, word);
}

/** Whether `word` (any case) is an English word or a regular inflection of one. */
export function isEnglishWord(word: string): boolean {
  const lower = word.toLowerCase();
  return /^[a-z]+$/.test(lower) && isWordOrInflection(lower, stored);
}

/** Whether `word` (lower case) is an adverb in WordNet: `quickly` is, `butterfly` and `family` are not. */
export function isEnglishAdverb(word: string): boolean {
  return /^[a-z]+$/.test(word) && stored(`r:${word}`);
}
