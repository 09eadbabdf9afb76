/**
 * Redis key names of the response caches, all under the gateway's prefix:
 *
 * | key | type | holds |
 * |---|---|---|
 * | `{p}:cache:x:{hash}` | string | exact entry: `storedAtMs` + `\n` + `chat.completion` JSON |
 * | `{p}:cache:s:e:{id}` | hash | semantic entry: partition, guard, vector, reply, times |
 * | `{p}:cache:s:idx` | sorted set | semantic entry ids scored by expiry (ms) |
 * | `{p}:cache:s:events` | channel | index changes, so every API replica mirrors Redis |
 * | `{p}:cache:inflight:{hash}` | hash | the leader of identical in-flight misses |
 * | `{p}:cache:stats` | hash | lookup counters shared by every replica |
 * | `{p}:cache:lru` | sorted set | exact entry keys scored by last use (ms), when `CACHE_MAX_BYTES` bounds them |
 * | `{p}:cache:lru:sizes` | hash | counted bytes of each entry in `lru` |
 * | `{p}:cache:lru:bytes` | string | sum of `lru:sizes` |
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
    semanticEntry: (id) => `${base}:s:e:${id}`,
    semanticEntryPattern: `${base}:s:e:*`,
    semanticIndex: `${base}:s:idx`,
    semanticEvents: `${base}:s:events`,
    inflight: (hash) => `${base}:inflight:${hash}`,
    stats: `${base}:stats`,
    lru: `${base}:lru`,
    lruSizes: `${base}:lru:sizes`,
    lruBytes: `${base}:lru:bytes`,
  };
}
