import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Redis, type RedisOptions } from 'ioredis';
import type { Settings } from '../config/settings.ts';
import { clusterConfigured, createClusterRedis } from './cluster-connections.ts';
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
    ...redisTarget(settings),
    lazyConnect: false,
    // Reconnect quickly but never faster than every 100 ms, at most every second.
    retryStrategy: (times) => Math.min(100 * times, 1_000),
  };
  const tls = redisTls(settings, options.tls !== undefined);
  delete options.tls;
  if (tls) {
    // A name for SNI and the certificate check; an IP address is checked against the certificate's IP entries instead.
    const servername = settings.REDIS_TLS_SERVERNAME ?? (isIP(options.host ?? '') ? undefined : options.host);
    options.tls = servername ? { ...tls, servername } : tls;
  }
  return settings.REDIS_SENTINELS.length > 0 ? withSentinels(options, settings) : options;
}

/**
 * The master is wherever the sentinels say (REDIS_SENTINELS,
 * REDIS_SENTINEL_NAME): ioredis asks them on every (re)connection and
 * listens for `+switch-master`, so a failover needs no restart. A command
 * sent to a master just demoted is answered READONLY: the connection is
 * remade through the sentinels and the command sent again.
 */
function withSentinels(options: RedisOptions, settings: Settings): RedisOptions {
  const { host: _host, port: _port, ...rest } = options;
  return {
    ...rest,
    sentinels: settings.REDIS_SENTINELS.map(sentinelAddress),
    name: settings.REDIS_SENTINEL_NAME,
    ...(settings.REDIS_SENTINEL_USERNAME ? { sentinelUsername: settings.REDIS_SENTINEL_USERNAME } : {}),
    ...(settings.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: settings.REDIS_SENTINEL_PASSWORD } : {}),
    failoverDetector: true,
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    sentinelRetryStrategy: (times) => Math.min(100 * times, 1_000),
  };
}

/** `host:port` (`[v6]:port`) of one sentinel; a bad entry stops the process naming it. */
function sentinelAddress(entry: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry);
  const port = Number(match?.[2]);
  if (!match?.[1] || !(port > 0 && port < 65536)) throw new Error(`REDIS_SENTINELS: '${entry}' is not host:port`);
  return { host: match[1], port };
}

/**
 * Where Redis is: `REDIS_URL` (`redis://[user[:password]@]host[:port][/db]`,
 * `rediss://` for TLS) when set, else REDIS_HOST, REDIS_PORT, REDIS_PASSWORD
 * and REDIS_DB. A bad URL stops the process with a message that never shows
 * its password.
 */
function redisTarget(settings: Settings): Pick<RedisOptions, 'host' | 'port' | 'db' | 'username' | 'password' | 'tls'> {
  if (!settings.REDIS_URL) {
    return {
      host: settings.REDIS_HOST,
      port: settings.REDIS_PORT,
      db: settings.REDIS_DB,
      ...(settings.REDIS_PASSWORD ? { password: settings.REDIS_PASSWORD } : {}),
    };
  }
  const shown = settings.REDIS_URL.replace(/\/\/[^@/]*@/, '//…@');
  let url: URL;
  try {
    url = new URL(settings.REDIS_URL);
  } catch {
    throw new Error(
      `REDIS_URL '${shown}' is not a URL (redis://[user[:password]@]host[:port][/db], rediss:// for TLS)`,
    );
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new Error(`REDIS_URL '${shown}' must start with redis:// or rediss://`);
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d+$/.test(db)) throw new Error(`REDIS_URL '${shown}': the path must be a database number`);
  const target: ReturnType<typeof redisTarget> = {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : 6379,
    db: db === '' ? 0 : Number(db),
  };
  if (url.username) target.username = decodeURIComponent(url.username);
  if (url.password) target.password = decodeURIComponent(url.password);
  if (url.protocol === 'rediss:') target.tls = {};
  return target;
}

/** TLS options from the REDIS_TLS_* files; undefined when TLS is not asked for (no rediss://, no file). */
function redisTls(settings: Settings, required: boolean): ConnectionOptions | undefined {
  const files = {
    ca: settings.REDIS_TLS_CA_FILE,
    cert: settings.REDIS_TLS_CERT_FILE,
    key: settings.REDIS_TLS_KEY_FILE,
  };
  if (!required && !files.ca && !files.cert && !files.key) return undefined;
  const tls: ConnectionOptions = { rejectUnauthorized: settings.REDIS_TLS_REJECT_UNAUTHORIZED };
  for (const [field, path] of Object.entries(files)) {
    if (!path) continue;
    try {
      tls[field as 'ca' | 'cert' | 'key'] = readFileSync(path);
    } catch (err) {
      throw new Error(
        `REDIS_TLS_${field.toUpperCase()}_FILE '${path}' cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        { cause: err },
      );
    }
  }
  return tls;
}

/** The settings of the caches' Redis: CACHE_REDIS_URL when set (reached directly, never through sentinels), else the gateway's own (the same object). */
export function cacheRedisSettings(settings: Settings): Settings {
  return settings.CACHE_REDIS_URL
    ? { ...settings, REDIS_URL: settings.CACHE_REDIS_URL, REDIS_SENTINELS: [] }
    : settings;
}

export function createRedis(settings: Settings, role: RedisRole, name: string): Redis {
  if (clusterConfigured(settings)) return createClusterRedis(settings, role, name);
  const base = redisBaseOptions(settings);
  const connectionName = `${settings.REDIS_KEY_PREFIX}:${name}`;
  switch (role) {
    case 'command':
      return coalesceWrites(
        new Redis({
          ...base,
          connectionName,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: COMMAND_TIMEOUT_MS,
        }),
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
