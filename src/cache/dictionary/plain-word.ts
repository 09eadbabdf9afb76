import { withoutAccents } from '../prompt-other-languages.ts';

/** A word as the other languages' filters store it: lower case, without accents, ligatures written out (`sœur` as `soeur`). */
export function plainWord(word: string): string {
  return withoutAccents(word.toLowerCase()).replaceAll('œ', 'oe').replaceAll('æ', 'ae');
}
