/**
 * The hashing of the word filters (`english-words.ts` and the other languages' beside this
 * file), shared by their generators and readers so both set and test the same
 * bits: FNV-1a with two offsets, combined by double hashing.
 */

/** Bits per stored word: with {@link HASHES} hashes, about 0.05 % false positives. */
export const BITS_PER_WORD = 16;
export const HASHES = 11;

/** The same for the other languages' filters (`../other-dictionaries.ts`), ten times longer lists: about 1 % false positives. */
export const OTHER_WORD_BITS_PER_WORD = 10;
export const OTHER_WORD_HASHES = 7;

function fnv1a(text: string, seed: number): number {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The `hashes` bit positions of `word` in a filter of `bits` bits. */
function bloomPositions(word: string, bits: number, hashes: number): number[] {
  const a = fnv1a(word, 0x811c9dc5);
  const b = fnv1a(word, 0x9747b28c) | 1;
  const out: number[] = [];
  for (let i = 0; i < hashes; i++) out.push((a + Math.imul(i, b)) >>> 0);
  return out.map((h) => h % bits);
}

/** A filter of `bits` bits with the `hashes` bits of each of `words` set: what the generators write. */
export function bloomFilter(words: Iterable<string>, bits: number, hashes: number): Uint8Array {
  const filter = new Uint8Array(bits / 8);
  for (const word of words)
    for (const position of bloomPositions(word, bits, hashes))
      filter[position >> 3] = (filter[position >> 3] as number) | (1 << (position & 7));
  return filter;
}

/** Whether every bit of `word` is set in `filter`: the word was stored, or is a false positive. */
export function bloomHas(filter: Uint8Array, bits: number, hashes: number, word: string): boolean {
  return bloomPositions(word, bits, hashes).every(
    (position) => ((filter[position >> 3] as number) & (1 << (position & 7))) !== 0,
  );
}
