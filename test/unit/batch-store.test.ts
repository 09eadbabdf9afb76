import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchStore } from '../../src/batches/batch-store.ts';
import { FILE_CHUNK_BYTES, storedChunks } from '../../src/batches/file-upload.ts';
import { openBatchDb, type SqlDb } from '../../src/batches/sql-db.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';

/** The batch store's contract on both real backends: an SQLite file and a database of its own on the test PostgreSQL. */

let postgres: TestDatabase | undefined;
const dbs: SqlDb[] = [];

beforeAll(async () => {
  postgres = await createTestDatabase('batch_store').catch(() => undefined);
  if (!postgres) console.warn('\n*** batch-store: PostgreSQL unreachable, its cases are skipped ***\n');
});

afterAll(async () => {
  await Promise.all(dbs.map((db) => db.close()));
  await postgres?.drop();
});

const backends = [
  {
    name: 'sqlite',
    settings: () => ({
      KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-batch-store-')), 'db.sqlite'),
      DATABASE_URL: undefined,
    }),
  },
  { name: 'postgres', settings: () => (postgres ? { KEY_DB_PATH: '', DATABASE_URL: postgres.url } : undefined) },
];

/** The whole text of a file, joined from the pieces it is read in. */
async function textOf(content: Promise<AsyncIterable<string>>): Promise<string> {
  let text = '';
  for await (const piece of await content) text += piece;
  return text;
}

const alice = { owner: 'alice', admin: false };
const bob = { owner: 'bob', admin: false };
const admin = { owner: 'root', admin: true };

describe.each(backends)('on $name', (backend) => {
  let store: BatchStore;
  let db: () => SqlDb;
  let settings: ReturnType<(typeof backends)[number]['settings']>;

  beforeAll(() => {
    settings = backend.settings();
    if (!settings) return;
    const opened = openBatchDb(settings);
    dbs.push(opened);
    db = () => opened;
    store = new BatchStore(opened);
  });

  it('keeps files and batches per owner, visible to an admin, paged newest first', async (ctx) => {
    if (!settings) return ctx.skip();
    const files = [];
    for (let i = 0; i < 3; i++)
      files.push(
        await store.createFile({
          owner: 'alice',
          filename: `f${i}.jsonl`,
          purpose: 'batch',
          content: `{"n":${i}}\n`,
        }),
      );
    await store.createFile({ owner: 'bob', filename: 'b.jsonl', purpose: 'batch', content: '' });
    await expect(store.file(files[0]!.id, bob)).rejects.toMatchObject({ code: 'not_found' });
    expect(await textOf(store.fileContent(files[1]!.id, admin))).toBe('{"n":1}\n');
    const first = await store.listFiles(alice, { limit: 2 });
    expect(first.data.map((f) => f.id)).toEqual([files[2]!.id, files[1]!.id]);
    expect(first).toMatchObject({ has_more: true, first_id: files[2]!.id, last_id: files[1]!.id });
    const second = await store.listFiles(alice, { limit: 2, after: first.last_id! });
    expect(second.data.map((f) => f.id)).toEqual([files[0]!.id]);
    expect(second.has_more).toBe(false);
    expect((await store.listFiles(admin, { limit: 100 })).data).toHaveLength(4);
    expect(await store.deleteFile(files[0]!.id, alice)).toMatchObject({ deleted: true });
    await expect(store.fileContent(files[0]!.id, alice)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('stores an upload larger than a chunk in chunks and reads it back byte-identical, in order', async (ctx) => {
    if (!settings) return ctx.skip();
    // 2.5 chunks of lines with a two-byte character, written in odd pieces so characters straddle chunk ends.
    const line = `${JSON.stringify({ custom_id: 'x', body: { text: 'é'.repeat(50) + 'y'.repeat(77) } })}\n`;
    const original = Buffer.from(line.repeat(Math.ceil((2.5 * FILE_CHUNK_BYTES) / Buffer.byteLength(line))));
    const upload = await store.openUpload('carol');
    for (let at = 0; at < original.length; at += 65_537) await upload.write(original.subarray(at, at + 65_537));
    const file = await store.createFile({ owner: 'carol', filename: 'big.jsonl', purpose: 'batch', content: upload });
    expect(file.bytes).toBe(original.length);
    const pieces: string[] = [];
    for await (const piece of await store.fileContent(file.id, { owner: 'carol', admin: false })) pieces.push(piece);
    expect(pieces).toHaveLength(3);
    expect(Buffer.from(pieces.join('')).equals(original)).toBe(true);
    expect(await textOf(store.inputContent(file.id) as Promise<AsyncIterable<string>>)).toBe(original.toString());
    await store.deleteFile(file.id, { owner: 'carol', admin: false });
    expect(await textOf(store.inputContent(file.id).then((c) => c ?? (async function* () {})()))).toBe('');
  });

  it('stops an upload once its bytes pass the quota, and keeps none of its chunks', async (ctx) => {
    if (!settings) return ctx.skip();
    await store.createFile({ owner: 'dave', filename: 'a.jsonl', purpose: 'batch', content: 'x'.repeat(1000) });
    const upload = await store.openUpload('dave', 3 * FILE_CHUNK_BYTES);
    await upload.write(Buffer.alloc(2 * FILE_CHUNK_BYTES, 'a'));
    await expect(upload.write(Buffer.alloc(FILE_CHUNK_BYTES, 'a'))).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining(
        `quota of ${3 * FILE_CHUNK_BYTES} bytes (FILES_MAX_BYTES_PER_OWNER; 1000 in use)`,
      ),
    });
    await upload.abort();
    expect(await textOf(Promise.resolve(storedChunks(db(), upload.id)))).toBe('');
  });

  it('refuses an upload that is not UTF-8 with 400', async (ctx) => {
    if (!settings) return ctx.skip();
    const upload = await store.openUpload('erin');
    await upload.write(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    await expect(
      store.createFile({ owner: 'erin', filename: 'bad.jsonl', purpose: 'batch', content: upload }),
    ).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('UTF-8') });
    expect((await store.listFiles({ owner: 'erin', admin: false }, { limit: 10 })).data).toEqual([]);
  });

  it('creates a batch already failed when the creating key found errors', async (ctx) => {
    if (!settings) return ctx.skip();
    const file = await store.createFile({
      owner: 'alice',
      filename: 'in.jsonl',
      purpose: 'batch',
      content: 'x',
    });
    const errors = [
      { code: 'model_not_allowed', message: "This key may not use the model 'm'.", param: 'body.model', line: 1 },
    ];
    const batch = await store.createBatch({
      owner: 'alice',
      inputFileId: file.id,
      endpoint: '/v1/chat/completions',
      completionWindow: '24h',
      windowSeconds: 86_400,
      metadata: null,
      errors,
    });
    expect(batch).toMatchObject({ status: 'failed', errors: { object: 'list', data: errors } });
    expect(batch.failed_at).toBeGreaterThan(0);
  });

  it('lets one runner hold a batch until its lease lapses, and records each line once', async (ctx) => {
    if (!settings) return ctx.skip();
    const file = await store.createFile({
      owner: 'alice',
      filename: 'in.jsonl',
      purpose: 'batch',
      content: 'x',
    });
    const batch = await store.createBatch({
      owner: 'alice',
      inputFileId: file.id,
      endpoint: '/v1/chat/completions',
      completionWindow: '24h',
      windowSeconds: 86_400,
      metadata: { k: 'v' },
    });
    expect(batch).toMatchObject({
      status: 'validating',
      metadata: { k: 'v' },
      request_counts: { total: 0, completed: 0, failed: 0 },
    });
    expect(await store.claimAll('one', 300)).toContain(batch.id);
    expect(await store.claimAll('two', 300)).not.toContain(batch.id);
    expect(await store.claim(batch.id, 'one', 300)).toBe(true);
    expect(await store.claim(batch.id, 'two', 300)).toBe(false);
    expect(await store.claim(batch.id, 'one', 300)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await store.claim(batch.id, 'two', 300)).toBe(true);
    await store.release(batch.id, 'two');
    expect(await store.claim(batch.id, 'one', 300)).toBe(true);

    await store.start(
      batch.id,
      [0, 1, 2].map((i) => ({ customId: `c${i}`, body: '{}' })),
    );
    expect((await store.batch(batch.id, alice)).status).toBe('in_progress');
    expect((await store.openLines(batch.id, 10, new Set([1]))).map((l) => l.custom_id)).toEqual(['c0', 'c2']);
    await store.markDispatched(batch.id, 0, 'job-0');
    expect((await store.openLines(batch.id, 1, new Set()))[0]).toMatchObject({ status: 'dispatched', job_id: 'job-0' });
    expect(await store.finishLine(batch.id, 0, 'succeeded', '{"custom_id":"c0"}')).toBe(true);
    expect(await store.finishLine(batch.id, 0, 'failed', '{"again":true}')).toBe(false);
    expect(await store.finishLine(batch.id, 2, 'failed', '{"custom_id":"c2"}')).toBe(true);
    expect((await store.batch(batch.id, alice)).request_counts).toEqual({ total: 3, completed: 1, failed: 1 });

    await store.finishLine(batch.id, 1, 'succeeded', '{"custom_id":"c1"}');
    expect(await store.setStatus(batch.id, ['in_progress'], 'finalizing', 'finalizing_at')).toBe(true);
    await store.finish(batch.id, 'finalizing', 'completed', 'completed_at');
    const done = await store.batch(batch.id, alice);
    expect(done.status).toBe('completed');
    expect(await textOf(store.fileContent(done.output_file_id!, alice))).toBe(
      '{"custom_id":"c0"}\n{"custom_id":"c1"}\n',
    );
    expect(await textOf(store.fileContent(done.error_file_id!, alice))).toBe('{"custom_id":"c2"}\n');
    expect((await store.file(done.output_file_id!, alice)).bytes).toBe(38);
    // Finishing again (a runner that died before the status change) writes no second pair of files.
    const outputs = (await store.listFiles(alice, { limit: 100, purpose: 'batch_output' })).data.length;
    await store.finish(batch.id, 'finalizing', 'completed', 'completed_at');
    expect((await store.listFiles(alice, { limit: 100, purpose: 'batch_output' })).data.length).toBe(outputs);
    expect(await store.claimAll('one', 300)).not.toContain(batch.id);
    await expect(store.requestCancel(batch.id, alice)).rejects.toMatchObject({ code: 'invalid_request' });

    // A reply arriving once the batch stopped is not recorded.
    const other = await store.createBatch({
      owner: 'alice',
      inputFileId: file.id,
      endpoint: '/v1/chat/completions',
      completionWindow: '1h',
      windowSeconds: 3600,
      metadata: null,
    });
    await store.start(other.id, [{ customId: 'late', body: '{}' }]);
    expect(await store.markDispatched(other.id, 0, 'job-running')).toBe(true);
    expect((await store.requestCancel(other.id, alice)).status).toBe('cancelling');
    // Nothing more is queued for it, and a reply arriving now is not recorded.
    expect(await store.markDispatched(other.id, 0, 'job-late')).toBe(false);
    expect(await store.finishLine(other.id, 0, 'succeeded', '{}')).toBe(false);
    await store.finish(other.id, 'cancelling', 'cancelled', 'cancelled_at');
    expect(await store.batch(other.id, alice)).toMatchObject({
      status: 'cancelled',
      output_file_id: null,
      request_counts: { total: 1, completed: 0, failed: 0 },
    });
  });
});

it('answers 503 while the database cannot be reached', async () => {
  const db = openBatchDb({ KEY_DB_PATH: '', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
  await expect(new BatchStore(db).claimAll('runner', 1_000)).rejects.toMatchObject({ code: 'service_unavailable' });
  await db.close();
});
