import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../../src/errors/catalog.ts';
import { entryFields, type StreamEntry } from '../../src/streams/protocol.ts';
import { ReplyWriter } from '../../src/streams/reply-writer.ts';
import { compareIds, StreamAbortedError, StreamDeadlineError, StreamReader } from '../../src/streams/stream-reader.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

// Real Redis. The reader's blocking connection goes through a loopback proxy so a test can cut it.
const prefix = uniquePrefix('reader');
const redis = testRedis();
const proxy = await startTcpProxy(Number(process.env.REDIS_PORT ?? 6379), process.env.REDIS_HOST ?? '127.0.0.1');
const connections: Redis[] = [];
const connect = () => {
  const conn = new Redis({
    host: '127.0.0.1',
    port: proxy.port,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => 50,
  });
  connections.push(conn);
  return conn;
};
// A long block slice: a read that is not woken when it starts would wait this long and fail its deadline.
const reader = new StreamReader({ connect, waker: redis, blockSliceMs: 30_000 });

afterAll(async () => {
  await reader.close();
  for (const conn of connections) conn.disconnect();
  await proxy.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

let n = 0;
const key = () => `${prefix}:s${++n}`;
const inSeconds = (s: number) => () => Date.now() + s * 1_000;
const chunk = (k: string, d: string) => redis.xadd(k, '*', ...entryFields('chunk', d));
const end = (k: string) => redis.xadd(k, '*', ...entryFields('end', ''));

async function collect(entries: AsyncGenerator<StreamEntry>): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of entries) out.push(`${entry.t}:${entry.d}`);
  return out;
}

/** A read that starts while `r`'s XREAD blocks on another stream gets its entries within a second (the block slice is 30 s). */
async function expectPromptWhileBlocked(r: StreamReader): Promise<void> {
  const idle = key();
  const waiting = collect(r.read(idle, inSeconds(10)));
  await new Promise((resolve) => setTimeout(resolve, 100)); // the XREAD now blocks on `idle` alone
  const k = key();
  await chunk(k, 'x');
  await end(k);
  const started = performance.now();
  expect(await collect(r.read(k, inSeconds(2)))).toEqual(['chunk:x', 'end:']);
  expect(performance.now() - started).toBeLessThan(1_000);
  await end(idle);
  expect(await waiting).toEqual(['end:']);
}

describe('StreamReader (one blocking connection for every reply stream)', () => {
  it('yields a stream from its start to the terminal entry, written before and after the read began', async () => {
    const k = key();
    await chunk(k, 'a');
    const read = collect(reader.read(k, inSeconds(5)));
    await new Promise((r) => setTimeout(r, 50));
    await chunk(k, 'b');
    await end(k);
    await chunk(k, 'after-the-end');
    expect(await read).toEqual(['chunk:a', 'chunk:b', 'end:']);
  });

  it('serves many concurrent reads over one connection, each its own entries in order', async () => {
    const before = connections.length;
    const keys = Array.from({ length: 40 }, key);
    const reads = keys.map((k) => collect(reader.read(k, inSeconds(5))));
    for (let i = 0; i < 3; i++) await Promise.all(keys.map((k, j) => chunk(k, `${j}.${i}`)));
    await Promise.all(keys.map(end));
    const results = await Promise.all(reads);
    results.forEach((r, j) => expect(r).toEqual([`chunk:${j}.0`, `chunk:${j}.1`, `chunk:${j}.2`, 'end:']));
    expect(connections.length - before).toBe(0);
    expect(reader.size).toBe(0);
  });

  it("a writer's chunks of one turn travel as one entry; every reader, early or late, gets them one by one", async () => {
    const k = key();
    const writer = new ReplyWriter({ redis, key: k, ttlSeconds: 60, timing: () => ({ q: 7, u: 9 }) });
    const early = reader.read(k, inSeconds(5));
    // A JSON text may carry a newline as whitespace (an upstream's event passed through): it must not split the chunk.
    for (const json of ['{"n":1}', '{"n":\n2}', '{"n":3}']) writer.chunk(json);
    await writer.flush();
    writer.chunk('{"n":4}');
    writer.end({ prompt_tokens: 1, completion_tokens: 4, total_tokens: 5 });
    await writer.flush();
    expect(await redis.xlen(k)).toBe(3);
    const first = (await early.next()).value as StreamEntry;
    expect(first).toMatchObject({ t: 'chunk', d: '{"n":1}', q: 7, u: 9 });
    const rest = await collect(early);
    const late = await collect(reader.read(k, inSeconds(5)));
    const expected = ['chunk:{"n":1}', 'chunk:{"n": 2}', 'chunk:{"n":3}', 'chunk:{"n":4}', 'end:{}'];
    expect(rest).toEqual(expected.slice(1));
    expect(late).toEqual(expected);
    expect(rest.slice(0, 3).map((entry) => JSON.parse(entry.slice('chunk:'.length)) as unknown)).toEqual([
      { n: 2 },
      { n: 3 },
      { n: 4 },
    ]);
  });

  it('a read that starts while the shared XREAD is blocked is woken and gets its entries at once', async () => {
    await expectPromptWhileBlocked(reader);
  });

  it('a second reader of the same stream, joining late, still gets it from the start', async () => {
    const k = key();
    const first = reader.read(k, inSeconds(5));
    await chunk(k, 'one');
    expect((await first.next()).value?.d).toBe('one');
    await chunk(k, 'two');
    const second = collect(reader.read(k, inSeconds(5)));
    await new Promise((r) => setTimeout(r, 50));
    await end(k);
    const rest: string[] = [];
    for await (const entry of first) rest.push(`${entry.t}:${entry.d}`);
    expect(rest).toEqual(['chunk:two', 'end:']);
    expect(await second).toEqual(['chunk:one', 'chunk:two', 'end:']);
  });

  it('ends a read at its deadline or abort without disturbing the others', async () => {
    const slow = key();
    const other = key();
    const otherRead = collect(reader.read(other, inSeconds(5)));
    const started = Date.now();
    await expect(collect(reader.read(slow, () => started + 300))).rejects.toBeInstanceOf(StreamDeadlineError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const abort = new AbortController();
    const aborted = collect(reader.read(slow, inSeconds(5), abort.signal));
    setTimeout(() => abort.abort(), 50);
    await expect(aborted).rejects.toBeInstanceOf(StreamAbortedError);
    await chunk(other, 'still here');
    await end(other);
    expect(await otherRead).toEqual(['chunk:still here', 'end:']);
  });

  it('stops watching a stream whose consumer stopped early', async () => {
    const k = key();
    await chunk(k, 'a');
    for await (const entry of reader.read(k, inSeconds(5))) {
      expect(entry.d).toBe('a');
      break;
    }
    expect(reader.size).toBe(0);
  });

  it('fails reads in flight with 503 when the connection drops, and reads again after it comes back', async () => {
    const k = key();
    const read = collect(reader.read(k, inSeconds(10)));
    await new Promise((r) => setTimeout(r, 100));
    await proxy.cut();
    const failure = await read.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(ServiceUnavailableError);
    await proxy.restore();
    await chunk(k, 'later');
    await end(k);
    expect(await collect(reader.read(k, inSeconds(5)))).toEqual(['chunk:later', 'end:']);
  });
});

describe('StreamReader on a server that refuses CLIENT (ACL)', () => {
  it('falls back to short blocks: a read started while another blocks still gets its entries at once', async () => {
    const user = `${prefix.replaceAll(':', '-')}-noclient`;
    await redis.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all', '-client');
    const limited = new StreamReader({
      connect: () => {
        const conn = new Redis({
          host: process.env.REDIS_HOST ?? '127.0.0.1',
          port: Number(process.env.REDIS_PORT ?? 6379),
          username: user,
          password: 'pw',
          maxRetriesPerRequest: 0,
        });
        connections.push(conn);
        return conn;
      },
      blockSliceMs: 30_000,
    });
    try {
      await expectPromptWhileBlocked(limited);
    } finally {
      await limited.close();
      await redis.call('ACL', 'DELUSER', user);
    }
  });
});

describe('compareIds', () => {
  it('orders stream ids by time, then sequence, numerically', () => {
    expect(compareIds('9-0', '10-0')).toBe(-1);
    expect(compareIds('10-2', '10-10')).toBe(-1);
    expect(compareIds('10-1', '10-1')).toBe(0);
    expect(compareIds('1700000000000-5', '0-0')).toBe(1);
  });
});
