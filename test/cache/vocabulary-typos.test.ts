import { describe, expect, it } from 'vitest';
import { nearestWholeWord } from '../../src/cache/embedders/vocabulary-typos.ts';
import { WordPieceTokenizer } from '../../src/cache/embedders/wordpiece.ts';

const vocab = ['[UNK]', 'the', 'cases', 'causes', 'theory', 'sheory', '##roy', 'panels', 'cat', 'catalog', 'x'];
const ids = new Map(vocab.map((token, id) => [token, id]));

describe('nearestWholeWord', () => {
  it('finds the whole word one deletion, insertion, substitution or swap away', () => {
    expect(nearestWholeWord('theroy', ids)).toBe(ids.get('theory'));
    expect(nearestWholeWord('pannels', ids)).toBe(ids.get('panels'));
    expect(nearestWholeWord('panls', ids)).toBe(ids.get('panels'));
    expect(nearestWholeWord('pamels', ids)).toBe(ids.get('panels'));
  });

  it('picks the lowest id among several neighbours (frequent words come first in the vocabulary)', () => {
    // "casues" is one swap from "causes" and one deletion from "cases".
    expect(nearestWholeWord('casues', ids)).toBe(ids.get('cases'));
  });

  it('keeps the first letter, and leaves whole words, short words, non-letters and far words alone', () => {
    expect(nearestWholeWord('xheory', ids)).toBeUndefined();
    expect(nearestWholeWord('theory', ids)).toBeUndefined();
    expect(nearestWholeWord('cas', ids)).toBeUndefined();
    expect(nearestWholeWord('the0ry', ids)).toBeUndefined();
    expect(nearestWholeWord('catalogues', ids)).toBeUndefined();
  });
});

describe('WordPieceTokenizer typoTolerant', () => {
  it('reads an unknown word as its vocabulary neighbour only when asked', () => {
    expect(new WordPieceTokenizer(vocab).encode('the theroy')).toEqual([1, 1, 6]);
    expect(new WordPieceTokenizer(vocab, { typoTolerant: true }).encode('the theroy')).toEqual([1, 4]);
  });

  it('reads letters that decompose to no base letter as the letter typed without a keyboard for them, only when asked', () => {
    const letters = ['[UNK]', 'kisa', 'kı', '##sa'];
    expect(new WordPieceTokenizer(letters, { typoTolerant: true }).encode('kısa')).toEqual([1]);
    expect(new WordPieceTokenizer(letters).encode('kısa')).toEqual([2, 3]);
  });
});
