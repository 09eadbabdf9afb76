import { randomBytes } from 'node:crypto';
import { generateApiKey, hashApiKey, maskApiKey } from './api-key.ts';
import type { KeyPolicy } from './key-policy.ts';
import type { KeyUsageRow, KeyUsageTotal, UsageDelta } from '../usage/key-usage.ts';

/**
 * The persistent store of issued gateway keys. A key itself is never stored:
 * only its SHA-256 (to look it up) and its masked form (to list it).
 * Implementations: SQLite (`node:sqlite`, the default) and PostgreSQL
 * (`DATABASE_URL`). Both create or migrate their schema on first use.
 */

/** One issued key, as stored. */
export interface ApiKeyRecord {
  /** Stable public id (`key_` + 16 hex), used to revoke a key without holding it. */
  id: string;
  /** Hex SHA-256 of the key. */
  keyHash: string;
  /** `gw_abc…wxyz`: enough to recognise a key, useless to authenticate. */
  maskedKey: string;
  owner: string;
  admin: boolean;
  revoked: boolean;
  createdAt: Date;
  revokedAt: Date | null;
  /** Limits, budget, models, expiry and metadata (src/auth/key-policy.ts); `{}` when none. */
  policy: KeyPolicy;
}

/** A freshly issued key: the only moment the key itself exists. */
export interface IssuedApiKey {
  key: string;
  record: ApiKeyRecord;
}

/** Which backend holds the keys. */
export type KeyStoreKind = 'sqlite' | 'postgres';

export interface KeyStore {
  readonly kind: KeyStoreKind;
  /**
   * Creates the schema or migrates it to the current version. Idempotent and
   * safe when several processes start at once. Every other method runs it
   * first, so calling it explicitly only surfaces errors earlier.
   */
  migrate(): Promise<void>;
  insert(record: ApiKeyRecord): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  /** Newest first. Revoked keys only when `includeRevoked`. */
  list(options?: { includeRevoked?: boolean }): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked (idempotent); `undefined` when there is no such key. */
  revoke(id: string): Promise<ApiKeyRecord | undefined>;
  /** Replaces the key's policy; `undefined` when there is no such key. */
  updatePolicy(id: string, policy: KeyPolicy): Promise<ApiKeyRecord | undefined>;
  /** Adds usage to the per key, model and day rows, in one transaction. */
  addUsage(deltas: readonly UsageDelta[]): Promise<void>;
  /**
   * Usage rows, newest day first: of one key when `keyId` is given, of every
   * key otherwise; days from `fromDay` to `toDay` inclusive (`YYYY-MM-DD`, UTC).
   */
  usage(filter: { keyId?: string; fromDay?: string; toDay?: string }): Promise<KeyUsageRow[]>;
  /** Usage summed per key (every model and day from `fromDay` on), for /stats. */
  usageTotals(filter: { fromDay?: string }): Promise<KeyUsageTotal[]>;
  /** Resolves when the database answers; throws otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Thrown when the database cannot be reached or queried. */
export class KeyStoreUnavailableError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'KeyStoreUnavailableError';
  }
}

/** Thrown when the database schema is newer than this code knows. */
export class KeyStoreSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyStoreSchemaError';
  }
}

/** Owners are identifiers, not free text: no control characters, 1-128 characters. */
const OWNER_PATTERN = /^[^\u0000-\u001f\u007f-\u009f]{1,128}$/;

export class InvalidOwnerError extends Error {
  constructor(owner: string) {
    super(`invalid owner '${owner.slice(0, 40)}': use 1-128 printable characters`);
    this.name = 'InvalidOwnerError';
  }
}

/** Generates a key and inserts its record. The returned key is never retrievable again. */
export async function issueApiKey(
  store: KeyStore,
  input: { owner: string; admin?: boolean; policy?: KeyPolicy; now?: Date },
): Promise<IssuedApiKey> {
  const owner = input.owner.trim();
  if (!OWNER_PATTERN.test(owner)) throw new InvalidOwnerError(input.owner);
  const key = generateApiKey();
  const record: ApiKeyRecord = {
    id: `key_${randomBytes(8).toString('hex')}`,
    keyHash: hashApiKey(key),
    maskedKey: maskApiKey(key),
    owner,
    admin: input.admin ?? false,
    revoked: false,
    // Millisecond precision is what both backends keep.
    createdAt: new Date(Math.floor((input.now ?? new Date()).getTime())),
    revokedAt: null,
    policy: input.policy ?? {},
  };
  await store.insert(record);
  return { key, record };
}
