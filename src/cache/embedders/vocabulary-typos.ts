/** Shortest word corrected: shorter words are too often another word one edit away. */
const MIN_LETTERS = 4;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * The id of the whole word of a WordPiece vocabulary that is one edit
 * (deletion, insertion, substitution or swap of neighbours) from `word`, with
 * the same first letter; among several, the lowest id (BERT's vocabulary
 * lists frequent words first). Undefined when `word` is itself a whole word,
 * is not plain lower-case letters, or has no such neighbour.
 *
 * Why: WordPiece splits a typo into unrelated pieces ("theroy" is `the`
 * `##roy`), so the static first stage scores "explain the theroy of
 * relativty" 0.3 against its correct spelling and never proposes it, though
 * the verifier would accept it as a typo. Reading the typo as its nearest
 * vocabulary word only moves first-stage vectors; what is served is still
 * decided by the verifier and the transformer.
 */
export function nearestWholeWord(word: string, ids: ReadonlyMap<string, number>): number | undefined {
  if (word.length < MIN_LETTERS || ids.has(word) || !/^[a-z]+$/.test(word)) return undefined;
  let best: number | undefined;
  const consider = (candidate: string) => {
    const id = ids.get(candidate);
    if (id !== undefined && (best === undefined || id < best)) best = id;
  };
  for (let i = 1; i <= word.length; i++) {
    const head = word.slice(0, i);
    const tail = word.slice(i);
    if (i < word.length) {
      consider(head + word.slice(i + 1));
      if (i + 1 < word.length) consider(head + (word[i + 1] as string) + (word[i] as string) + word.slice(i + 2));
    }
    for (const letter of LETTERS) {
      consider(head + letter + tail);
      if (i < word.length && letter !== word[i]) consider(head + letter + word.slice(i + 1));
    }
  }
  return best;
}
