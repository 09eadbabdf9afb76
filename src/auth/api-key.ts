import { createHash, randomBytes } from 'node:crypto';

/**
 * Gateway key format: `gw_` + 43 base64url characters (32 random bytes).
 * Only the SHA-256 of a key is ever stored or compared.
 */

const KEY_PREFIX = 'gw_';

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Hex SHA-256 of a key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * First 6 and last 4 characters of a key of 20 characters or more
 * (`gw_abc…wxyz`; an issued key keeps 36 of its 46 hidden). A shorter key
 * shows at most half of its characters, rounded down, 3 in 5 of them at the
 * start: at least half of any key stays hidden (`gw_user_key_1` shows as
 * `gw_u…_1`).
 */
export function maskApiKey(key: string): string {
  const shown = Math.min(10, Math.floor(key.length / 2));
  const tail = Math.min(4, Math.floor((shown * 2) / 5));
  const head = shown - tail;
  return `${key.slice(0, head)}…${tail > 0 ? key.slice(-tail) : ''}`;
}

const WELL_FORMED_KEY = /^gw_[A-Za-z0-9_-]{43}$/;

/**
 * True when `key` has the shape of an issued key. Anything else is never
 * looked up in the key store, so garbage keys cost no database round trip.
 */
export function isWellFormedApiKey(key: string): boolean {
  return WELL_FORMED_KEY.test(key);
}
