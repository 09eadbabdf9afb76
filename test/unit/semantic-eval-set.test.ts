import { describe, expect, it } from 'vitest';
import { longPairs } from '../../eval/semantic/generate-long.ts';
import { CATEGORIES, GENERATED_CATEGORIES, parsePairs, readPairSet, SET_NAMES, type Pair, type SetName } from '../../eval/semantic/pair-set.ts';

/**
 * The labelled pairs of the semantic-cache evaluation (eval/semantic/): well
 * formed, enough of every kind in the held-out sets (test, holdout2, holdout3
 * and holdout4), and all files disjoint, so tuning cannot leak into the held-out figures.
 */

const sets = Object.fromEntries(SET_NAMES.map((set) => [set, readPairSet(set)])) as Record<SetName, Pair[]>;
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const texts = (pairs: readonly Pair[]) => pairs.flatMap((p) => [p.a, p.b]);
const countBy = (pairs: readonly Pair[]) => pairs.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.category]: (acc[p.category] ?? 0) + 1 }), {});

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

  it('hold at least 160 holdout2 pairs, about half near misses, with every category at least 5 times', () => {
    expect(sets.holdout2.length).toBeGreaterThanOrEqual(160);
    const nearMisses = sets.holdout2.filter((p) => p.label === 'near_miss').length / sets.holdout2.length;
    expect(nearMisses).toBeGreaterThan(0.4);
    expect(nearMisses).toBeLessThan(0.6);
    const holdout2 = countBy(sets.holdout2);
    for (const category of Object.keys(CATEGORIES)) expect(holdout2[category] ?? 0, category).toBeGreaterThanOrEqual(5);
  });

  it('hold at least 230 holdout3 pairs, about half near misses, with every category at least 8 times', () => {
    expect(sets.holdout3.length).toBeGreaterThanOrEqual(230);
    const nearMisses = sets.holdout3.filter((p) => p.label === 'near_miss').length / sets.holdout3.length;
    expect(nearMisses).toBeGreaterThan(0.4);
    expect(nearMisses).toBeLessThan(0.6);
    const holdout3 = countBy(sets.holdout3);
    for (const category of Object.keys(CATEGORIES)) expect(holdout3[category] ?? 0, category).toBeGreaterThanOrEqual(8);
  });

  it('hold 240 holdout4 pairs, 130 near misses and 110 paraphrases, with every category 10 times', () => {
    expect(sets.holdout4.length).toBe(240);
    expect(sets.holdout4.filter((p) => p.label === 'near_miss').length).toBe(130);
    const holdout4 = countBy(sets.holdout4);
    for (const category of Object.keys(CATEGORIES)) expect(holdout4[category] ?? 0, category).toBe(10);
  });

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
        expect(texts(sets[other]).filter((t) => seen.has(loose(t))), `${one} / ${other}`).toEqual([]);
      }
    }
    for (const set of SET_NAMES) expect(new Set(texts(sets[set])).size).toBe(texts(sets[set]).length);
  });

  it('hold exactly the long pairs generate-long.ts writes', () => {
    for (const set of ['dev', 'test'] as const) {
      expect(sets[set].filter((p) => GENERATED_CATEGORIES.includes(p.category))).toEqual(longPairs(set));
    }
  });

  it('hold hand-written long pairs in holdout2, each prompt at least 150 words, some past the model window', () => {
    const long = sets.holdout2.filter((p) => GENERATED_CATEGORIES.includes(p.category));
    for (const p of long) expect(Math.min(words(p.a), words(p.b)), p.id).toBeGreaterThanOrEqual(150);
    // 450 words is well past the 512 tokens the model reads.
    expect(long.filter((p) => words(p.a) > 450).length).toBeGreaterThanOrEqual(3);
  });

  it('hold hand-written long pairs in holdout3, each prompt at least 150 words, at least 4 past the model window', () => {
    const long = sets.holdout3.filter((p) => GENERATED_CATEGORIES.includes(p.category));
    for (const category of GENERATED_CATEGORIES) {
      const rows = long.filter((p) => p.category === category);
      for (const p of rows) expect(Math.min(words(p.a), words(p.b)), p.id).toBeGreaterThanOrEqual(150);
      // 450 words is well past the 512 tokens the model reads.
      expect(rows.filter((p) => Math.min(words(p.a), words(p.b)) > 450).length, category).toBeGreaterThanOrEqual(4);
    }
  });
  it('hold hand-written long pairs in holdout4, each prompt at least 150 words, at least 4 past the model window', () => {
    const long = sets.holdout4.filter((p) => GENERATED_CATEGORIES.includes(p.category));
    for (const category of GENERATED_CATEGORIES) {
      const rows = long.filter((p) => p.category === category);
      expect(rows.length, category).toBe(10);
      for (const p of rows) expect(Math.min(words(p.a), words(p.b)), p.id).toBeGreaterThanOrEqual(150);
      // 450 words is well past the 512 tokens the model reads.
      expect(rows.filter((p) => Math.min(words(p.a), words(p.b)) > 450).length, category).toBeGreaterThanOrEqual(4);
    }
  });

  it('hold holdout4 short prompts of 4 to 50 words', () => {
    for (const p of sets.holdout4.filter((q) => !GENERATED_CATEGORIES.includes(q.category))) {
      for (const text of [p.a, p.b]) {
        expect(words(text), p.id).toBeGreaterThanOrEqual(4);
        expect(words(text), p.id).toBeLessThanOrEqual(50);
      }
    }
  });
});
