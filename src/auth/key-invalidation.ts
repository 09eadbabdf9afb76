/**
 * Key changes are announced on one Redis pub/sub channel so every API process
 * drops its cached lookup at once instead of waiting for the cache TTL. The
 * message is the key's SHA-256 (never the key), or {@link INVALIDATE_ALL}.
 */

/** Message that clears every cached lookup. */
export const INVALIDATE_ALL = '*';

/** Pub/sub channel of key invalidations. */
export function keyInvalidationChannel(prefix: string): string {
  return `${prefix}:auth:invalidate`;
}
