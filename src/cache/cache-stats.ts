import type { Redis } from 'ioredis';
import { CounterBuffer } from '../redis/counter-buffer.ts';
import type { CacheKeys } from './redis-keys.ts';

/** Hits and misses of one cache. */
export interface LookupCounts {
  hits: number;
  misses: number;
  /** hits / (hits + misses); 0 before any lookup. */
  hit_rate: number;
}

/** Counters of both caches, summed over every API replica. */
export interface CacheCounters {
  exact: LookupCounts;
  semantic: LookupCounts & {
    /** Semantic lookups made (an embedding was searched). */
    queries: number;
    /** Mean cosine similarity of the semantic hits served; 0 before any. */
    avg_similarity: number;
  };
}

/** The cache types of `gateway_cache_hits_total{cache_type}`. */
export type CacheType = 'exact' | 'semantic';

function rate(hits: number, misses: number): number {
  const total = hits + misses;
  return total === 0 ? 0 : hits / total;
}

/**
 * Lookup counters in one Redis hash, so every replica adds to the same
 * totals and any replica can read them (`/stats`, `/admin/cache/stats`).
 * Increments are buffered and written in batches (never on the request path):
 * a lost count never fails a request.
 */
export class CacheStats {
  private readonly redis: Redis;
  private readonly key: string;
  private readonly counters: CounterBuffer;

  constructor(redis: Redis, keys: CacheKeys) {
    this.redis = redis;
    this.key = keys.stats;
    // Batched: a cache hit must not pay for its own statistics.
    this.counters = new CounterBuffer({ redis });
  }

  /** Counts one lookup of `type`; `similarity` is the match's similarity on a semantic hit. */
  record(type: CacheType, hit: boolean, similarity?: number): void {
    this.counters.add(this.key, `${type}_${hit ? 'hits' : 'misses'}`);
    if (type === 'semantic' && hit && similarity !== undefined)
      this.counters.addFloat(this.key, 'semantic_similarity_sum', similarity);
  }

  /** Writes buffered counts (on shutdown). */
  async close(): Promise<void> {
    await this.counters.close();
  }

  async read(): Promise<CacheCounters> {
    await this.counters.flush();
    const raw = await this.redis.hgetall(this.key);
    const n = (field: string) => Number(raw[field] ?? 0) || 0;
    const exactHits = n('exact_hits');
    const exactMisses = n('exact_misses');
    const semHits = n('semantic_hits');
    const semMisses = n('semantic_misses');
    return {
      exact: { hits: exactHits, misses: exactMisses, hit_rate: rate(exactHits, exactMisses) },
      semantic: {
        hits: semHits,
        misses: semMisses,
        hit_rate: rate(semHits, semMisses),
        queries: semHits + semMisses,
        avg_similarity: semHits === 0 ? 0 : n('semantic_similarity_sum') / semHits,
      },
    };
  }
}
