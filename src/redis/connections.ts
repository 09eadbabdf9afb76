import { Redis, type RedisOptions } from 'ioredis';
import type { Settings } from '../config/settings.ts';
import { coalesceWrites } from './write-coalescing.ts';

/**
 * Redis connections by role. Each role has the options its use needs:
 *
 * - `command`: short commands on the request path. Fails fast when Redis is
 *   unreachable (no offline queue, one retry, a command timeout) so a client
 *   gets a 503 instead of a hang. Writes coalesced per event-loop turn.
 * - `blocking`: XREAD BLOCK on reply streams; never shared with other work.
 * - `subscriber`: pub/sub only.
 * - `bullmq`: BullMQ workers require `maxRetriesPerRequest: null`. Writes
 *   coalesced per event-loop turn.
 */
export type RedisRole = 'command' | 'blocking' | 'subscriber' | 'bullmq';

/** How long a request-path command may take before it fails, ms. */
export const COMMAND_TIMEOUT_MS = 2_000;

export function redisBaseOptions(settings: Settings): RedisOptions {
  const options: RedisOptions = {
    host: settings.REDIS_HOST,
    port: settings.REDIS_PORT,
    db: settings.REDIS_DB,
    lazyConnect: false,
    // Reconnect quickly but never faster than every 100 ms, at most every second.
    retryStrategy: (times) => Math.min(100 * times, 1_000),
  };
  if (settings.REDIS_PASSWORD) options.password = settings.REDIS_PASSWORD;
  return options;
}

export function createRedis(settings: Settings, role: RedisRole, name: string): Redis {
  const base = redisBaseOptions(settings);
  const connectionName = `${settings.REDIS_KEY_PREFIX}:${name}`;
  switch (role) {
    case 'command':
      return coalesceWrites(
        new Redis({ ...base, connectionName, enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS }),
      );
    case 'blocking':
      return new Redis({ ...base, connectionName, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    case 'subscriber':
      return new Redis({ ...base, connectionName, maxRetriesPerRequest: null });
    case 'bullmq':
      return coalesceWrites(new Redis({ ...base, connectionName, maxRetriesPerRequest: null }));
  }
}

/** Resolves when the connection is ready, or after `timeoutMs` (false). Never throws. */
export function waitForReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
