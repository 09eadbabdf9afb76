import { describe, expect, it } from 'vitest';
import { CLASS_CATEGORIES, CLASS_SET_NAMES, readClassSet, type ClassSetName } from '../../eval/semantic/class-set.ts';
import { readPairSet, SET_NAMES, type Pair } from '../../eval/semantic/pair-set.ts';

/**
 * The second-round pair sets (eval/semantic/README.md, "Second round"): well
 * formed, every class in both parts, and no prompt shared with another file,
 * so tuning on one part cannot leak into the held-out figures.
 */

const sets = Object.fromEntries(CLASS_SET_NAMES.map((set) => [set, readClassSet(set)])) as Record<ClassSetName, Pair[]>;
const texts = (pairs: readonly Pair[]) => pairs.flatMap((p) => [p.a, p.b]);
const loose = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
const countBy = (pairs: readonly Pair[]) =>
  pairs.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.category]: (acc[p.category] ?? 0) + 1 }), {});

describe('second-round semantic pair sets', () => {
  it('parse, with ids unique across the files and naming their file', () => {
    const ids = CLASS_SET_NAMES.flatMap((set) => sets[set].map((p) => p.id));
    expect(new Set(ids).size).toBe(ids.length);
    for (const set of CLASS_SET_NAMES)
      for (const p of sets[set]) expect(p.id.startsWith(`${set}-${p.category}-`), p.id).toBe(true);
  });

  it('hold every hand-written class in both parts, twice as often held out as in dev', () => {
    const handWritten = Object.keys(CLASS_CATEGORIES).filter((c) => !c.startsWith('pub_'));
    const [dev, held] = [countBy(sets['classes-dev']), countBy(sets['classes-holdout'])];
    for (const category of handWritten) {
      expect(dev[category] ?? 0, category).toBeGreaterThanOrEqual(10);
      expect(held[category] ?? 0, category).toBeGreaterThanOrEqual(20);
    }
  });

  it('hold both labels of both public corpora in both parts', () => {
    for (const set of ['public-dev', 'public-holdout'] as const) {
      const counts = countBy(sets[set]);
      for (const category of ['pub_ko_duplicate', 'pub_ko_different'])
        expect(counts[category] ?? 0, `${set} ${category}`).toBeGreaterThanOrEqual(40);
    }
  });

  it('share no prompt with each other or the first-round sets, even up to case and punctuation', () => {
    const all = [
      ...CLASS_SET_NAMES.map((set) => [set, sets[set]] as const),
      ...SET_NAMES.map((set) => [set, readPairSet(set)] as const),
    ];
    for (const [i, [one, pairs]] of all.entries()) {
      const seen = new Set(texts(pairs).map(loose));
      for (const [other, others] of all.slice(i + 1))
        expect(
          texts(others).filter((t) => seen.has(loose(t))),
          `${one} / ${other}`,
        ).toEqual([]);
    }
  });
});
