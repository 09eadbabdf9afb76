/**
 * Redis keys of rate limiting. Windows and counters are named by the key's
 * SHA-256, never the key; the only label kept is the masked key
 * (`gw_abc…wxyz`), which is what /stats shows. On a Redis Cluster each
 * key's window is in its own slot (hash tag: the key hash) and the shared
 * counters in the `{rl}` slot.
 */
export interface RateLimitKeys {
  /** Sorted set of admitted request times of one key. */
  window(keyHash: string): string;
  /** Hash with the `throttled` counter. */
  stats: string;
  /** Sorted set: key hash -> requests counted (admitted and throttled). */
  requestsByKey: string;
  /** Hash: key hash -> masked key. Counted per hash, since short keys can share a mask. */
  labels: string;
}

export function rateLimitKeys(prefix: string): RateLimitKeys {
  return {
    window: (keyHash) => `${prefix}:rl:win:{${keyHash}}`,
    stats: `${prefix}:{rl}:stats`,
    requestsByKey: `${prefix}:{rl}:requests`,
    labels: `${prefix}:{rl}:labels`,
  };
}
