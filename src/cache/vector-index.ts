/**
 * The in-memory vector index of the semantic cache: one flat Float32Array per
 * partition. Vectors are L2-normalized, so the cosine similarity is a dot
 * product. Removal swaps the last slot into the hole, so the arrays stay
 * dense. A partition of up to {@link EXACT_SCAN_LIMIT} entries is scanned
 * exactly; a larger one (one key sending many different prompts) is searched
 * through a {@link SKETCH_BITS}-bit sketch of each vector: the signs of as
 * many sparse random projections (SimHash), whose Hamming distance estimates
 * the angle. Only the {@link RERANKED} nearest by that estimate get an exact
 * dot product, at the price of a rare missed candidate, which is a cache
 * miss, never a wrong hit. Random projections spread the angle over every
 * bit, where the signs of the embedding's own dimensions are skewed (some
 * are nearly always positive): a third of the bits of those signs found
 * every paraphrase of the evaluation sets that the signs found, among
 * 10,000 other prompts, at a third of the scan.
 *
 * The index is a mirror: Redis is the system of record (see `semantic-cache.ts`).
 */

/** One indexed entry. */
export interface IndexItem {
  id: string;
  partition: string;
  /** Guard signature of the prompt (see `prompt-guards.ts`). */
  guard: string;
  /** Epoch ms after which the entry is gone from Redis. */
  expiresAt: number;
  /** Unit-length embedding. */
  vector: Float32Array;
  /** Size of the prompt (its content words, see `prompt-verifier.ts`); -1 when unknown. @defaultValue -1 */
  size?: number;
}

/** Options of {@link VectorIndex.search}. */
export interface SearchOptions {
  /** Most matches returned. @defaultValue 1 */
  limit?: number;
  /** Entries expired at this epoch ms are skipped. @defaultValue Date.now() */
  now?: number;
  /**
   * The query's size: entries whose size differs by more than
   * `sizeTolerance` cannot match and are skipped before any comparison (a
   * short prompt never pays for a long one's candidacy). Entries of unknown
   * size are always compared.
   */
  size?: number;
  /** @defaultValue Infinity */
  sizeTolerance?: number;
}

/** The best acceptable match of a search. */
export interface IndexMatch {
  id: string;
  similarity: number;
}

/** What a search saw, for statistics even when nothing matched. */
export interface SearchResult {
  /** The best acceptable match (the first of {@link matches}). */
  match?: IndexMatch;
  /** Every acceptable match up to the search's limit, most similar first. */
  matches: IndexMatch[];
  /** Highest similarity among the entries compared, guard or not; undefined when the partition is empty. */
  best?: number;
}

/** Largest partition scanned exactly. */
export const EXACT_SCAN_LIMIT = 128;
/** Entries of a larger partition compared exactly: the nearest by Hamming distance. */
const RERANKED = 32;
/** Bits of a vector's sketch: four 32-bit words (the scan is unrolled for four). */
const SKETCH_BITS = 128;
/** Dimensions each projection of the sketch reads. */
const PROJECTION_TERMS = 32;
const SKETCH_WORDS = SKETCH_BITS / 32;

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

interface Projections {
  dimensions: Uint16Array;
  signs: Float32Array;
}

/**
 * The sketch's projections for `dims` dimensions: per bit, {@link PROJECTION_TERMS}
 * dimensions with a sign each. Deterministic, so a partition rebuilt from
 * Redis sketches its entries as before.
 */
function projectionsFor(dims: number): Projections {
  const size = SKETCH_BITS * PROJECTION_TERMS;
  const dimensions = new Uint16Array(size);
  const signs = new Float32Array(size);
  let state = 0x9e3779b9;
  for (let j = 0; j < size; j++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    dimensions[j] = (state >>> 8) % dims;
    signs[j] = state & 1 ? 1 : -1;
  }
  return { dimensions, signs };
}

function sketch(vector: Float32Array, projections: Projections, out: Uint32Array, offset: number): void {
  const { dimensions, signs } = projections;
  for (let w = 0; w < SKETCH_WORDS; w++) {
    let word = 0;
    for (let b = 0; b < 32; b++) {
      let sum = 0;
      const start = (w * 32 + b) * PROJECTION_TERMS;
      for (let j = start; j < start + PROJECTION_TERMS; j++)
        sum += (signs[j] as number) * (vector[dimensions[j] as number] as number);
      if (sum > 0) word |= 1 << b;
    }
    out[offset + w] = word >>> 0;
  }
}

class Partition {
  readonly dims: number;
  readonly projections: Projections;
  vectors: Float32Array;
  /** {@link SKETCH_WORDS} words per slot. */
  sketches: Uint32Array;
  /** Scratch space of {@link nearestBySketch}, one distance per slot. */
  distances = new Uint8Array(0);
  readonly ids: string[] = [];
  readonly guards: string[] = [];
  readonly expiresAt: number[] = [];
  readonly sizes: number[] = [];

  constructor(dims: number, projections: Projections) {
    this.dims = dims;
    this.projections = projections;
    this.vectors = new Float32Array(dims * 4);
    this.sketches = new Uint32Array(SKETCH_WORDS * 4);
  }

  get size(): number {
    return this.ids.length;
  }

  push(item: IndexItem): number {
    const slot = this.ids.length;
    if ((slot + 1) * this.dims > this.vectors.length) {
      const grown = new Float32Array(this.vectors.length * 2);
      grown.set(this.vectors);
      this.vectors = grown;
      const grownSketches = new Uint32Array(this.sketches.length * 2);
      grownSketches.set(this.sketches);
      this.sketches = grownSketches;
    }
    this.vectors.set(item.vector, slot * this.dims);
    sketch(item.vector, this.projections, this.sketches, slot * SKETCH_WORDS);
    this.ids.push(item.id);
    this.guards.push(item.guard);
    this.expiresAt.push(item.expiresAt);
    this.sizes.push(item.size ?? -1);
    return slot;
  }

  /** Moves the last slot into `slot`; returns the id that moved, if any. */
  removeAt(slot: number): string | undefined {
    const last = this.ids.length - 1;
    let moved: string | undefined;
    if (slot !== last) {
      this.vectors.copyWithin(slot * this.dims, last * this.dims, (last + 1) * this.dims);
      this.sketches.copyWithin(slot * SKETCH_WORDS, last * SKETCH_WORDS, (last + 1) * SKETCH_WORDS);
      moved = this.ids[last] as string;
      this.ids[slot] = moved;
      this.guards[slot] = this.guards[last] as string;
      this.expiresAt[slot] = this.expiresAt[last] as number;
      this.sizes[slot] = this.sizes[last] as number;
    }
    this.ids.pop();
    this.guards.pop();
    this.expiresAt.pop();
    this.sizes.pop();
    return moved;
  }
}

export class VectorIndex {
  private readonly partitions = new Map<string, Partition>();
  /** The sketch's projections by dimension count, shared by every partition of that size. */
  private readonly projections = new Map<number, Projections>();
  private readonly locations = new Map<string, { partition: string; slot: number }>();

  /** Entries indexed now. */
  get size(): number {
    return this.locations.size;
  }

  has(id: string): boolean {
    return this.locations.has(id);
  }

  /** Bytes held: vectors as allocated, plus a rough cost per entry for ids and bookkeeping. */
  get byteSize(): number {
    let bytes = 0;
    for (const partition of this.partitions.values())
      bytes += partition.vectors.byteLength + partition.sketches.byteLength + partition.size * 160;
    return bytes;
  }

  /** Adds an entry, replacing one with the same id. An entry of another dimension than its partition's is refused. */
  add(item: IndexItem): boolean {
    if (this.locations.has(item.id)) this.remove(item.id);
    let partition = this.partitions.get(item.partition);
    if (!partition) {
      const dims = item.vector.length;
      let projections = this.projections.get(dims);
      if (!projections) {
        projections = projectionsFor(dims);
        this.projections.set(dims, projections);
      }
      partition = new Partition(dims, projections);
      this.partitions.set(item.partition, partition);
    }
    if (item.vector.length !== partition.dims) return false;
    const slot = partition.push(item);
    this.locations.set(item.id, { partition: item.partition, slot });
    return true;
  }

  remove(id: string): boolean {
    const location = this.locations.get(id);
    if (!location) return false;
    const partition = this.partitions.get(location.partition) as Partition;
    const moved = partition.removeAt(location.slot);
    if (moved !== undefined) this.locations.set(moved, { partition: location.partition, slot: location.slot });
    this.locations.delete(id);
    if (partition.size === 0) this.partitions.delete(location.partition);
    return true;
  }

  /** Drops every entry expired at `now`; returns how many. */
  removeExpired(now = Date.now()): number {
    const expired: string[] = [];
    for (const partition of this.partitions.values()) {
      partition.expiresAt.forEach((at, slot) => {
        if (at <= now) expired.push(partition.ids[slot] as string);
      });
    }
    for (const id of expired) this.remove(id);
    return expired.length;
  }

  clear(): number {
    const count = this.locations.size;
    this.partitions.clear();
    this.locations.clear();
    return count;
  }

  /**
   * The `limit` most similar live entries of `partition` with similarity >=
   * `threshold` whose guard signature equals `guard`, most similar first.
   */
  search(
    partition: string,
    query: Float32Array,
    threshold: number,
    guard: string,
    options: SearchOptions = {},
  ): SearchResult {
    const limit = options.limit ?? 1;
    const now = options.now ?? Date.now();
    const p = this.partitions.get(partition);
    if (!p || p.dims !== query.length || p.size === 0) return { matches: [] };
    const { vectors, dims, sizes } = p;
    const size = options.size ?? -1;
    const tolerance = options.sizeTolerance ?? Infinity;
    const fits = (slot: number) => sizeFits(sizes[slot] as number, size, tolerance);
    const slots = p.size > EXACT_SCAN_LIMIT ? nearestBySketch(p, query, size, tolerance) : undefined;
    const count = slots ? slots.length : p.size;
    let best = -Infinity;
    const matches: IndexMatch[] = [];
    for (let n = 0; n < count; n++) {
      const slot = slots ? (slots[n] as number) : n;
      if ((p.expiresAt[slot] as number) <= now || !fits(slot)) continue;
      let dot = 0;
      const offset = slot * dims;
      for (let i = 0; i < dims; i++) dot += (vectors[offset + i] as number) * (query[i] as number);
      if (dot > best) best = dot;
      if (dot < threshold || p.guards[slot] !== guard) continue;
      if (matches.length === limit && dot <= (matches.at(-1) as IndexMatch).similarity) continue;
      // Insertion into a list of at most `limit` (a handful): cheaper than sorting every candidate.
      let at = matches.length;
      while (at > 0 && (matches[at - 1] as IndexMatch).similarity < dot) at--;
      matches.splice(at, 0, { id: p.ids[slot] as string, similarity: dot });
      if (matches.length > limit) matches.pop();
    }
    if (best === -Infinity) return { matches: [] };
    return matches[0] ? { match: matches[0], matches, best } : { matches, best };
  }
}

/** Whether an entry of `entrySize` may match a query of `size` (either -1: unknown, always). */
function sizeFits(entrySize: number, size: number, tolerance: number): boolean {
  return size < 0 || entrySize < 0 || Math.abs(entrySize - size) <= tolerance;
}

/**
 * The slots of the {@link RERANKED} entries whose size fits (see
 * {@link SearchOptions.size}) and whose sketches are nearest `query`'s:
 * Hamming distances, then a counting pass for the cut-off.
 */
function nearestBySketch(p: Partition, query: Float32Array, size: number, tolerance: number): number[] {
  const { sketches, sizes } = p;
  const count = p.size;
  const q = new Uint32Array(SKETCH_WORDS);
  sketch(query, p.projections, q, 0);
  const [q0, q1, q2, q3] = [q[0] as number, q[1] as number, q[2] as number, q[3] as number];
  if (p.distances.length < count) p.distances = new Uint8Array(p.vectors.length / p.dims);
  const distances = p.distances;
  const unfit = SKETCH_BITS + 1;
  const histogram = new Uint32Array(unfit + 1);
  for (let slot = 0; slot < count; slot++) {
    if (!sizeFits(sizes[slot] as number, size, tolerance)) {
      distances[slot] = unfit;
      continue;
    }
    // Unrolled for the four words of a 128-bit sketch: the loop over entries is the index's whole cost.
    const o = slot * 4;
    const d =
      popcount((sketches[o] as number) ^ q0) +
      popcount((sketches[o + 1] as number) ^ q1) +
      popcount((sketches[o + 2] as number) ^ q2) +
      popcount((sketches[o + 3] as number) ^ q3);
    distances[slot] = d;
    histogram[d] = (histogram[d] as number) + 1;
  }
  let cutoff = 0;
  for (let seen = 0; cutoff < unfit; cutoff++) {
    seen += histogram[cutoff] as number;
    if (seen >= RERANKED) break;
  }
  // Everything nearer than the cut-off, then entries at the cut-off up to RERANKED in all.
  const slots: number[] = [];
  const ties: number[] = [];
  for (let slot = 0; slot < count; slot++) {
    const d = distances[slot] as number;
    if (d < cutoff) slots.push(slot);
    else if (d === cutoff && cutoff < unfit) ties.push(slot);
  }
  for (const slot of ties) {
    if (slots.length >= RERANKED) break;
    slots.push(slot);
  }
  return slots;
}

/** Scales a vector to unit length in place (a zero vector stays zero) and returns it. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) ** 2;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}
