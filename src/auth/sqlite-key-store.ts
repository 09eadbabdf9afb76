import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { LATEST_KEY_SCHEMA_VERSION, pendingMigrations } from './key-store-migrations.ts';
import { KeyStoreSchemaError, KeyStoreUnavailableError, type ApiKeyRecord, type KeyStore } from './key-store.ts';
import { parseStoredPolicy, type KeyPolicy } from './key-policy.ts';
import {
  usageFromDbRow,
  type KeyUsageRow,
  type KeyUsageTotal,
  type UsageDbRow,
  type UsageDelta,
} from '../usage/key-usage.ts';

/** Options of {@link SqliteKeyStore}. */
export interface SqliteKeyStoreOptions {
  /** Database file (`:memory:` for tests). Its folder is created when missing. */
  path: string;
  /** How long a writer waits for another process's lock, ms. @defaultValue 5000 */
  busyTimeoutMs?: number;
}

interface Row {
  id: string;
  key_hash: string;
  masked_key: string;
  owner: string;
  is_admin: number;
  revoked: number;
  created_at: string;
  revoked_at: string | null;
  policy: string;
}

const COLUMNS = 'id, key_hash, masked_key, owner, is_admin, revoked, created_at, revoked_at, policy';
const USAGE_COLUMNS =
  'key_id, day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_nano_usd';

function toRecord(row: Row): ApiKeyRecord {
  return {
    id: row.id,
    keyHash: row.key_hash,
    maskedKey: row.masked_key,
    owner: row.owner,
    admin: row.is_admin === 1,
    revoked: row.revoked === 1,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    policy: parseStoredPolicy(row.policy),
  };
}

/**
 * The default key store: an embedded SQLite file through Node's built-in
 * `node:sqlite` (no native build). Opened on first use, so a bad path makes
 * the database `disconnected` in /health instead of failing the start; WAL
 * mode and a busy timeout let the API and the `gateway keys` CLI share the file.
 * Calls are synchronous underneath; the authenticator's cache keeps them off
 * the hot path.
 */
export class SqliteKeyStore implements KeyStore {
  readonly kind = 'sqlite' as const;
  private db: DatabaseSync | undefined;
  private readonly options: SqliteKeyStoreOptions;

  constructor(options: SqliteKeyStoreOptions) {
    this.options = options;
  }

  /** The open, migrated database; opens and migrates on first use, retries after a failure. */
  private database(): DatabaseSync {
    if (this.db) return this.db;
    let db: DatabaseSync | undefined;
    try {
      if (this.options.path !== ':memory:') mkdirSync(dirname(this.options.path), { recursive: true });
      db = new DatabaseSync(this.options.path, { timeout: this.options.busyTimeoutMs ?? 5_000 });
      db.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;');
      migrate(db);
    } catch (err) {
      db?.close();
      if (err instanceof KeyStoreSchemaError) throw err;
      throw new KeyStoreUnavailableError(
        `cannot open the SQLite key store at ${this.options.path}: ${(err as Error).message}`,
        { cause: err },
      );
    }
    this.db = db;
    return db;
  }

  private run<T>(fn: (db: DatabaseSync) => T): T {
    return fn(this.database());
  }

  async migrate(): Promise<void> {
    this.database();
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    this.run((db) =>
      db
        .prepare(`INSERT INTO gateway_api_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(
          record.id,
          record.keyHash,
          record.maskedKey,
          record.owner,
          record.admin ? 1 : 0,
          record.revoked ? 1 : 0,
          record.createdAt.toISOString(),
          record.revokedAt?.toISOString() ?? null,
          JSON.stringify(record.policy),
        ),
    );
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.run((db) =>
      db.prepare(`SELECT ${COLUMNS} FROM gateway_api_keys WHERE key_hash = ?`).get(keyHash),
    ) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.run((db) => db.prepare(`SELECT ${COLUMNS} FROM gateway_api_keys WHERE id = ?`).get(id)) as
      Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  async list(options: { includeRevoked?: boolean } = {}): Promise<ApiKeyRecord[]> {
    const where = options.includeRevoked ? '' : 'WHERE revoked = 0';
    const rows = this.run((db) =>
      db.prepare(`SELECT ${COLUMNS} FROM gateway_api_keys ${where} ORDER BY created_at DESC, id`).all(),
    ) as unknown as Row[];
    return rows.map(toRecord);
  }

  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    this.run((db) =>
      db
        .prepare('UPDATE gateway_api_keys SET revoked = 1, revoked_at = ? WHERE id = ? AND revoked = 0')
        .run(new Date().toISOString(), id),
    );
    return this.findById(id);
  }

  async updatePolicy(id: string, policy: KeyPolicy): Promise<ApiKeyRecord | undefined> {
    this.run((db) => db.prepare('UPDATE gateway_api_keys SET policy = ? WHERE id = ?').run(JSON.stringify(policy), id));
    return this.findById(id);
  }

  async addUsage(deltas: readonly UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    this.run((db) => {
      const upsert = db.prepare(
        `INSERT INTO gateway_key_usage (${USAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (key_id, day, model) DO UPDATE SET requests = requests + excluded.requests,
           prompt_tokens = prompt_tokens + excluded.prompt_tokens, completion_tokens = completion_tokens + excluded.completion_tokens,
           cached_tokens = cached_tokens + excluded.cached_tokens, cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
           reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
           cost_nano_usd = cost_nano_usd + excluded.cost_nano_usd`,
      );
      db.exec('BEGIN IMMEDIATE');
      try {
        for (const d of deltas)
          upsert.run(
            d.keyId,
            d.day,
            d.model,
            d.requests,
            d.promptTokens,
            d.completionTokens,
            d.cachedTokens ?? 0,
            d.cacheWriteTokens ?? 0,
            d.reasoningTokens ?? 0,
            d.costNanoUsd,
          );
        db.exec('COMMIT');
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
    });
  }

  async usage(filter: { keyId?: string; fromDay?: string; toDay?: string }): Promise<KeyUsageRow[]> {
    const rows = this.run((db) =>
      db
        .prepare(
          `SELECT ${USAGE_COLUMNS} FROM gateway_key_usage WHERE (?1 IS NULL OR key_id = ?1) AND (?2 IS NULL OR day >= ?2) AND (?3 IS NULL OR day <= ?3)
           ORDER BY day DESC, key_id, model`,
        )
        .all(filter.keyId ?? null, filter.fromDay ?? null, filter.toDay ?? null),
    ) as unknown as UsageDbRow[];
    return rows.map(usageFromDbRow);
  }

  async usageTotals(filter: { fromDay?: string }): Promise<KeyUsageTotal[]> {
    const rows = this.run((db) =>
      db
        .prepare(
          `SELECT key_id, '' AS day, '' AS model, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, SUM(cached_tokens) AS cached_tokens, SUM(cache_write_tokens) AS cache_write_tokens, SUM(reasoning_tokens) AS reasoning_tokens, SUM(cost_nano_usd) AS cost_nano_usd FROM gateway_key_usage WHERE (?1 IS NULL OR day >= ?1) GROUP BY key_id`,
        )
        .all(filter.fromDay ?? null),
    ) as unknown as UsageDbRow[];
    return rows.map(usageFromDbRow);
  }

  async ping(): Promise<void> {
    this.run((db) => db.prepare('SELECT 1').get());
  }

  async close(): Promise<void> {
    this.db?.close();
    this.db = undefined;
  }
}

function migrate(db: DatabaseSync): void {
  // IMMEDIATE takes the write lock first, so two processes starting at once
  // migrate one after the other instead of both reading version 0.
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(
      'CREATE TABLE IF NOT EXISTS gateway_schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const { v } = db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM gateway_schema_migrations').get() as {
      v: number;
    };
    if (v > LATEST_KEY_SCHEMA_VERSION) {
      throw new KeyStoreSchemaError(
        `the key store schema is at version ${v}, newer than this gateway knows (${LATEST_KEY_SCHEMA_VERSION}); upgrade the gateway`,
      );
    }
    for (const migration of pendingMigrations(v)) {
      db.exec(migration.sqlite);
      db.prepare('INSERT INTO gateway_schema_migrations (version, description, applied_at) VALUES (?, ?, ?)').run(
        migration.version,
        migration.description,
        new Date().toISOString(),
      );
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
