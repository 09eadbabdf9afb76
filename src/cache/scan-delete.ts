import type { Redis } from 'ioredis';

/**
 * Deletes every key matching `pattern` with SCAN + UNLINK in batches (never
 * KEYS, which blocks Redis), and returns how many keys were really removed.
 */
export async function scanDelete(redis: Redis, pattern: string, batch = 500): Promise<number> {
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', batch);
    cursor = next;
    if (keys.length > 0) removed += await redis.unlink(...keys);
  } while (cursor !== '0');
  return removed;
}
