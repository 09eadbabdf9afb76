import { describe, expect, it } from 'vitest';
import { longPairs } from '../../eval/semantic/generate-long.ts';
import {
  CATEGORIES,
  GENERATED_CATEGORIES,
  parsePairs,
  readPairSet,
  SET_NAMES,
  type Pair,
  type SetName,
} from '../../eval/semantic/pair-set.ts';

/**
 * The labelled pairs of the semantic-cache evaluation (eval/semantic/): well
 * formed, enough of every kind in the held-out sets (test, holdout2 to
 * holdout7), and all files disjoint, so tuning cannot leak into the held-out figures.
 */

const sets = Object.fromEntries(SET_NAMES.map((set) => [set, readPairSet(set)])) as Record<SetName, Pair[]>;
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const texts = (pairs: readonly Pair[]) => pairs.flatMap((p) => [p.a, p.b]);
const countBy = (pairs: readonly Pair[]) =>
  pairs.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.category]: (acc[p.category] ?? 0) + 1 }), {});

describe('semantic evaluation pair sets', () => {
  it('parse against the schema, with ids unique across all files and naming their file', () => {
    const ids = SET_NAMES.flatMap((set) => sets[set]).map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const set of SET_NAMES) for (const p of sets[set]) expect(p.id.startsWith(`${set}-${p.category}-`)).toBe(true);
  });

  it('hold at least 450 test pairs with every category at least 15 times, and every category in dev', () => {
    expect(sets.test.length).toBeGreaterThanOrEqual(450);
    const test = countBy(sets.test);
    const dev = countBy(sets.dev);
    for (const category of Object.keys(CATEGORIES)) {
      expect(test[category] ?? 0, category).toBeGreaterThanOrEqual(15);
      expect(dev[category] ?? 0, category).toBeGreaterThanOrEqual(5);
    }
  });

  // The hand-written held-out sets: at least this many pairs, each category at least this often, and
  // long pairs of at least 150 words with at least this many per long category past 450 words (well
  // past the 512 tokens the model reads).
  const handWritten = [
    { set: 'holdout2', pairs: 160, perCategory: 5, pastWindow: 3, perLongCategory: false },
    { set: 'holdout3', pairs: 230, perCategory: 8, pastWindow: 4, perLongCategory: true },
    { set: 'holdout4', pairs: 240, perCategory: 10, pastWindow: 4, perLongCategory: true },
    { set: 'holdout5', pairs: 240, perCategory: 10, pastWindow: 5, perLongCategory: true },
    { set: 'holdout6', pairs: 240, perCategory: 10, pastWindow: 5, perLongCategory: true },
    { set: 'holdout7', pairs: 240, perCategory: 10, pastWindow: 5, perLongCategory: true },
  ] as const;

  it.each(handWritten)(
    'hold at least $pairs $set pairs, about half near misses, every category at least $perCategory times',
    ({ set, pairs, perCategory }) => {
      expect(sets[set].length).toBeGreaterThanOrEqual(pairs);
      const nearMisses = sets[set].filter((p) => p.label === 'near_miss').length / sets[set].length;
      expect(nearMisses).toBeGreaterThan(0.4);
      expect(nearMisses).toBeLessThan(0.6);
      const counts = countBy(sets[set]);
      for (const category of Object.keys(CATEGORIES))
        expect(counts[category] ?? 0, category).toBeGreaterThanOrEqual(perCategory);
    },
  );

  it.each(handWritten)(
    'hold hand-written long pairs in $set, each prompt at least 150 words, some past the model window',
    ({ set, pastWindow, perLongCategory }) => {
      const long = sets[set].filter((p) => GENERATED_CATEGORIES.includes(p.category));
      for (const p of long) expect(Math.min(words(p.a), words(p.b)), p.id).toBeGreaterThanOrEqual(150);
      const groups = perLongCategory
        ? GENERATED_CATEGORIES.map((category) => long.filter((p) => p.category === category))
        : [long];
      for (const rows of groups)
        expect(rows.filter((p) => Math.min(words(p.a), words(p.b)) > 450).length).toBeGreaterThanOrEqual(pastWindow);
    },
  );

  it('rejects a line whose label contradicts its category, naming the line', () => {
    const good = JSON.stringify({ id: 'dev-p_case-01', category: 'p_case', label: 'paraphrase', a: 'Hi', b: 'hi' });
    const bad = JSON.stringify({ id: 'dev-p_case-02', category: 'p_case', label: 'near_miss', a: 'Yo', b: 'yo' });
    expect(() => parsePairs(`${good}\n${bad}\n`, 'x.jsonl')).toThrow(/x\.jsonl:2: label does not match the category/);
  });

  it('give every category one label', () => {
    for (const p of SET_NAMES.flatMap((set) => sets[set])) expect(p.label, p.id).toBe(CATEGORIES[p.category]);
  });

  it('share no prompt between files, even up to case and punctuation, and repeat none within a set', () => {
    const loose = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');
    for (const [i, one] of SET_NAMES.entries()) {
      for (const other of SET_NAMES.slice(i + 1)) {
        const seen = new Set(texts(sets[one]).map(loose));
        expect(
          texts(sets[other]).filter((t) => seen.has(loose(t))),
          `${one} / ${other}`,
        ).toEqual([]);
      }
    }
    for (const set of SET_NAMES) expect(new Set(texts(sets[set])).size).toBe(texts(sets[set]).length);
  });

  it('hold exactly the long pairs generate-long.ts writes', () => {
    for (const set of ['dev', 'test'] as const) {
      expect(sets[set].filter((p) => GENERATED_CATEGORIES.includes(p.category))).toEqual(longPairs(set));
    }
  });

  it.each(['holdout4', 'holdout5', 'holdout6', 'holdout7'] as const)(
    'hold %s short prompts of 4 to 50 words',
    (set) => {
      for (const p of sets[set].filter((q) => !GENERATED_CATEGORIES.includes(q.category))) {
        for (const text of [p.a, p.b]) {
          expect(words(text), p.id).toBeGreaterThanOrEqual(4);
          expect(words(text), p.id).toBeLessThanOrEqual(50);
        }
      }
    },
  );
});
