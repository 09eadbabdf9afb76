import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-key.ts';
import { PostgresKeyStore } from '../../src/auth/postgres-key-store.ts';
import { SqliteKeyStore } from '../../src/auth/sqlite-key-store.ts';
import { BatchStore } from '../../src/batches/batch-store.ts';
import { openBatchDb } from '../../src/batches/sql-db.ts';
import type { KeyStore } from '../../src/auth/key-store.ts';
import { runGatewayCli } from '../support/gateway-cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { uniquePrefix } from '../support/redis.ts';

/** The `gateway` bin as a real process, against a real SQLite file and a real PostgreSQL database. */

let database: TestDatabase;
const sqlitePath = join(mkdtempSync(join(tmpdir(), 'gw-cli-')), 'keys.sqlite');

beforeAll(async () => {
  database = await createTestDatabase('cli');
});
afterAll(async () => {
  await database?.drop();
});

const backends = [
  {
    name: 'sqlite',
    env: () => ({ KEY_DB_PATH: sqlitePath }),
    store: (): KeyStore => new SqliteKeyStore({ path: sqlitePath }),
  },
  {
    name: 'postgres',
    env: () => ({ DATABASE_URL: database.url }),
    store: (): KeyStore => new PostgresKeyStore({ connectionString: database.url }),
  },
];

describe.each(backends)('gateway keys ($name)', (backend) => {
  const env = () => ({ ...backend.env(), REDIS_KEY_PREFIX: uniquePrefix('cli') });

  it('create prints the new key, the owner and the creation time, and stores only its hash', async () => {
    const before = Date.now();
    const run = await runGatewayCli(['keys', 'create', '--owner', 'alice'], env());
    expect(run.code, run.stderr).toBe(0);
    const key = /key:\s+(gw_[A-Za-z0-9_-]{43})\n/.exec(run.stdout)?.[1];
    expect(key).toBeDefined();
    expect(run.stdout).toMatch(/owner:\s+alice\n/);
    expect(run.stdout).toMatch(/admin:\s+no\n/);
    const created = /created_at:\s+(\S+)/.exec(run.stdout)?.[1];
    expect(Date.parse(created!)).toBeGreaterThanOrEqual(before - 1000);
    expect(run.stderr).toContain('cannot be shown again');

    const store = backend.store();
    try {
      const record = await store.findByHash(hashApiKey(key!));
      expect(record?.owner).toBe('alice');
      expect(record?.admin).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('revoke cancels the running batches of the key, not those of other keys', async () => {
    const issued = JSON.parse(
      (await runGatewayCli(['keys', 'create', '--owner', 'batch-owner', '--json'], env())).stdout,
    ) as { id: string };
    const kept = JSON.parse(
      (await runGatewayCli(['keys', 'create', '--owner', 'batch-owner', '--json'], env())).stdout,
    ) as { id: string };
    const db = openBatchDb({ KEY_DB_PATH: '', DATABASE_URL: undefined, ...backend.env() });
    const batches = new BatchStore(db);
    try {
      const file = await batches.createFile({
        owner: 'batch-owner',
        filename: 'in.jsonl',
        purpose: 'batch',
        content: '{}\n',
      });
      const batch = (keyId: string) =>
        batches.createBatch({
          owner: 'batch-owner',
          keyId,
          inputFileId: file.id,
          endpoint: '/v1/chat/completions',
          completionWindow: '24h',
          windowSeconds: 86_400,
          metadata: null,
        });
      const mine = [await batch(issued.id), await batch(issued.id)];
      const other = await batch(kept.id);
      const run = await runGatewayCli(['keys', 'revoke', issued.id, '--json'], env());
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ id: issued.id, revoked: true, batches_cancelled: 2 });
      const owner = { owner: 'batch-owner', admin: false };
      for (const b of mine) expect((await batches.batch(b.id, owner)).status).toBe('cancelling');
      expect((await batches.batch(other.id, owner)).status).toBe('validating');
    } finally {
      await db.close();
    }
  });

  it('create --admin --json, list masks keys, revoke by id and by key', async () => {
    const admin = await runGatewayCli(['keys', 'create', '--owner', 'root-ops', '--admin', '--json'], env());
    expect(admin.code, admin.stderr).toBe(0);
    const issued = JSON.parse(admin.stdout) as {
      key: string;
      id: string;
      admin: boolean;
      owner: string;
      created_at: string;
    };
    expect(issued).toMatchObject({ owner: 'root-ops', admin: true });
    const other = JSON.parse((await runGatewayCli(['keys', 'create', '--owner', 'bob', '--json'], env())).stdout) as {
      key: string;
      id: string;
    };

    const list = await runGatewayCli(['keys', 'list'], env());
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/ID\s+KEY\s+OWNER\s+ADMIN\s+STATUS\s+CREATED/);
    expect(list.stdout).toContain(`${issued.key.slice(0, 6)}…${issued.key.slice(-4)}`);
    expect(list.stdout).not.toContain(issued.key);
    expect(list.stdout).not.toContain(other.key);

    const byId = await runGatewayCli(['keys', 'revoke', issued.id], env());
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toContain(`Revoked ${issued.id}`);
    const byKey = await runGatewayCli(['keys', 'revoke', other.key, '--json'], env());
    expect(byKey.code, byKey.stderr).toBe(0);
    expect(JSON.parse(byKey.stdout)).toMatchObject({
      id: other.id,
      revoked: true,
      already_revoked: false,
      gateways_notified: true,
    });

    const active = JSON.parse((await runGatewayCli(['keys', 'list', '--json'], env())).stdout) as Array<{ id: string }>;
    expect(active.map((r) => r.id)).not.toContain(issued.id);
    const all = JSON.parse((await runGatewayCli(['keys', 'list', '--all', '--json'], env())).stdout) as Array<{
      id: string;
      revoked: boolean;
      key: string;
    }>;
    expect(all.find((r) => r.id === issued.id)).toMatchObject({
      revoked: true,
      key: `${issued.key.slice(0, 6)}…${issued.key.slice(-4)}`,
    });
  });

  it('fails clearly: missing owner (2), unknown key (1), unknown command (2)', async () => {
    const noOwner = await runGatewayCli(['keys', 'create'], env());
    expect(noOwner.code).toBe(2);
    expect(noOwner.stderr).toContain('--owner <owner> is required');
    const unknown = await runGatewayCli(['keys', 'revoke', 'key_0000000000000000'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No such key');
    const bad = await runGatewayCli(['keys', 'frobnicate'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown keys command 'frobnicate'");
  });
});

describe('gateway keys, store unreachable', () => {
  it('exits 1 with the reason and where it looked, without the password', async () => {
    const run = await runGatewayCli(['keys', 'list'], {
      DATABASE_URL: 'postgres://postgres:s3cret@127.0.0.1:1/test',
      REDIS_KEY_PREFIX: uniquePrefix('cli'),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('postgres://127.0.0.1:1/test');
    expect(run.stderr).not.toContain('s3cret');
  });
});
