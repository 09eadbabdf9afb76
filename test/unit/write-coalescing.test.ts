import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.ts';
import { createRedis, waitForReady } from '../../src/redis/connections.ts';
import { sendHeldWrites } from '../../src/redis/write-coalescing.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

// Real Redis behind a loopback proxy, so the test can also break the connection and watch the
// coalescing come back on the new socket.
const prefix = uniquePrefix('coalesce');
const cleanup = testRedis();
const proxy = await startTcpProxy(Number(process.env.REDIS_PORT ?? 6379), process.env.REDIS_HOST ?? '127.0.0.1');
const settings = loadSettings({ REDIS_HOST: '127.0.0.1', REDIS_PORT: String(proxy.port), REDIS_KEY_PREFIX: prefix });
const redis = createRedis(settings, 'command', 'coalesce-test');
redis.on('error', () => {});

afterAll(async () => {
  redis.disconnect();
  await proxy.close();
  await deletePrefix(cleanup, prefix);
  cleanup.disconnect();
});

const socket = () => (redis as unknown as { stream: Duplex }).stream;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

async function roundTrip(tag: string): Promise<void> {
  // Commands issued in one turn: the socket stays corked until the turn ends, then all leave at once.
  const replies = Promise.all([
    redis.set(`${prefix}:${tag}`, 'v'),
    redis.incr(`${prefix}:${tag}:n`),
    redis.get(`${prefix}:${tag}`),
  ]);
  expect(socket().writableCorked).toBe(1);
  expect(socket().writableLength).toBeGreaterThan(0);
  await nextTurn();
  expect(socket().writableCorked).toBe(0);
  expect(await replies).toEqual(['OK', 1, 'v']);
}

describe('coalesced Redis writes (command connection)', () => {
  it('holds a turn’s commands in the socket and sends them together, replies in order', async () => {
    expect(await waitForReady(redis, 2_000)).toBe(true);
    await roundTrip('first');
  });

  it('a lone command is not held past its turn', async () => {
    const started = performance.now();
    expect(await redis.ping()).toBe('PONG');
    expect(performance.now() - started).toBeLessThan(50);
    expect(socket().writableCorked).toBe(0);
  });

  it('sendHeldWrites sends what the turn holds at once; later commands of the turn are held again', async () => {
    const first = redis.set(`${prefix}:early`, 'e');
    expect(socket().writableCorked).toBe(1);
    sendHeldWrites(redis);
    expect(socket().writableCorked).toBe(0);
    expect(socket().writableLength).toBe(0);
    const later = redis.get(`${prefix}:early`);
    expect(socket().writableCorked).toBe(1);
    // The first cork's end-of-turn release must not be what releases the second; the second's does.
    await nextTurn();
    expect(socket().writableCorked).toBe(0);
    expect(await Promise.all([first, later])).toEqual(['OK', 'e']);
    sendHeldWrites(redis); // nothing held: no effect
    expect(socket().writableCorked).toBe(0);
  });

  it('coalesces again on the new socket after a reconnect', async () => {
    const before = socket();
    await proxy.cut();
    await proxy.restore();
    await expect.poll(() => redis.status === 'ready' && socket() !== before, { timeout: 5_000 }).toBe(true);
    await roundTrip('after-reconnect');
  });
});
