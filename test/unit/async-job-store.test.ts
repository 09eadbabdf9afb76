import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/catalog.ts';
import { AsyncJobIds } from '../../src/queue/async-job-id.ts';
import { AsyncJobStore } from '../../src/queue/async-jobs.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/** Which error a missing record turns into: lost (410) only for a minted id of the asking owner within the TTL. */

const prefix = uniquePrefix('async-store');
const redis = testRedis();
const TTL = 3600;
const ids = new AsyncJobIds('store test secret');
const store = new AsyncJobStore({ redis, prefix, ttlSeconds: TTL, ids });

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

async function failure(read: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  const err = await read.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(GatewayError);
  const { code, status, message } = err as GatewayError;
  return { code, status, message };
}

describe('AsyncJobStore', () => {
  it('answers the owner from the record, and other owners 404', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', 'a-4o');
    expect((await store.get(id, 'owner')).status).toBe('queued');
    expect(await failure(store.get(id, 'intruder'))).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('a record Redis lost is 410 job_lost for its owner, 404 for anyone else', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', 'a-4o');
    await redis.del(store.key(id));
    const lost = await failure(store.get(id, 'owner'));
    expect(lost).toMatchObject({ code: 'job_lost', status: 410 });
    expect(lost.message).toContain(id);
    expect(lost.message).toContain('resubmit');
    expect(await failure(store.get(id, 'intruder'))).toMatchObject({ code: 'not_found', status: 404 });
    expect(await failure(store.cancel(id, 'owner'))).toMatchObject({ code: 'job_lost' });
  });

  it('a deleted job is 404, not lost, and its tombstone keeps no content', async () => {
    const id = store.newId('owner');
    await store.create(id, 'owner', 'a-4o');
    await store.delete(id, 'owner');
    expect(await failure(store.get(id, 'owner'))).toMatchObject({ code: 'not_found', status: 404 });
    expect(await redis.hgetall(store.key(id))).toEqual({ owner: 'owner', deleted: '1' });
    expect(await redis.ttl(store.key(id))).toBeGreaterThan(TTL - 5);
  });

  it('an id older than the TTL whose record is gone may simply have expired: 404', async () => {
    const id = ids.mint('owner', Date.now() - (TTL + 10) * 1000);
    const expired = await failure(store.get(id, 'owner'));
    expect(expired).toMatchObject({ code: 'not_found', status: 404 });
    expect(expired.message).toContain(`${TTL} seconds`);
  });

  it('ids it never minted are 404', async () => {
    for (const id of ['cjob_nope', `cjob_${'ab'.repeat(24)}`, new AsyncJobIds('other').mint('owner')]) {
      expect(await failure(store.get(id, 'owner'))).toMatchObject({ code: 'not_found', status: 404 });
    }
  });
});
