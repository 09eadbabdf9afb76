import { describe, expect, it } from 'vitest';
import { longPairs } from '../../eval/semantic/generate-long.ts';
import { CATEGORIES, GENERATED_CATEGORIES, parsePairs, readPairSet, type Pair, type SetName } from '../../eval/semantic/pair-set.ts';

/**
 * The labelled pairs of the semantic-cache evaluation (eval/semantic/): well
 * formed, enough of every kind in the held-out test set, and dev and test
 * disjoint, so tuning on dev cannot leak into the test figures.
 */

const sets: Record<SetName, Pair[]> = { dev: readPairSet('dev'), test: readPairSet('test') };
const texts = (pairs: readonly Pair[]) => pairs.flatMap((p) => [p.a, p.b]);
const countBy = (pairs: readonly Pair[]) => pairs.reduce<Record<string, number>>((acc, p) => ({ ...acc, [p.category]: (acc[p.category] ?? 0) + 1 }), {});

describe('semantic evaluation pair sets', () => {
  it('parse against the schema, with ids unique across both files and naming their file', () => {
    const ids = [...sets.dev, ...sets.test].map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const set of ['dev', 'test'] as const) for (const p of sets[set]) expect(p.id.startsWith(`${set}-${p.category}-`)).toBe(true);
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

  it('rejects a line whose label contradicts its category, naming the line', () => {
    const good = JSON.stringify({ id: 'dev-p_case-01', category: 'p_case', label: 'paraphrase', a: 'Hi', b: 'hi' });
    const bad = JSON.stringify({ id: 'dev-p_case-02', category: 'p_case', label: 'near_miss', a: 'Yo', b: 'yo' });
    expect(() => parsePairs(`${good}\n${bad}\n`, 'x.jsonl')).toThrow(/x\.jsonl:2: label does not match the category/);
  });

  it('give every category one label', () => {
    for (const p of [...sets.dev, ...sets.test]) expect(p.label, p.id).toBe(CATEGORIES[p.category]);
  });

  it('share no prompt between dev and test, and repeat none within a set', () => {
    const dev = new Set(texts(sets.dev));
    expect(texts(sets.test).filter((t) => dev.has(t))).toEqual([]);
    for (const set of ['dev', 'test'] as const) expect(new Set(texts(sets[set])).size).toBe(texts(sets[set]).length);
  });

  it('hold exactly the long pairs generate-long.ts writes', () => {
    for (const set of ['dev', 'test'] as const) {
      expect(sets[set].filter((p) => GENERATED_CATEGORIES.includes(p.category))).toEqual(longPairs(set));
    }
  });
});
