import { createHash, randomBytes } from 'node:crypto';

/**
 * Gateway key format: `gw_` + 43 base64url characters (32 random bytes).
 * Only the SHA-256 of a key is ever stored or compared.
 */

export const KEY_PREFIX = 'gw_';

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Hex SHA-256 of a key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** First 6 and last 4 characters: `gw_abc…wxyz`. Short keys show less. */
export function maskApiKey(key: string): string {
  if (key.length <= 12) return `${key.slice(0, 2)}…`;
  return `${key.slice(0, 6)}…${key.slice(-4)}`;
}

const WELL_FORMED_KEY = /^gw_[A-Za-z0-9_-]{43}$/;

/**
 * True when `key` has the shape of an issued key. Anything else is never
 * looked up in the key store, so garbage keys cost no database round trip.
 */
export function isWellFormedApiKey(key: string): boolean {
  return WELL_FORMED_KEY.test(key);
}
