import { describe, expect, it } from 'vitest';
import { EXACT_SCAN_LIMIT, VectorIndex, normalize, type IndexItem } from '../../src/cache/vector-index.ts';

function vec(...values: number[]): Float32Array {
  return normalize(Float32Array.from(values));
}

function item(id: string, vector: Float32Array, overrides: Partial<IndexItem> = {}): IndexItem {
  return { id, partition: 'p1', guard: 'g', expiresAt: Date.now() + 60_000, vector, ...overrides };
}

describe('VectorIndex', () => {
  it('returns the most similar matches up to the limit, most similar first', () => {
    const index = new VectorIndex();
    index.add({ id: 'far', partition: 'p', guard: 'g', expiresAt: Date.now() + 60_000, vector: vec(1, 1, 0) });
    index.add({ id: 'near', partition: 'p', guard: 'g', expiresAt: Date.now() + 60_000, vector: vec(1, 0.1, 0) });
    index.add({ id: 'mid', partition: 'p', guard: 'g', expiresAt: Date.now() + 60_000, vector: vec(1, 0.5, 0) });
    index.add({ id: 'other-guard', partition: 'p', guard: 'h', expiresAt: Date.now() + 60_000, vector: vec(1, 0, 0) });
    const top = index.search('p', vec(1, 0, 0), 0.5, 'g', { limit: 2 });
    expect(top.matches.map((m) => m.id)).toEqual(['near', 'mid']);
    expect(top.match?.id).toBe('near');
    expect(index.search('p', vec(1, 0, 0), 0.5, 'g', { limit: 5 }).matches.map((m) => m.id)).toEqual([
      'near',
      'mid',
      'far',
    ]);
  });

  it('returns the most similar entry above the threshold', () => {
    const index = new VectorIndex();
    index.add(item('a', vec(1, 0, 0)));
    index.add(item('b', vec(1, 0.2, 0)));
    index.add(item('c', vec(0, 1, 0)));
    const result = index.search('p1', vec(1, 0.25, 0), 0.9, 'g');
    expect(result.match?.id).toBe('b');
    expect(result.match?.similarity).toBeGreaterThan(0.99);
    expect(index.search('p1', vec(0, 0, 1), 0.5, 'g')).toEqual({ matches: [], best: expect.closeTo(0, 5) });
  });

  it('never matches across partitions, below the threshold, or with another guard', () => {
    const index = new VectorIndex();
    index.add(item('a', vec(1, 0, 0)));
    expect(index.search('p2', vec(1, 0, 0), 0.5, 'g')).toEqual({ matches: [] });
    expect(index.search('p1', vec(1, 1, 0), 0.8, 'g').match).toBeUndefined();
    const guarded = index.search('p1', vec(1, 0, 0), 0.5, 'other');
    expect(guarded.match).toBeUndefined();
    expect(guarded.best).toBeCloseTo(1, 5);
  });

  it('prefers a guard-compatible entry over a closer incompatible one', () => {
    const index = new VectorIndex();
    index.add(item('close', vec(1, 0, 0), { guard: 'x' }));
    index.add(item('ok', vec(1, 0.3, 0), { guard: 'g' }));
    expect(index.search('p1', vec(1, 0, 0), 0.9, 'g').match?.id).toBe('ok');
  });

  it('removes by id with dense slots, replaces on re-add, and ignores expired entries', () => {
    const index = new VectorIndex();
    for (let i = 0; i < 10; i++) index.add(item(`e${i}`, vec(1, i, 0)));
    expect(index.size).toBe(10);
    expect(index.remove('e0')).toBe(true);
    expect(index.remove('e0')).toBe(false);
    // e9 moved into slot 0: it must still be found under its id.
    expect(index.search('p1', vec(1, 9, 0), 0.999, 'g').match?.id).toBe('e9');
    index.add(item('e9', vec(0, 0, 1)));
    expect(index.size).toBe(9);
    expect(index.search('p1', vec(0, 0, 1), 0.999, 'g').match?.id).toBe('e9');

    index.add(item('old', vec(0, 1, 1), { expiresAt: Date.now() - 1 }));
    expect(index.search('p1', vec(0, 1, 1), 0.99, 'g').match).toBeUndefined();
    expect(index.removeExpired()).toBe(1);
    expect(index.has('old')).toBe(false);
  });

  it('reports its size in bytes and empties on clear', () => {
    const index = new VectorIndex();
    expect(index.byteSize).toBe(0);
    for (let i = 0; i < 100; i++)
      index.add(item(`e${i}`, normalize(Float32Array.from({ length: 384 }, (_, j) => Math.sin(i + j)))));
    expect(index.byteSize).toBeGreaterThanOrEqual(100 * 384 * 4);
    expect(index.clear()).toBe(100);
    expect(index.size).toBe(0);
    expect(index.byteSize).toBe(0);
  });

  it('refuses a vector whose dimension differs from its partition', () => {
    const index = new VectorIndex();
    expect(index.add(item('a', vec(1, 0, 0)))).toBe(true);
    expect(index.add(item('b', vec(1, 0)))).toBe(false);
    expect(index.search('p1', vec(1, 0), 0, 'g')).toEqual({ matches: [] });
  });

  it('searches a partition beyond the exact-scan limit through sign bits and finds what the exact scan finds', () => {
    // A seeded generator: the same vectors every run.
    let state = 7;
    const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    const randomVector = () => normalize(Float32Array.from({ length: 256 }, random));
    const size = EXACT_SCAN_LIMIT * 8;
    const vectors = Array.from({ length: size }, randomVector);
    const large = new VectorIndex();
    vectors.forEach((v, i) => large.add(item(`e${i}`, v)));
    for (let q = 0; q < 50; q++) {
      const target = (q * 97) % size;
      // A query near one entry (cosine about 0.8 with it), far from the others.
      const noise = randomVector();
      const query = normalize(
        Float32Array.from(vectors[target] as Float32Array, (x, i) => x + 0.75 * (noise[i] as number)),
      );
      const found = large.search('p1', query, 0.6, 'g');
      expect(found.match?.id).toBe(`e${target}`);
      // The same similarity as an exact dot product.
      const exact = (vectors[target] as Float32Array).reduce((sum, x, i) => sum + x * (query[i] as number), 0);
      expect(found.match?.similarity).toBeCloseTo(exact, 5);
    }
    // Removal keeps the bits in step with the vectors that moved.
    for (let i = 0; i < size; i += 2) large.remove(`e${i}`);
    expect(large.search('p1', vectors[1] as Float32Array, 0.99, 'g').match?.id).toBe('e1');
    expect(large.search('p1', vectors[2] as Float32Array, 0.99, 'g').match).toBeUndefined();
  });

  it('skips entries whose size is out of tolerance before comparing them, in the exact scan and through sign bits', () => {
    const small = new VectorIndex();
    small.add(item('long', vec(1, 0, 0), { size: 400 }));
    small.add(item('short', vec(1, 0.3, 0), { size: 12 }));
    small.add(item('unknown', vec(1, 0.6, 0)));
    const ids = (found: { matches: Array<{ id: string }> }) => found.matches.map((m) => m.id);
    expect(ids(small.search('p1', vec(1, 0, 0), 0.5, 'g', { limit: 3 }))).toEqual(['long', 'short', 'unknown']);
    expect(ids(small.search('p1', vec(1, 0, 0), 0.5, 'g', { limit: 3, size: 10, sizeTolerance: 16 }))).toEqual([
      'short',
      'unknown',
    ]);
    expect(ids(small.search('p1', vec(1, 0, 0), 0.5, 'g', { limit: 3, size: 390, sizeTolerance: 16 }))).toEqual([
      'long',
      'unknown',
    ]);

    // Beyond the exact-scan limit: many long entries nearer by their bits than the one short entry must not hide it.
    const large = new VectorIndex();
    let state = 11;
    const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    const base = normalize(Float32Array.from({ length: 256 }, random));
    const near = (spread: number) => {
      const noise = normalize(Float32Array.from({ length: 256 }, random));
      return normalize(Float32Array.from(base, (x, i) => x + spread * (noise[i] as number)));
    };
    for (let i = 0; i < EXACT_SCAN_LIMIT * 2; i++) large.add(item(`long${i}`, near(0.05), { size: 300 }));
    large.add(item('short', near(0.4), { size: 20 }));
    expect(large.search('p1', base, 0.6, 'g', { size: 20, sizeTolerance: 16 }).match?.id).toBe('short');
    expect(large.search('p1', base, 0.6, 'g').match?.id).not.toBe('short');
  });
});
