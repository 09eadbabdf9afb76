import { afterAll, describe, expect, it } from 'vitest';
import { CounterBuffer } from '../../src/redis/counter-buffer.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

const redis = testRedis();
const prefix = uniquePrefix('counters');

afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('CounterBuffer (real Redis)', () => {
  it('adds up increments in memory and writes them in one flush', async () => {
    const buffer = new CounterBuffer({ redis, flushMs: 10_000 });
    const key = `${prefix}:h`;
    for (let i = 0; i < 5; i++) buffer.add(key, 'n');
    buffer.add(key, 'tokens', 40);
    buffer.addFloat(key, 'sum', 0.5);
    buffer.addFloat(key, 'sum', 0.5);
    expect(await redis.hgetall(key)).toEqual({});
    await buffer.flush();
    expect(await redis.hgetall(key)).toEqual({ n: '5', tokens: '40', sum: '1' });
    // A float field stays a float field even when its buffered sum is whole.
    buffer.addFloat(key, 'sum', 0.25);
    await buffer.close();
    expect(await redis.hget(key, 'sum')).toBe('1.25');
  });

  it('flushes by itself after flushMs', async () => {
    const buffer = new CounterBuffer({ redis, flushMs: 50 });
    const key = `${prefix}:timed`;
    buffer.add(key, 'n', 3);
    await expect.poll(async () => redis.hget(key, 'n'), { timeout: 2_000 }).toBe('3');
  });
});
