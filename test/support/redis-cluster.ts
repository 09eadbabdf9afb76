import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { freePort, waitFor } from './processes.ts';
import { redisAnswers } from './redis-server.ts';

/** A Redis Cluster of masters on loopback, made for one test file. */
export interface RedisCluster {
  /** Client ports of the masters. */
  ports: number[];
  /** `127.0.0.1:port,...`: the value of REDIS_CLUSTER_NODES. */
  nodes: string;
  /** A cluster client for the test's own checks. */
  client(): Cluster;
  /** A plain connection to each master (SCAN, INFO commandstats per shard). */
  masters(): Redis[];
  stop(): Promise<void>;
}

/**
 * Starts `masters` redis-servers with `--cluster-enabled yes` (client and bus
 * ports both free ones, nothing persisted) and joins them with
 * `redis-cli --cluster create --cluster-replicas 0`, then waits until every
 * node reports `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-redis-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) {
    const port = await freePort();
    const busPort = await freePort();
    ports.push(port);
    const nodeDir = mkdtempSync(join(dir, 'node-'));
    children.push(
      spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--cluster-port',
          String(busPort),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          nodeDir,
        ],
        { stdio: 'ignore' },
      ),
    );
  }
  const plain = (port: number) =>
    new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null });
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGKILL');
        await once(child, 'exit');
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await waitFor(() => redisAnswers(port), 10_000, `redis-server on ${port}`);
    await promisify(execFile)('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await waitFor(
        async () => {
          const conn = plain(port);
          try {
            return String(await conn.cluster('INFO')).includes('cluster_state:ok');
          } finally {
            conn.disconnect();
          }
        },
        15_000,
        `cluster_state:ok on ${port}`,
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const nodes = ports.map((p) => `127.0.0.1:${p}`).join(',');
  return {
    ports,
    nodes,
    client: () =>
      new Cluster(
        ports.map((port) => ({ host: '127.0.0.1', port })),
        { redisOptions: { maxRetriesPerRequest: 1 } },
      ),
    masters: () => ports.map(plain),
    stop,
  };
}
