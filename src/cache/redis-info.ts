import type { Cluster, Redis } from 'ioredis';

/** The figures of Redis INFO the cache statistics report. */
export interface RedisInfo {
  connected: boolean;
  usedMemory: number;
  /** Keys in the gateway's database. */
  keys: number;
  keyspaceHits: number;
  keyspaceMisses: number;
  evictedKeys: number;
}

const DISCONNECTED: RedisInfo = {
  connected: false,
  usedMemory: 0,
  keys: 0,
  keyspaceHits: 0,
  keyspaceMisses: 0,
  evictedKeys: 0,
};

/**
 * Parses `INFO memory`, `stats` and `keyspace`; a Redis that does not answer
 * is reported disconnected, never thrown. On a Redis Cluster the figures are
 * the sums over every master.
 */
export async function readRedisInfo(redis: Redis): Promise<RedisInfo> {
  if (!redis.isCluster) return readNodeInfo(redis);
  const nodes = await Promise.all((redis as unknown as Cluster).nodes('master').map(readNodeInfo));
  if (nodes.length === 0 || nodes.some((node) => !node.connected)) return DISCONNECTED;
  const total = (field: Exclude<keyof RedisInfo, 'connected'>) => nodes.reduce((sum, node) => sum + node[field], 0);
  return {
    connected: true,
    usedMemory: total('usedMemory'),
    keys: total('keys'),
    keyspaceHits: total('keyspaceHits'),
    keyspaceMisses: total('keyspaceMisses'),
    evictedKeys: total('evictedKeys'),
  };
}

async function readNodeInfo(redis: Redis): Promise<RedisInfo> {
  let text: string;
  try {
    const [memory, stats, keyspace] = await Promise.all([
      redis.info('memory'),
      redis.info('stats'),
      redis.info('keyspace'),
    ]);
    text = `${memory}\n${stats}\n${keyspace}`;
  } catch {
    return DISCONNECTED;
  }
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  const num = (name: string) => Number(fields.get(name) ?? 0) || 0;
  const db = (redis.options.db ?? 0) as number;
  const keyspace = fields.get(`db${db}`) ?? '';
  const keys = Number(/keys=(\d+)/.exec(keyspace)?.[1] ?? 0);
  return {
    connected: true,
    usedMemory: num('used_memory'),
    keys,
    keyspaceHits: num('keyspace_hits'),
    keyspaceMisses: num('keyspace_misses'),
    evictedKeys: num('evicted_keys'),
  };
}
