import { afterAll, describe, expect, it } from 'vitest';
import { JobRows } from '../../src/batches/job-rows.ts';
import { openBatchDb } from '../../src/batches/sql-db.ts';
import { GatewayError } from '../../src/errors/catalog.ts';
import { AsyncJobIds } from '../../src/batches/async-job-id.ts';
import { AsyncJobStore } from '../../src/batches/async-jobs.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Jobs live in the key-store database (an in-memory SQLite here); Redis only
 * tells a running job from a waiting one. Which error a missing row turns
 * into: lost (410) only for a minted id of the asking owner within the TTL.
 */

const prefix = uniquePrefix('async-store');
const redis = testRedis();
const db = openBatchDb({ KEY_DB_PATH: ':memory:', DATABASE_URL: undefined });
const TTL = 3600;
const ids = new AsyncJobIds('store test secret');
const store = new AsyncJobStore({ rows: new JobRows(db), redis, prefix, ttlSeconds: TTL, ids });
const request = {
  model: 'a-4o',
  json: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: 'hi' }] }),
  priority: 1000,
};

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
  await db.close();
});

async function failure(read: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  const err = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GatewayError);
  const { code, status, message } = err as GatewayError;
  return { code, status, message };
}

describe('AsyncJobStore', () => {
  it('answers the owner from the database, and other owners 404', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', request);
    const job = await store.get(id, 'owner');
    expect(job).toMatchObject({ id, status: 'queued', model: 'a-4o', result: null, error: null, started_at: null });
    expect(job.expires_at).toBe(job.created_at + TTL);
    expect(await failure(store.get(id, 'intruder'))).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('a job whose Redis record is gone is still there; the record only says when a worker started it', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', request);
    await redis.hset(store.key(id), { status: 'in_progress', started_at: '1700000000' });
    expect(await store.get(id, 'owner')).toMatchObject({ status: 'in_progress', started_at: 1700000000 });
    await redis.del(store.key(id));
    expect(await store.get(id, 'owner')).toMatchObject({ status: 'queued', started_at: null });
  });

  it('cancels a waiting job once; a finished one cannot be cancelled', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', request);
    expect((await store.cancel(id, 'owner')).job.status).toBe('cancelled');
    expect((await store.cancel(id, 'owner')).job.status).toBe('cancelled');
    const done = store.newId('owner');
    await store.create(done, 'owner', request);
    await db.run("UPDATE gateway_batches SET status = 'completed' WHERE id = ?", [done]);
    expect(await failure(store.cancel(done, 'owner'))).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it('a row the database lost is 410 job_lost for its owner, 404 for anyone else', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', request);
    await db.run('DELETE FROM gateway_batches WHERE id = ?', [id]);
    const lost = await failure(store.get(id, 'owner'));
    expect(lost).toMatchObject({ code: 'job_lost', status: 410 });
    expect(lost.message).toContain(id);
    expect(lost.message).toContain('resubmit');
    expect(await failure(store.get(id, 'intruder'))).toMatchObject({ code: 'not_found', status: 404 });
    expect(await failure(store.cancel(id, 'owner'))).toMatchObject({ code: 'job_lost' });
  });

  it('a deleted job is 404, not lost, and its row keeps no content', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', request);
    await store.delete(id, 'owner');
    expect(await failure(store.get(id, 'owner'))).toMatchObject({ code: 'not_found', status: 404 });
    expect(await db.all('SELECT body, output FROM gateway_batch_lines WHERE batch_id = ?', [id])).toEqual([
      { body: '', output: null },
    ]);
    expect(await redis.exists(store.key(id))).toBe(0);
  });

  it('an id older than the TTL whose record is gone may simply have expired: 404', async () => {
    const id = ids.mint('owner', Date.now() - (TTL + 10) * 1000);
    const expired = await failure(store.get(id, 'owner'));
    expect(expired).toMatchObject({ code: 'not_found', status: 404 });
    expect(expired.message).toContain(`${TTL} seconds`);
  });

  it('expires a job ASYNC_JOB_TTL after its last change: then 404; the purge removes it and names the unfinished ones (whose work the runner stops)', async () => {
    const rows = new JobRows(db);
    const brief = new AsyncJobStore({ rows, redis, prefix, ttlSeconds: 1, ids });
    const open = brief.newId('owner');
    const done = brief.newId('owner');
    await brief.create(open, 'owner', request);
    await brief.create(done, 'owner', request);
    await db.run("UPDATE gateway_batch_lines SET status = 'succeeded', output = '{}' WHERE batch_id = ?", [done]);
    await rows.finish(done);
    expect((await brief.get(done, 'owner')).status).toBe('completed');
    await new Promise((r) => setTimeout(r, 2_100));
    // Past expiry and not yet purged: already gone for the client.
    expect(await failure(brief.get(open, 'owner'))).toMatchObject({ code: 'not_found', status: 404 });
    const unfinished = await rows.purgeExpired();
    expect(unfinished).toContain(open);
    expect(unfinished).not.toContain(done);
    expect(await db.all('SELECT id FROM gateway_batches WHERE id IN (?, ?)', [open, done])).toEqual([]);
    expect(await db.all('SELECT batch_id FROM gateway_batch_lines WHERE batch_id IN (?, ?)', [open, done])).toEqual([]);
  });

  it('ids it never minted are 404', async () => {
    for (const id of ['cjob_nope', `cjob_${'ab'.repeat(24)}`, new AsyncJobIds('other').mint('owner')]) {
      expect(await failure(store.get(id, 'owner'))).toMatchObject({ code: 'not_found', status: 404 });
    }
  });
});
