/**
 * Redis key names of the response caches, all under the gateway's prefix
 * `<p>`. Braces are Redis Cluster hash tags: keys that one script or MULTI
 * touches together share a slot, exact entries spread over every shard.
 *
 * | key | type | holds |
 * |---|---|---|
 * | `<p>:cache:x:<hash>` | string | exact entry: `storedAtMs` + `\n` + `chat.completion` JSON |
 * | `<p>:cache:{s}:e:<id>` | hash | semantic entry: partition, guard, vector, reply, times |
 * | `<p>:cache:{s}:idx` | sorted set | semantic entry ids scored by expiry (ms) |
 * | `<p>:cache:s:events` | channel | index changes, so every API replica mirrors Redis |
 * | `<p>:{flight}:inflight:<hash>` | hash | the leader of identical in-flight misses (with the readers' liveness keys: one script) |
 * | `<p>:cache:stats` | hash | lookup counters shared by every replica |
 * | `<p>:cache:{x}:lru` | sorted set | exact entry keys scored by last use (ms), when `CACHE_MAX_BYTES` bounds them |
 * | `<p>:cache:{x}:lru:sizes` | hash | counted bytes of each entry in `lru` |
 * | `<p>:cache:{x}:lru:bytes` | string | sum of `lru:sizes` |
 */
export interface CacheKeys {
  exact(hash: string): string;
  /** SCAN pattern of every exact entry. */
  exactPattern: string;
  semanticEntry(id: string): string;
  /** SCAN pattern of every semantic entry. */
  semanticEntryPattern: string;
  semanticIndex: string;
  semanticEvents: string;
  inflight(hash: string): string;
  stats: string;
  lru: string;
  lruSizes: string;
  lruBytes: string;
}

export function cacheKeys(prefix: string): CacheKeys {
  const base = `${prefix}:cache`;
  return {
    exact: (hash) => `${base}:x:${hash}`,
    exactPattern: `${base}:x:*`,
    semanticEntry: (id) => `${base}:{s}:e:${id}`,
    semanticEntryPattern: `${base}:{s}:e:*`,
    semanticIndex: `${base}:{s}:idx`,
    semanticEvents: `${base}:s:events`,
    inflight: (hash) => `${prefix}:{flight}:inflight:${hash}`,
    stats: `${base}:stats`,
    // One slot for the bookkeeping a script updates together; the entries themselves spread.
    lru: `${base}:{x}:lru`,
    lruSizes: `${base}:{x}:lru:sizes`,
    lruBytes: `${base}:{x}:lru:bytes`,
  };
}
