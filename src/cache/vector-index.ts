/**
 * The in-memory vector index of the semantic cache: one flat Float32Array per
 * partition. Vectors are L2-normalized, so the cosine similarity is a dot
 * product. Removal swaps the last slot into the hole, so the arrays stay
 * dense. A partition of up to {@link EXACT_SCAN_LIMIT} entries is scanned
 * exactly; a larger one (one key sending many different prompts) is searched
 * through one sign bit per dimension: the Hamming distance of the bits
 * estimates the angle, and only the {@link RERANKED} nearest by that estimate
 * get an exact dot product — about 20 times less work than the full scan at
 * 12,000 entries (`bench/semantic-cost.bench.ts`), at the price of a rare
 * missed candidate, which is a cache miss, never a wrong hit.
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
export const EXACT_SCAN_LIMIT = 512;
/** Entries of a larger partition compared exactly: the nearest by Hamming distance. */
const RERANKED = 64;

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** One sign bit per dimension, packed in 32-bit words. */
function signBits(vector: Float32Array, out: Uint32Array, offset: number): void {
  const words = Math.ceil(vector.length / 32);
  for (let w = 0; w < words; w++) {
    let word = 0;
    for (let b = 0; b < 32; b++) {
      const i = w * 32 + b;
      if (i < vector.length && (vector[i] as number) > 0) word |= 1 << b;
    }
    out[offset + w] = word >>> 0;
  }
}

class Partition {
  readonly dims: number;
  readonly words: number;
  vectors: Float32Array;
  bits: Uint32Array;
  /** Scratch space of {@link nearestByBits}, one distance per slot. */
  distances = new Uint16Array(0);
  readonly ids: string[] = [];
  readonly guards: string[] = [];
  readonly expiresAt: number[] = [];
  readonly sizes: number[] = [];

  constructor(dims: number) {
    this.dims = dims;
    this.words = Math.ceil(dims / 32);
    this.vectors = new Float32Array(dims * 4);
    this.bits = new Uint32Array(this.words * 4);
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
      const grownBits = new Uint32Array(this.bits.length * 2);
      grownBits.set(this.bits);
      this.bits = grownBits;
    }
    this.vectors.set(item.vector, slot * this.dims);
    signBits(item.vector, this.bits, slot * this.words);
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
      this.bits.copyWithin(slot * this.words, last * this.words, (last + 1) * this.words);
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
    for (const partition of this.partitions.values()) bytes += partition.vectors.byteLength + partition.bits.byteLength + partition.size * 160;
    return bytes;
  }

  /** Adds an entry, replacing one with the same id. An entry of another dimension than its partition's is refused. */
  add(item: IndexItem): boolean {
    if (this.locations.has(item.id)) this.remove(item.id);
    let partition = this.partitions.get(item.partition);
    if (!partition) {
      partition = new Partition(item.vector.length);
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
  search(partition: string, query: Float32Array, threshold: number, guard: string, options: SearchOptions = {}): SearchResult {
    const limit = options.limit ?? 1;
    const now = options.now ?? Date.now();
    const p = this.partitions.get(partition);
    if (!p || p.dims !== query.length || p.size === 0) return { matches: [] };
    const { vectors, dims, sizes } = p;
    const size = options.size ?? -1;
    const tolerance = options.sizeTolerance ?? Infinity;
    const fits = (slot: number) => size < 0 || (sizes[slot] as number) < 0 || Math.abs((sizes[slot] as number) - size) <= tolerance;
    const slots = p.size > EXACT_SCAN_LIMIT ? nearestByBits(p, query, fits) : undefined;
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

/**
 * The slots of the {@link RERANKED} entries that `fit` whose sign bits are
 * nearest `query`'s: Hamming distances, then a counting pass for the cut-off.
 */
function nearestByBits(p: Partition, query: Float32Array, fits: (slot: number) => boolean): number[] {
  const { words, bits, size } = p;
  const q = new Uint32Array(words);
  signBits(query, q, 0);
  if (p.distances.length < size) p.distances = new Uint16Array(p.vectors.length / p.dims);
  const distances = p.distances;
  const unfit = words * 32 + 1;
  const histogram = new Uint32Array(unfit + 1);
  for (let slot = 0; slot < size; slot++) {
    if (!fits(slot)) {
      distances[slot] = unfit;
      continue;
    }
    let d = 0;
    const offset = slot * words;
    for (let w = 0; w < words; w++) d += popcount(((bits[offset + w] as number) ^ (q[w] as number)) >>> 0);
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
  for (let slot = 0; slot < size; slot++) {
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
