/**
 * What the client's `Cache-Control` request header asks of the response cache.
 *
 * - `use`: look up, and store a complete reply (no header, or other directives).
 * - `refresh` (`no-cache`): skip the lookup, call the provider, store the fresh reply.
 * - `bypass` (`no-store`): neither look up nor store; the reply never reaches the cache.
 *
 * `no-store` wins over `no-cache` when both are sent, as in HTTP.
 */
export type CacheMode = 'use' | 'refresh' | 'bypass';

export function cacheModeOf(header: string | readonly string[] | undefined): CacheMode {
  if (header === undefined) return 'use';
  const text = typeof header === 'string' ? header : header.join(',');
  let mode: CacheMode = 'use';
  for (const raw of text.split(',')) {
    const directive = raw.trim().toLowerCase().split('=')[0]?.trim();
    if (directive === 'no-store') return 'bypass';
    if (directive === 'no-cache') mode = 'refresh';
  }
  return mode;
}

/** The per-request semantic-cache control: `X-Semantic-Cache: off`, or a least similarity above the configured one. */
export type SemanticControl = { semantic: 'off' } | { semantic: 'on'; minSimilarity?: number };

/** Header that controls the semantic cache for one request. */
export const SEMANTIC_CACHE_HEADER = 'x-semantic-cache';

/**
 * Reads `X-Semantic-Cache`: absent = on; `off` skips only the semantic cache
 * (the exact cache still answers); a number in [0, 1] asks for at least that
 * similarity (a value below the configured threshold changes nothing). A
 * value that is neither is the client's error.
 */
export function semanticControlOf(header: string | readonly string[] | undefined): SemanticControl | { error: string } {
  if (header === undefined) return { semantic: 'on' };
  const value = (typeof header === 'string' ? header : header.join(',')).trim().toLowerCase();
  if (value === 'off') return { semantic: 'off' };
  if (value === 'on') return { semantic: 'on' };
  const number = Number(value);
  if (value !== '' && Number.isFinite(number) && number >= 0 && number <= 1)
    return { semantic: 'on', minSimilarity: number };
  return {
    error: `X-Semantic-Cache must be 'off', 'on' or a similarity between 0 and 1 (got '${value.slice(0, 32)}').`,
  };
}
