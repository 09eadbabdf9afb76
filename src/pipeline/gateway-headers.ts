import type { CacheLookup } from '../cache/response-cache.ts';

/** Names the model that answered: the requested one, or a fallback. */
export const MODEL_HEADER = 'X-Gateway-Model';

/** Names the parameters a provider configured with `drop_unsupported_params` did not receive. */
export const DROPPED_PARAMS_HEADER = 'X-Gateway-Dropped-Params';

/** Says where a Messages token count came from: `upstream` (the provider's own count) or `estimate` (the gateway's). */
export const TOKEN_COUNT_HEADER = 'X-Gateway-Token-Count';

/** `X-Cache` (and, on hits, `Age` and `X-Cache-Similarity`) of a reply. */
export function cacheHeaders(lookup: CacheLookup): Record<string, string> {
  const headers: Record<string, string> = { 'X-Cache': lookup.status };
  if (lookup.hit) {
    headers.Age = String(lookup.ageSeconds);
    if (lookup.hit.similarity !== undefined) headers['X-Cache-Similarity'] = lookup.hit.similarity.toFixed(4);
  }
  return headers;
}
