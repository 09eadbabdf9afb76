/**
 * Schema versions of the key store, applied in order inside one transaction
 * per start. `gateway_schema_migrations` records each applied version; a
 * database whose highest version is above {@link LATEST_KEY_SCHEMA_VERSION}
 * was migrated by a newer gateway and is refused rather than misread.
 *
 * Tables carry a `gateway_` prefix so the gateway can share a database.
 */

export interface KeyStoreMigration {
  version: number;
  description: string;
  sqlite: string;
  postgres: string;
}

const KEY_STORE_MIGRATIONS: readonly KeyStoreMigration[] = [
  {
    version: 1,
    description: 'api keys (sha-256 only), owner, admin and revoked flags',
    sqlite: `
      CREATE TABLE gateway_api_keys (
        id TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL UNIQUE,
        masked_key TEXT NOT NULL,
        owner TEXT NOT NULL,
        is_admin INTEGER NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
        revoked INTEGER NOT NULL DEFAULT 0 CHECK (revoked IN (0, 1)),
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX gateway_api_keys_owner ON gateway_api_keys (owner);`,
    postgres: `
      CREATE TABLE gateway_api_keys (
        id TEXT PRIMARY KEY,
        key_hash CHAR(64) NOT NULL UNIQUE,
        masked_key TEXT NOT NULL,
        owner TEXT NOT NULL,
        is_admin BOOLEAN NOT NULL DEFAULT FALSE,
        revoked BOOLEAN NOT NULL DEFAULT FALSE,
        created_at TIMESTAMPTZ NOT NULL,
        revoked_at TIMESTAMPTZ
      );
      CREATE INDEX gateway_api_keys_owner ON gateway_api_keys (owner);`,
  },
  {
    version: 2,
    description: 'key policy (limits, models, expiry, budget, metadata) and usage per key, model and day',
    sqlite: `
      ALTER TABLE gateway_api_keys ADD COLUMN policy TEXT NOT NULL DEFAULT '{}';
      CREATE TABLE gateway_key_usage (
        key_id TEXT NOT NULL,
        day TEXT NOT NULL,
        model TEXT NOT NULL,
        requests INTEGER NOT NULL DEFAULT 0,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        cost_nano_usd INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (key_id, day, model)
      );
      CREATE INDEX gateway_key_usage_day ON gateway_key_usage (day);`,
    postgres: `
      ALTER TABLE gateway_api_keys ADD COLUMN policy JSONB NOT NULL DEFAULT '{}'::jsonb;
      CREATE TABLE gateway_key_usage (
        key_id TEXT NOT NULL,
        day DATE NOT NULL,
        model TEXT NOT NULL,
        requests BIGINT NOT NULL DEFAULT 0,
        prompt_tokens BIGINT NOT NULL DEFAULT 0,
        completion_tokens BIGINT NOT NULL DEFAULT 0,
        cost_nano_usd BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (key_id, day, model)
      );
      CREATE INDEX gateway_key_usage_day ON gateway_key_usage (day);`,
  },
  {
    version: 3,
    description:
      'usage by token type: prompt tokens read from and written to the upstream prompt cache, reasoning tokens',
    sqlite: `
      ALTER TABLE gateway_key_usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE gateway_key_usage ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE gateway_key_usage ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;`,
    postgres: `
      ALTER TABLE gateway_key_usage ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE gateway_key_usage ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
      ALTER TABLE gateway_key_usage ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;`,
  },
];

export const LATEST_KEY_SCHEMA_VERSION = Math.max(...KEY_STORE_MIGRATIONS.map((m) => m.version));

/** The migrations still to apply on a database at `current`. */
export function pendingMigrations(current: number): KeyStoreMigration[] {
  return KEY_STORE_MIGRATIONS.filter((m) => m.version > current).sort((a, b) => a.version - b.version);
}
