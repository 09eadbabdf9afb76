import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, waitFor } from './processes.ts';

/** A private `redis-server` a test may stop and start again, on a fixed port and data folder. */
export interface RedisServer {
  port: number;
  /** Its working folder (`--dir`): AOF and RDB files land here and are read again by {@link start}. */
  dir: string;
  /** SIGKILL by default: a crash, nothing flushed; SIGTERM is a clean shutdown. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  start(): Promise<void>;
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /** Persistence and memory flags. @defaultValue `--save '' --appendonly no`: nothing survives a stop */
  args?: readonly string[];
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const port = await freePort();
  // Its own working directory, so nothing it might write lands in the checkout.
  const dir = mkdtempSync(join(tmpdir(), 'gw-redis-'));
  const args = options.args ?? ['--save', '', '--appendonly', 'no'];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...args, '--dir', dir], {
      stdio: 'ignore',
    });
    await waitFor(() => redisAnswers(port), 10_000, `redis-server on ${port}`);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill(signal);
    });
  };
  await start();
  return { port, dir, start, stop };
}

/** True when a Redis on loopback `port` answers PING; false while it is not up yet. */
export async function redisAnswers(port: number): Promise<boolean> {
  const probe = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
