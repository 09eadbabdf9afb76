import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnGatewayProcess, waitFor, writeConfig, type GatewayProcess } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

/**
 * A worker told to stop (SIGTERM) while its Redis is down exits within
 * SHUTDOWN_GRACE_MS, whether Redis comes back during the grace or never does.
 * The worker is idle: what must not hold it is its own connections (BullMQ's
 * close, offline queues, reconnect loops).
 */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING worker-shutdown: no redis-server binary on PATH ***\n');

const GRACE_MS = 3_000;
/** Process exit, timer slack and a loaded 2-core machine. */
const MARGIN_MS = 1_500;

let redisServer: RedisServer;
/** Whether the test stopped Redis and has not started it again. */
let redisStopped = false;
let configPath: string;
let worker: GatewayProcess | undefined;

async function startWorker(graceMs = GRACE_MS): Promise<GatewayProcess> {
  const proc = spawnGatewayProcess('workers/provider-worker.ts', ['provider_a'], {
    LOG_LEVEL: 'info',
    REDIS_PORT: String(redisServer.port),
    REDIS_KEY_PREFIX: 'gwshutdown',
    CONFIG_PATH: configPath,
    PROVIDER_A_API_KEY: 'up',
    SHUTDOWN_GRACE_MS: String(graceMs),
    WORKER_HEARTBEAT_MS: '200',
  });
  await waitFor(() => proc.output().includes('worker started'), 20_000, `the worker to start:\n${proc.output()}`);
  // Let BullMQ's blocking fetch reach Redis, as in a worker that has been idle for a while.
  await new Promise((r) => setTimeout(r, 500));
  return proc;
}

async function stopRedis(): Promise<void> {
  await redisServer.stop();
  redisStopped = true;
  // Let the worker's connections notice, as in a real outage.
  await new Promise((r) => setTimeout(r, 500));
}

/** Sends SIGTERM; resolves with how long the process took to exit (Infinity: still alive after `limitMs`) and its exit code. */
function terminate(proc: GatewayProcess, limitMs: number): Promise<{ ms: number; code: number | null }> {
  const t0 = Date.now();
  const timeout = new Promise<'alive'>((r) => setTimeout(() => r('alive'), limitMs).unref());
  proc.child.kill('SIGTERM');
  return Promise.race([proc.exited, timeout]).then((outcome) =>
    outcome === 'alive' ? { ms: Infinity, code: null } : { ms: Date.now() - t0, code: outcome },
  );
}

describe.skipIf(!hasRedisServer)('worker SIGTERM while Redis is down', () => {
  beforeAll(async () => {
    redisServer = await startRedisServer();
    configPath = writeConfig({
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: 'http://127.0.0.1:9/v1', models: ['a-4o'] },
      ],
    });
  }, 30_000);

  afterEach(async () => {
    await worker?.kill('SIGKILL');
    worker = undefined;
    if (redisStopped) await redisServer.start();
    redisStopped = false;
  });

  afterAll(async () => {
    await redisServer?.stop();
  });

  it('exits within the grace when Redis comes back during it', async () => {
    worker = await startWorker();
    await stopRedis();
    const exit = terminate(worker, GRACE_MS * 4);
    await new Promise((r) => setTimeout(r, 1_000));
    await redisServer.start();
    redisStopped = false;
    const { ms } = await exit;
    expect(ms, `still alive ${GRACE_MS * 4} ms after SIGTERM:\n${worker.output()}`).toBeLessThan(GRACE_MS + MARGIN_MS);
  });

  it('exits as soon as Redis is back, not at the end of a long grace', async () => {
    const longGraceMs = 15_000;
    worker = await startWorker(longGraceMs);
    await stopRedis();
    const exit = terminate(worker, longGraceMs * 2);
    await new Promise((r) => setTimeout(r, 1_500));
    await redisServer.start();
    redisStopped = false;
    const { ms, code } = await exit;
    console.log(
      `[worker-shutdown] Redis back 1.5 s after SIGTERM: the worker exited ${ms} ms after SIGTERM (code ${code})`,
    );
    // Nothing was in flight: once Redis answers, the close has nothing left to wait for. Generous for a loaded machine, far below the grace.
    expect(ms, worker.output()).toBeLessThan(longGraceMs / 2);
    expect(code, worker.output()).toBe(0);
  });

  it('exits within the grace when Redis stays down, with exit code 1 and a log of what it gave up on', async () => {
    worker = await startWorker();
    await stopRedis();
    const { ms, code } = await terminate(worker, GRACE_MS * 4);
    expect(ms, `still alive ${GRACE_MS * 4} ms after SIGTERM:\n${worker.output()}`).toBeLessThan(GRACE_MS + MARGIN_MS);
    expect(code).toBe(1);
    const gaveUp = worker
      .output()
      .split('\n')
      .find((line) => line.includes('"unfinished"'));
    expect(gaveUp, worker.output()).toBeDefined();
    expect(JSON.parse(gaveUp ?? '{}').unfinished.length).toBeGreaterThan(0);
  });

  it('an idle worker with Redis up still stops cleanly and at once (exit code 0)', async () => {
    worker = await startWorker();
    const { ms, code } = await terminate(worker, GRACE_MS * 4);
    expect(code, worker.output()).toBe(0);
    expect(ms).toBeLessThan(GRACE_MS);
  });
});
