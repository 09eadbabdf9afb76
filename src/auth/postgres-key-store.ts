import { Pool, type PoolClient } from 'pg';
import { LATEST_KEY_SCHEMA_VERSION, pendingMigrations } from './key-store-migrations.ts';
import { KeyStoreSchemaError, type ApiKeyRecord, type KeyStore } from './key-store.ts';
import { parseStoredPolicy, type KeyPolicy } from './key-policy.ts';
import {
  usageFromDbRow,
  type KeyUsageRow,
  type KeyUsageTotal,
  type UsageDbRow,
  type UsageDelta,
} from '../usage/key-usage.ts';
import { withTransaction } from '../db/pg-transaction.ts';

/** Options of {@link PostgresKeyStore}. */
export interface PostgresKeyStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  connectionString: string;
  /** Pool size per process. @defaultValue 4: lookups are cached, so few connections suffice */
  maxConnections?: number;
  /** Time to open a connection before failing, ms. @defaultValue 3000 */
  connectTimeoutMs?: number;
  /** Longest a query may run, ms. @defaultValue 5000 */
  queryTimeoutMs?: number;
  /** Called with pool errors of idle connections (e.g. the server went away). @defaultValue ignored */
  onError?: (err: Error) => void;
}

interface Row {
  id: string;
  key_hash: string;
  masked_key: string;
  owner: string;
  is_admin: boolean;
  revoked: boolean;
  created_at: Date;
  revoked_at: Date | null;
  policy: object;
}

const COLUMNS = 'id, key_hash, masked_key, owner, is_admin, revoked, created_at, revoked_at, policy';

function toRecord(row: Row): ApiKeyRecord {
  return {
    id: row.id,
    keyHash: row.key_hash.trim(),
    maskedKey: row.masked_key,
    owner: row.owner,
    admin: row.is_admin,
    revoked: row.revoked,
    createdAt: new Date(row.created_at),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
    policy: parseStoredPolicy(row.policy),
  };
}

/** Arbitrary constant: the advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK_ID = 727_274_001;

/**
 * The key store on PostgreSQL (`DATABASE_URL`). The schema is migrated on
 * first use under an advisory lock, so replicas starting together do not race;
 * a failed attempt (database down) is retried on the next call.
 */
export class PostgresKeyStore implements KeyStore {
  readonly kind = 'postgres' as const;
  private readonly pool: Pool;
  private ready: Promise<void> | undefined;

  constructor(options: PostgresKeyStoreOptions) {
    this.pool = new Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 4,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 3_000,
      query_timeout: options.queryTimeoutMs ?? 5_000,
      idleTimeoutMillis: 30_000,
      application_name: 'llm-gateway',
    });
    // An idle client losing its server emits here; unhandled it would kill the process.
    this.pool.on('error', (err) => options.onError?.(err));
  }

  private schema(): Promise<void> {
    this.ready ??= this.runMigrations().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async runMigrations(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS gateway_schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())',
      );
      const { rows } = await client.query<{ v: number }>(
        'SELECT COALESCE(MAX(version), 0)::int AS v FROM gateway_schema_migrations',
      );
      const current = rows[0]?.v ?? 0;
      if (current > LATEST_KEY_SCHEMA_VERSION) {
        throw new KeyStoreSchemaError(
          `the key store schema is at version ${current}, newer than this gateway knows (${LATEST_KEY_SCHEMA_VERSION}); upgrade the gateway`,
        );
      }
      for (const migration of pendingMigrations(current)) {
        await client.query(migration.postgres);
        await client.query('INSERT INTO gateway_schema_migrations (version, description) VALUES ($1, $2)', [
          migration.version,
          migration.description,
        ]);
      }
    });
  }

  private transaction(fn: (client: PoolClient) => Promise<void>): Promise<void> {
    return withTransaction(this.pool, fn);
  }

  private async query<R extends object>(text: string, values: unknown[] = []): Promise<R[]> {
    await this.schema();
    const result = await this.pool.query<R>(text, values);
    return result.rows;
  }

  async migrate(): Promise<void> {
    await this.schema();
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    await this.query(`INSERT INTO gateway_api_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
      record.id,
      record.keyHash,
      record.maskedKey,
      record.owner,
      record.admin,
      record.revoked,
      record.createdAt,
      record.revokedAt,
      JSON.stringify(record.policy),
    ]);
  }

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.query<Row>(`SELECT ${COLUMNS} FROM gateway_api_keys WHERE key_hash = $1`, [keyHash]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.query<Row>(`SELECT ${COLUMNS} FROM gateway_api_keys WHERE id = $1`, [id]);
    return rows[0] ? toRecord(rows[0]) : undefined;
  }

  async list(options: { includeRevoked?: boolean } = {}): Promise<ApiKeyRecord[]> {
    const where = options.includeRevoked ? '' : 'WHERE NOT revoked';
    const rows = await this.query<Row>(`SELECT ${COLUMNS} FROM gateway_api_keys ${where} ORDER BY created_at DESC, id`);
    return rows.map(toRecord);
  }

  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    await this.query('UPDATE gateway_api_keys SET revoked = TRUE, revoked_at = now() WHERE id = $1 AND NOT revoked', [
      id,
    ]);
    return this.findById(id);
  }

  async updatePolicy(id: string, policy: KeyPolicy): Promise<ApiKeyRecord | undefined> {
    await this.query('UPDATE gateway_api_keys SET policy = $2::jsonb WHERE id = $1', [id, JSON.stringify(policy)]);
    return this.findById(id);
  }

  async addUsage(deltas: readonly UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    await this.schema();
    // One statement for the whole batch: unnest turns the column arrays back into rows.
    await this.pool.query(
      `INSERT INTO gateway_key_usage (key_id, day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_nano_usd)
       SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])
       ON CONFLICT (key_id, day, model) DO UPDATE SET requests = gateway_key_usage.requests + excluded.requests,
         prompt_tokens = gateway_key_usage.prompt_tokens + excluded.prompt_tokens,
         completion_tokens = gateway_key_usage.completion_tokens + excluded.completion_tokens,
         cached_tokens = gateway_key_usage.cached_tokens + excluded.cached_tokens,
         cache_write_tokens = gateway_key_usage.cache_write_tokens + excluded.cache_write_tokens,
         reasoning_tokens = gateway_key_usage.reasoning_tokens + excluded.reasoning_tokens,
         cost_nano_usd = gateway_key_usage.cost_nano_usd + excluded.cost_nano_usd`,
      [
        deltas.map((d) => d.keyId),
        deltas.map((d) => d.day),
        deltas.map((d) => d.model),
        deltas.map((d) => d.requests),
        deltas.map((d) => d.promptTokens),
        deltas.map((d) => d.completionTokens),
        deltas.map((d) => d.cachedTokens ?? 0),
        deltas.map((d) => d.cacheWriteTokens ?? 0),
        deltas.map((d) => d.reasoningTokens ?? 0),
        deltas.map((d) => d.costNanoUsd),
      ],
    );
  }

  async usage(filter: { keyId?: string; fromDay?: string; toDay?: string }): Promise<KeyUsageRow[]> {
    const rows = await this.query<UsageDbRow>(
      `SELECT key_id, to_char(day, 'YYYY-MM-DD') AS day, model, requests, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_nano_usd FROM gateway_key_usage
       WHERE ($1::text IS NULL OR key_id = $1) AND ($2::date IS NULL OR day >= $2) AND ($3::date IS NULL OR day <= $3)
       ORDER BY day DESC, key_id, model`,
      [filter.keyId ?? null, filter.fromDay ?? null, filter.toDay ?? null],
    );
    return rows.map(usageFromDbRow);
  }

  async usageTotals(filter: { fromDay?: string }): Promise<KeyUsageTotal[]> {
    const rows = await this.query<UsageDbRow>(
      `SELECT key_id, '' AS day, '' AS model, SUM(requests) AS requests, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens, SUM(cached_tokens) AS cached_tokens, SUM(cache_write_tokens) AS cache_write_tokens, SUM(reasoning_tokens) AS reasoning_tokens, SUM(cost_nano_usd) AS cost_nano_usd FROM gateway_key_usage WHERE ($1::date IS NULL OR day >= $1) GROUP BY key_id`,
      [filter.fromDay ?? null],
    );
    return rows.map(usageFromDbRow);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
