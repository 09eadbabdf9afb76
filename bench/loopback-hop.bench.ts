import { fork } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { testRedis } from '../test/support/redis.ts';
import { percentiles } from './support/load.ts';

/**
 * The floor under the latency of one request at one connection: what a single
 * one-way hop between two processes costs on this machine, with no gateway
 * code in it. A miss through the queue crosses twelve such hops in sequence,
 * the direct call two.
 *
 * Measures round trips of one byte between this process and a Node echo peer
 * over loopback TCP, and of `PING` to Redis through ioredis, back to back and
 * with an idle gap before each (as every process in a one-connection chain
 * sits idle while the others work).
 *
 * BENCH_SMOKE=1: fewer round trips.
 */
if (process.argv[2] === 'echo') {
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', (data) => socket.write(data));
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.(typeof address === 'object' && address ? address.port : 0);
  });
} else {
  const smoke = process.env.BENCH_SMOKE === '1';
  const rounds = smoke ? 300 : 2_000;
  const gapsMs = [0, 1, 4];

  async function measure(gapMs: number, roundTrip: () => Promise<void>): Promise<number[]> {
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
      if (gapMs > 0) await sleep(gapMs);
      const started = performance.now();
      await roundTrip();
      samples.push((performance.now() - started) * 1000);
    }
    return samples;
  }

  const peer = fork(import.meta.filename, ['echo'], { stdio: 'ignore' });
  const port = await new Promise<number>((resolve) => peer.once('message', (m) => resolve(Number(m))));
  const socket: Socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise((resolve) => socket.once('connect', resolve));
  const echo = () =>
    new Promise<void>((resolve) => {
      socket.once('data', () => resolve());
      socket.write('x');
    });
  const redis = testRedis();
  const ping = async () => {
    await redis.ping();
  };

  const rows: string[] = [];
  try {
    for (const [name, roundTrip] of [
      ['Node ↔ Node, TCP', echo],
      ['Node → Redis PING (ioredis)', ping],
    ] as const) {
      await measure(0, roundTrip); // warm-up
      for (const gapMs of gapsMs) {
        const p = percentiles(await measure(gapMs, roundTrip));
        rows.push(
          `| ${name} | ${gapMs} | ${p.p50.toFixed(0)} | ${p.p90.toFixed(0)} | ${p.p99.toFixed(0)} | ${(p.p50 / 2).toFixed(0)} |`,
        );
      }
    }
  } finally {
    socket.destroy();
    peer.kill();
    redis.disconnect();
  }

  console.log(`${rounds} round trips per row, µs\n`);
  console.log('| round trip | idle gap before each, ms | p50 | p90 | p99 | one-way hop, p50 / 2 |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}
