import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { Pool, type PoolClient } from 'pg';
import type { Settings } from '../config/settings.ts';
import { ServiceUnavailableError } from '../errors/catalog.ts';
import { BATCH_MIGRATIONS, LATEST_BATCH_SCHEMA_VERSION } from './batch-schema.ts';
import { withTransaction } from '../db/pg-transaction.ts';

export type SqlValue = string | number | null;

/**
 * The little SQL the batch store needs, on SQLite or PostgreSQL alike.
 * Statements use `?` placeholders (turned into `$n` for PostgreSQL). The
 * schema is created or migrated on first use.
 */
export interface SqlDb {
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** Rows changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** One statement run for every row, in one transaction. */
  runMany(sql: string, rows: readonly (readonly SqlValue[])[]): Promise<void>;
  close(): Promise<void>;
}

/** Thrown when the batch schema of the database is newer than this code. */
class BatchSchemaError extends Error {
  constructor(version: number) {
    super(
      `the batch schema is at version ${version}, newer than this gateway knows (${LATEST_BATCH_SCHEMA_VERSION}); upgrade the gateway`,
    );
    this.name = 'BatchSchemaError';
  }
}

const MIGRATIONS_TABLE =
  'CREATE TABLE IF NOT EXISTS gateway_batch_schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at BIGINT NOT NULL)';

/**
 * The database of the key store (`DATABASE_URL`, else `KEY_DB_PATH`). Nothing
 * is opened before the first call; a failing call is a 503 for the client.
 */
export function openBatchDb(settings: Pick<Settings, 'DATABASE_URL' | 'KEY_DB_PATH'>): SqlDb {
  return unavailableOnError(
    settings.DATABASE_URL ? new PostgresDb(settings.DATABASE_URL) : new SqliteDb(settings.KEY_DB_PATH),
  );
}

function unavailableOnError(db: SqlDb): SqlDb {
  const wrap = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      throw new ServiceUnavailableError('The batch database is not reachable; retry shortly.', { cause: err });
    }
  };
  return {
    all: (sql, params) => wrap(() => db.all(sql, params)),
    run: (sql, params) => wrap(() => db.run(sql, params)),
    runMany: (sql, rows) => wrap(() => db.runMany(sql, rows)),
    close: () => db.close(),
  };
}

class SqliteDb implements SqlDb {
  private db: DatabaseSync | undefined;
  private readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  private database(): DatabaseSync {
    if (this.db) return this.db;
    if (this.path !== ':memory:') mkdirSync(dirname(this.path), { recursive: true });
    const db = new DatabaseSync(this.path, { timeout: 5_000 });
    try {
      // NORMAL: a commit reaches the WAL without an fsync of its own (node:sqlite blocks the event loop while
      // it syncs); it survives any process crash, and a power loss can only undo the last line outcomes, which run again.
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;');
      this.transaction(db, 'BEGIN IMMEDIATE', () => {
        db.exec(MIGRATIONS_TABLE);
        const { v } = db
          .prepare('SELECT COALESCE(MAX(version), 0) AS v FROM gateway_batch_schema_migrations')
          .get() as { v: number };
        if (v > LATEST_BATCH_SCHEMA_VERSION) throw new BatchSchemaError(v);
        for (const m of BATCH_MIGRATIONS.filter((m) => m.version > v)) {
          db.exec(m.sql);
          db.prepare(
            'INSERT INTO gateway_batch_schema_migrations (version, description, applied_at) VALUES (?, ?, ?)',
          ).run(m.version, m.description, Date.now());
        }
      });
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
    return db;
  }

  private transaction(db: DatabaseSync, begin: string, fn: () => void): void {
    db.exec(begin);
    try {
      fn();
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    return this.database()
      .prepare(sql)
      .all(...(params as SQLInputValue[])) as T[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return Number(
      this.database()
        .prepare(sql)
        .run(...(params as SQLInputValue[])).changes,
    );
  }

  async runMany(sql: string, rows: readonly (readonly SqlValue[])[]): Promise<void> {
    const db = this.database();
    const statement = db.prepare(sql);
    this.transaction(db, 'BEGIN', () => {
      for (const row of rows) statement.run(...(row as SQLInputValue[]));
    });
  }

  async close(): Promise<void> {
    this.db?.close();
    this.db = undefined;
  }
}

/** Serialises migrations of replicas starting together (any constant other than the key store's). */
const MIGRATION_LOCK_ID = 727_274_024;

class PostgresDb implements SqlDb {
  private readonly pool: Pool;
  private ready: Promise<void> | undefined;

  constructor(connectionString: string) {
    this.pool = new Pool({
      connectionString,
      max: 4,
      connectionTimeoutMillis: 3_000,
      query_timeout: 30_000,
      application_name: 'llm-gateway-batches',
    });
    // An idle client losing its server emits here; the next query reports the problem.
    this.pool.on('error', () => {});
  }

  private schema(): Promise<void> {
    this.ready ??= this.migrate().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
      await client.query(MIGRATIONS_TABLE);
      const { rows } = await client.query<{ v: number }>(
        'SELECT COALESCE(MAX(version), 0)::int AS v FROM gateway_batch_schema_migrations',
      );
      const current = rows[0]?.v ?? 0;
      if (current > LATEST_BATCH_SCHEMA_VERSION) throw new BatchSchemaError(current);
      for (const m of BATCH_MIGRATIONS.filter((m) => m.version > current)) {
        await client.query(m.sql);
        await client.query(
          'INSERT INTO gateway_batch_schema_migrations (version, description, applied_at) VALUES ($1, $2, $3)',
          [m.version, m.description, Date.now()],
        );
      }
    });
  }

  private transaction(fn: (client: PoolClient) => Promise<void>): Promise<void> {
    return withTransaction(this.pool, fn);
  }

  async all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    await this.schema();
    return (await this.pool.query(numbered(sql), params as SqlValue[])).rows as T[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    await this.schema();
    return (await this.pool.query(numbered(sql), params as SqlValue[])).rowCount ?? 0;
  }

  async runMany(sql: string, rows: readonly (readonly SqlValue[])[]): Promise<void> {
    await this.schema();
    const text = numbered(sql);
    await this.transaction(async (client) => {
      for (const row of rows) await client.query(text, row as SqlValue[]);
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** `?` placeholders as PostgreSQL's `$1, $2, …` (no statement here holds a literal `?`). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
