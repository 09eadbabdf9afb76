import type { Cluster, Redis } from 'ioredis';

/**
 * Deletes every key matching `pattern` with SCAN + UNLINK in batches (never
 * KEYS, which blocks Redis), and returns how many keys were really removed.
 * On a Redis Cluster SCAN sees one node's keys, so every master is scanned.
 */
export async function scanDelete(redis: Redis, pattern: string, batch = 500): Promise<number> {
  const nodes = redis.isCluster ? (redis as unknown as Cluster).nodes('master') : [redis];
  let removed = 0;
  for (const node of nodes) removed += await scanDeleteOn(node, pattern, batch, redis.isCluster);
  return removed;
}

async function scanDeleteOn(redis: Redis, pattern: string, batch: number, perKey: boolean): Promise<number> {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', batch);
    cursor = next;
    if (keys.length === 0) continue;
    if (!perKey) removed += await redis.unlink(...keys);
    else {
      // A cluster node refuses a multi-key UNLINK across slots: one per key, in one pipeline.
      const pipeline = redis.pipeline();
      for (const key of keys) pipeline.unlink(key);
      for (const [err, n] of (await pipeline.exec()) ?? []) if (!err) removed += Number(n);
    }
  } while (cursor !== '0');
  return removed;
}
