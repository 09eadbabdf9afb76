import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey, maskApiKey } from '../../src/auth/api-key.ts';
import { LATEST_KEY_SCHEMA_VERSION } from '../../src/auth/key-store-migrations.ts';
import { mergeKeyPolicy } from '../../src/auth/key-policy.ts';
import {
  InvalidOwnerError,
  KeyStoreSchemaError,
  KeyStoreUnavailableError,
  issueApiKey,
  type KeyStore,
} from '../../src/auth/key-store.ts';
import { openKeyStore } from '../../src/auth/open-key-store.ts';
import { PostgresKeyStore } from '../../src/auth/postgres-key-store.ts';
import { SqliteKeyStore } from '../../src/auth/sqlite-key-store.ts';
import { freePort, waitFor } from '../support/processes.ts';
import { UsageRecorder } from '../../src/usage/usage-recorder.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

/**
 * One contract, two real backends: an SQLite file through node:sqlite and a
 * database of its own on the test PostgreSQL server.
 */

interface Backend {
  name: string;
  /** A store on a fresh, empty database. */
  fresh(): Promise<KeyStore>;
  /** A second store on the same database as the last fresh one. */
  sibling(): KeyStore;
  /** Every value of every row of the key table, as text. */
  dump(): Promise<string>;
  /** Pretends a newer gateway migrated the database. */
  bumpSchema(): Promise<void>;
}

const sqliteDir = mkdtempSync(join(tmpdir(), 'gw-keystore-'));
let sqliteCount = 0;
let sqlitePath = '';

const sqliteBackend: Backend = {
  name: 'sqlite',
  async fresh() {
    sqlitePath = join(sqliteDir, `nested/dir/keys-${++sqliteCount}.sqlite`);
    return new SqliteKeyStore({ path: sqlitePath });
  },
  sibling: () => new SqliteKeyStore({ path: sqlitePath }),
  async dump() {
    const db = new DatabaseSync(sqlitePath);
    try {
      return JSON.stringify(db.prepare('SELECT * FROM gateway_api_keys').all());
    } finally {
      db.close();
    }
  },
  async bumpSchema() {
    const db = new DatabaseSync(sqlitePath);
    db.prepare("INSERT INTO gateway_schema_migrations VALUES (?, 'from the future', '2030-01-01')").run(
      LATEST_KEY_SCHEMA_VERSION + 1,
    );
    db.close();
  },
};

const databases: TestDatabase[] = [];
let pgUrl = '';

async function pgQuery(sql: string, values: unknown[] = []) {
  const client = new Client({ connectionString: pgUrl });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

const postgresBackend: Backend = {
  name: 'postgres',
  async fresh() {
    const db = await createTestDatabase('keystore');
    databases.push(db);
    pgUrl = db.url;
    return new PostgresKeyStore({ connectionString: pgUrl });
  },
  sibling: () => new PostgresKeyStore({ connectionString: pgUrl }),
  async dump() {
    return JSON.stringify((await pgQuery('SELECT * FROM gateway_api_keys')).rows);
  },
  async bumpSchema() {
    await pgQuery("INSERT INTO gateway_schema_migrations (version, description) VALUES ($1, 'from the future')", [
      LATEST_KEY_SCHEMA_VERSION + 1,
    ]);
  },
};

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
});

describe.each([sqliteBackend, postgresBackend])('$name key store', (backend) => {
  let store: KeyStore;
  const open: KeyStore[] = [];
  beforeAll(async () => {
    store = await backend.fresh();
    open.push(store);
  });
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
  });

  it('creates its schema on first use, and migrating again is a no-op', async () => {
    await store.migrate();
    await store.migrate();
    const again = backend.sibling();
    open.push(again);
    await again.migrate();
    expect(await store.list()).toEqual([]);
  });

  it('stores an issued key as SHA-256 only, with owner, creation time, admin and revoked flags', async () => {
    const before = Date.now();
    const { key, record } = await issueApiKey(store, { owner: 'alice', admin: true });
    expect(key).toMatch(/^gw_[A-Za-z0-9_-]{43}$/);
    expect(record.keyHash).toBe(hashApiKey(key));
    expect(record.maskedKey).toBe(maskApiKey(key));

    const found = await store.findByHash(hashApiKey(key));
    expect(found).toEqual(record);
    expect(found?.owner).toBe('alice');
    expect(found?.admin).toBe(true);
    expect(found?.revoked).toBe(false);
    expect(found!.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1);
    expect(found!.createdAt.getTime()).toBeLessThanOrEqual(Date.now());

    const rows = await backend.dump();
    expect(rows).toContain(hashApiKey(key));
    // Neither the key nor any long piece of it is in the database.
    expect(rows).not.toContain(key.slice(3, 20));
    expect(rows).not.toContain(key.slice(-20));
  });

  it('finds by id, lists newest first, hides revoked keys unless asked', async () => {
    const older = await issueApiKey(store, { owner: 'bob', now: new Date(Date.now() - 60_000) });
    const newer = await issueApiKey(store, { owner: 'carol' });
    expect((await store.findById(older.record.id))?.owner).toBe('bob');

    const revoked = await store.revoke(older.record.id);
    expect(revoked?.revoked).toBe(true);
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    const active = await store.list();
    expect(active.map((r) => r.owner)).toContain('carol');
    expect(active.map((r) => r.id)).not.toContain(older.record.id);
    expect(active[0]!.id).toBe(newer.record.id);
    expect((await store.list({ includeRevoked: true })).map((r) => r.id)).toContain(older.record.id);
  });

  it('revoking twice keeps the first revocation time; an unknown id is undefined', async () => {
    const { record } = await issueApiKey(store, { owner: 'dave' });
    const first = await store.revoke(record.id);
    const second = await store.revoke(record.id);
    expect(second?.revokedAt?.getTime()).toBe(first?.revokedAt?.getTime());
    expect(await store.revoke('key_doesnotexist')).toBeUndefined();
    expect(await store.findByHash(hashApiKey('gw_never-issued'))).toBeUndefined();
  });

  it('keeps a key policy and replaces it on update; usage rows add up per key, model and day', async () => {
    const policy = mergeKeyPolicy(
      {},
      {
        tokens_per_minute: 500,
        allowed_models: ['a-*'],
        budget: { amount_usd: 2.5, period: 'month' },
        metadata: { team: 'search' },
      },
    );
    const { record } = await issueApiKey(store, { owner: 'erin', policy });
    expect((await store.findById(record.id))?.policy).toEqual(policy);
    const updated = await store.updatePolicy(
      record.id,
      mergeKeyPolicy(policy, { tokens_per_minute: null, metadata: { user: 'u7' } }),
    );
    expect(updated?.policy).toEqual({
      allowed_models: ['a-*'],
      budget: { amount_usd: 2.5, period: 'month' },
      metadata: { team: 'search', user: 'u7' },
    });
    expect(await store.updatePolicy('key_doesnotexist', {})).toBeUndefined();

    const row = {
      keyId: record.id,
      day: '2026-11-23',
      model: 'a-4o',
      requests: 1,
      promptTokens: 10,
      completionTokens: 5,
      cachedTokens: 4,
      cacheWriteTokens: 2,
      reasoningTokens: 1,
      costNanoUsd: 1_500,
    };
    await store.addUsage([row, { ...row, day: '2026-11-24' }, { ...row, model: 'b-1', costNanoUsd: 7 }]);
    await store.addUsage([{ ...row, requests: 2, promptTokens: 1, completionTokens: 1, costNanoUsd: 3 }]);
    expect(await store.usage({ keyId: record.id })).toEqual([
      { ...row, day: '2026-11-24' },
      {
        ...row,
        requests: 3,
        promptTokens: 11,
        completionTokens: 6,
        cachedTokens: 8,
        cacheWriteTokens: 4,
        reasoningTokens: 2,
        costNanoUsd: 1_503,
      },
      { ...row, model: 'b-1', costNanoUsd: 7 },
    ]);
    expect(await store.usage({ keyId: record.id, fromDay: '2026-11-24', toDay: '2026-11-24' })).toHaveLength(1);
    const totals = await store.usageTotals({});
    expect(totals.find((t) => t.keyId === record.id)).toEqual({
      keyId: record.id,
      day: '',
      model: '',
      requests: 5,
      promptTokens: 31,
      completionTokens: 16,
      cachedTokens: 16,
      cacheWriteTokens: 8,
      reasoningTokens: 4,
      costNanoUsd: 3_010,
    });
    expect((await store.usageTotals({ fromDay: '2026-11-24' })).find((t) => t.keyId === record.id)?.costNanoUsd).toBe(
      1_500,
    );
  });

  it('rejects an owner with control characters or no characters', async () => {
    await expect(issueApiKey(store, { owner: '  ' })).rejects.toBeInstanceOf(InvalidOwnerError);
    await expect(issueApiKey(store, { owner: 'evil\nowner' })).rejects.toBeInstanceOf(InvalidOwnerError);
  });

  it('is shared by two stores on the same database (API and CLI)', async () => {
    const other = backend.sibling();
    open.push(other);
    const { key } = await issueApiKey(other, { owner: 'erin' });
    expect((await store.findByHash(hashApiKey(key)))?.owner).toBe('erin');
  });

  it('migrates once when several processes start together', async () => {
    const fresh = await backend.fresh();
    const siblings = [fresh, backend.sibling(), backend.sibling(), backend.sibling()];
    open.push(...siblings);
    await Promise.all(siblings.map((s) => s.migrate()));
    await issueApiKey(siblings[1]!, { owner: 'frank' });
    expect((await siblings[3]!.list()).map((r) => r.owner)).toEqual(['frank']);
  });

  it('refuses a database migrated by a newer gateway', async () => {
    const fresh = await backend.fresh();
    open.push(fresh);
    await fresh.migrate();
    await backend.bumpSchema();
    const late = backend.sibling();
    open.push(late);
    await expect(late.migrate()).rejects.toBeInstanceOf(KeyStoreSchemaError);
    await expect(late.findByHash('x')).rejects.toThrow(/newer than this gateway knows/);
  });
});

describe('key store selection and failures', () => {
  it('uses PostgreSQL when DATABASE_URL is set, else SQLite at KEY_DB_PATH', async () => {
    const pg = openKeyStore({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', KEY_DB_PATH: 'unused' });
    const lite = openKeyStore({ DATABASE_URL: undefined, KEY_DB_PATH: join(sqliteDir, 'selected.sqlite') });
    expect(pg.kind).toBe('postgres');
    expect(lite.kind).toBe('sqlite');
    await lite.migrate();
    expect(readdirSync(sqliteDir)).toContain('selected.sqlite');
    await Promise.all([pg.close(), lite.close()]);
  });

  it('an unreachable PostgreSQL fails calls without hanging, and works once reachable', async () => {
    const port = await freePort();
    const dead = new PostgresKeyStore({
      connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
      connectTimeoutMs: 1_000,
    });
    await expect(dead.ping()).rejects.toThrow();
    await expect(dead.migrate()).rejects.toThrow();
    await expect(dead.findByHash('x')).rejects.toThrow();
    await dead.close();
  });

  it('a PostgreSQL that is down at first use gets its schema once it comes up', async () => {
    const db = await createTestDatabase('keystore_late');
    databases.push(db);
    const proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
    await proxy.cut();
    const url = new URL(db.url);
    url.port = String(proxy.port);
    const store = new PostgresKeyStore({ connectionString: url.toString(), connectTimeoutMs: 1_000 });
    try {
      await expect(store.migrate()).rejects.toThrow();
      await proxy.restore();
      const { key } = await issueApiKey(store, { owner: 'late' });
      expect((await store.findByHash(hashApiKey(key)))?.owner).toBe('late');
    } finally {
      await store.close();
      await proxy.close();
    }
  });

  it('usage batched by the recorder survives a database outage: written once PostgreSQL is back', async () => {
    const db = await createTestDatabase('keystore_usage');
    databases.push(db);
    const proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
    const url = new URL(db.url);
    url.port = String(proxy.port);
    const store = new PostgresKeyStore({ connectionString: url.toString(), connectTimeoutMs: 500 });
    const errors: string[] = [];
    const recorder = new UsageRecorder({ store, flushMs: 50, onError: (err) => errors.push(err.message) });
    try {
      await store.migrate();
      await proxy.cut();
      const row = {
        keyId: 'key_outage',
        day: '2026-11-24',
        model: 'a-4o',
        requests: 1,
        promptTokens: 3,
        completionTokens: 4,
        costNanoUsd: 10,
      };
      recorder.add(row);
      recorder.add(row);
      await waitFor(() => errors.length > 0, 5_000, 'a failed write');
      recorder.add(row);
      await proxy.restore();
      await waitFor(
        async () => (await store.usage({ keyId: 'key_outage' }))[0]?.requests === 3,
        10_000,
        'the retried write',
      );
      expect(await store.usage({ keyId: 'key_outage' })).toEqual([
        {
          ...row,
          requests: 3,
          promptTokens: 9,
          completionTokens: 12,
          cachedTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
          costNanoUsd: 30,
        },
      ]);
    } finally {
      await recorder.close();
      await store.close();
      await proxy.close();
    }
  });

  it('an SQLite path that cannot be opened is a KeyStoreUnavailableError, not a crash', async () => {
    const file = join(sqliteDir, 'a-file');
    writeFileSync(file, 'not a folder');
    const store = new SqliteKeyStore({ path: join(file, 'keys.sqlite') });
    await expect(store.ping()).rejects.toBeInstanceOf(KeyStoreUnavailableError);
    await expect(store.findByHash('x')).rejects.toBeInstanceOf(KeyStoreUnavailableError);
    expect(readFileSync(file, 'utf8')).toBe('not a folder');
  });
});
