import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { entryFields, responseStreamKey } from '../../src/streams/protocol.ts';
import { replyReadersKey, ReplyRelease } from '../../src/streams/reply-release.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

const prefix = uniquePrefix('reply-release');
const redis = testRedis();
const release = new ReplyRelease({ redis, ttlMs: 60_000 });

afterEach(() => deletePrefix(redis, prefix));
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

async function stream(id: string, ...types: ('chunk' | 'result' | 'end')[]): Promise<string> {
  const key = responseStreamKey(prefix, id);
  for (const t of types) await redis.xadd(key, '*', ...entryFields(t, '{}'));
  await redis.expire(key, 300);
  return key;
}

describe('ReplyRelease', () => {
  it('deletes a stream read alone once its reader had the terminal entry, and never before', async () => {
    const key = await stream('alone', 'chunk');
    await release.done(key, 0, false);
    expect(await redis.exists(key)).toBe(1);
    await redis.xadd(key, '*', ...entryFields('end', '{}'));
    await release.done(key, 0, true);
    expect(await redis.exists(key)).toBe(0);
  });

  it('keeps a coalesced stream until the leader and every follower are done, in whatever order', async () => {
    for (const order of [
      ['leader', 'f', 'f'],
      ['f', 'leader', 'f'],
      ['f', 'f', 'leader'],
    ]) {
      const key = await stream(`co-${order.join('')}`, 'result');
      for (const [i, who] of order.entries()) {
        expect(await redis.exists(key)).toBe(1);
        await release.done(key, who === 'leader' ? 2 : -1, true);
        expect(await redis.exists(key), `${order.join(',')} after ${i + 1}`).toBe(i === order.length - 1 ? 0 : 1);
      }
      expect(await redis.exists(replyReadersKey(key))).toBe(0);
    }
  });

  it('leaves a stream whose last entry is not terminal to its TTL, and one whose readers are unknown', async () => {
    const open = await stream('open', 'chunk');
    await release.done(open, 1, false);
    await release.done(open, -1, false);
    expect(await redis.exists(open)).toBe(1);
    expect(await redis.exists(replyReadersKey(open))).toBe(0);
    const unknown = await stream('unknown', 'result');
    await release.done(unknown, undefined, true);
    expect(await redis.exists(unknown)).toBe(1);
    const waiting = await stream('waiting', 'result');
    await release.done(waiting, -1, true);
    expect(await redis.pttl(replyReadersKey(waiting))).toBeGreaterThan(50_000);
  });
});
