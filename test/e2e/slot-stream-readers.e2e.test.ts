import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Cluster, Redis } from 'ioredis';
import { loadSettings } from '../../src/config/settings.ts';
import { ServiceUnavailableError } from '../../src/errors/catalog.ts';
import { createNodeRedis } from '../../src/redis/cluster-connections.ts';
import { createRedis } from '../../src/redis/connections.ts';
import { keySlot } from '../../src/redis/key-slot.ts';
import { SlotStreamReaders } from '../../src/streams/slot-stream-readers.ts';
import { waitFor } from '../support/processes.ts';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.ts';

/**
 * Reply streams on a real 3-master cluster: one reader (one blocking
 * connection pair) per slot, not per stream; a read whose slot moved to
 * another master is read again there; a read with no Redis to reach is a 503.
 */

let cluster: RedisCluster;
let redis: Redis;
let readers: SlotStreamReaders;
const settings = () => loadSettings({ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_KEY_PREFIX: 'gwslots' });

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  redis = createRedis(settings(), 'command', 'test');
  redis.on('error', () => {});
  await waitFor(() => redis.status === 'ready', 10_000, 'the cluster client');
  readers = new SlotStreamReaders({
    cluster: redis,
    connectNode: (node) => createNodeRedis(settings(), node, 'test-reader'),
  });
}, 60_000);

afterAll(async () => {
  await readers?.close();
  redis?.disconnect();
  await cluster?.stop();
});

async function readAll(key: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of readers.read(key, () => Date.now() + 5_000)) out.push(`${entry.t}:${entry.d}`);
  return out;
}

describe('SlotStreamReaders', () => {
  it('reads streams of one tag through one slot reader, and another tag through a second', async () => {
    for (const key of ['gwslots:resp:{p1}a', 'gwslots:resp:{p1}b', 'gwslots:resp:{p2}a']) {
      await redis.xadd(key, '*', 't', 'chunk', 'd', `${key} 1`);
      await redis.xadd(key, '*', 't', 'end', 'd', '');
    }
    const replies = await Promise.all(['gwslots:resp:{p1}a', 'gwslots:resp:{p1}b', 'gwslots:resp:{p2}a'].map(readAll));
    expect(replies[0]).toEqual(['chunk:gwslots:resp:{p1}a 1', 'end:']);
    expect(replies[2]).toEqual(['chunk:gwslots:resp:{p2}a 1', 'end:']);
    expect(readers.slots).toBe(2);
  });

  it('reads again on the new master when a slot moves, and fails with 503 when the nodes are gone', async () => {
    const key = 'gwslots:resp:{p1}moved';
    const slot = keySlot(key);
    const nodes = String(await (redis as unknown as Cluster).nodes('master')[0]!.cluster('NODES'))
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .map(([id, address]) => ({ id: id as string, port: Number(/:(\d+)@/.exec(address as string)?.[1]) }));
    const owner = nodes.find((n) => n.port === Number((redis as unknown as Cluster).slots[slot]![0]!.split(':')[1]))!;
    const target = nodes.find((n) => n !== owner)!;
    const masters = cluster.masters();
    const on = (port: number) => masters[cluster.ports.indexOf(port)]!;
    try {
      await on(target.port).cluster('SETSLOT', slot, 'IMPORTING', owner.id);
      await on(owner.port).cluster('SETSLOT', slot, 'MIGRATING', target.id);
      const keys = (await on(owner.port).cluster('GETKEYSINSLOT', slot, 100)) as string[];
      if (keys.length > 0) await on(owner.port).migrate('127.0.0.1', target.port, '', 0, 5_000, 'KEYS', ...keys);
      for (const master of masters) await master.cluster('SETSLOT', slot, 'NODE', target.id);
    } finally {
      for (const master of masters) master.disconnect();
    }
    // The command connection follows the MOVED reply; the slot reader still talks to the old master, which answers MOVED too.
    await redis.xadd(key, '*', 't', 'result', 'd', 'after the move');
    expect(await readAll(key)).toEqual(['result:after the move']);
    expect(readers.slots).toBe(2);
    // Any other failure is the caller's 503: the cluster's nodes stopped.
    await cluster.stop();
    await expect(readAll('gwslots:resp:{p2}gone')).rejects.toBeInstanceOf(ServiceUnavailableError);
  });
});
