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
