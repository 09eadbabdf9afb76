import { Cluster, Redis, type ClusterNode, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Settings } from '../config/settings.ts';
import { COMMAND_TIMEOUT_MS, redisBaseOptions, type RedisRole } from './connections.ts';
import { coalesceWrites } from './write-coalescing.ts';

/**
 * Redis Cluster connections (REDIS_CLUSTER_NODES, or REDIS_CLUSTER with
 * REDIS_URL / REDIS_HOST as the seed). A `Cluster` speaks the same commands
 * as a `Redis`, so the rest of the gateway takes it as one; what differs on a
 * cluster (which keys share a slot, SCAN per master, one blocking read per
 * slot) is decided where those commands are sent, by `redis.isCluster`.
 */

/** True when the settings name a Redis Cluster. */
export function clusterConfigured(settings: Settings): boolean {
  return settings.REDIS_CLUSTER_NODES.length > 0 || settings.REDIS_CLUSTER;
}

/** The seed nodes: REDIS_CLUSTER_NODES, else the one Redis the other settings name. */
function clusterSeeds(settings: Settings): ClusterNode[] {
  const base = redisBaseOptions(settings);
  if (settings.REDIS_CLUSTER_NODES.length === 0) return [{ host: base.host ?? 'localhost', port: base.port ?? 6379 }];
  return settings.REDIS_CLUSTER_NODES.map((node) => {
    const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(node);
    if (!match) throw new Error(`REDIS_CLUSTER_NODES: '${node}' is not host:port`);
    return { host: match[1] as string, port: Number(match[2]) };
  });
}

/** Options every node connection shares: credentials and TLS of the settings; a cluster has database 0 only. */
function nodeOptions(settings: Settings): RedisOptions {
  const {
    host: _host,
    port: _port,
    db: _db,
    retryStrategy: _retry,
    lazyConnect: _lazy,
    ...shared
  } = redisBaseOptions(settings);
  return shared;
}

/** A cluster client for `role`, with the fail-fast and BullMQ options {@link createRedis} gives a single Redis. */
export function createClusterRedis(settings: Settings, role: RedisRole, name: string): Redis {
  const connectionName = `${settings.REDIS_KEY_PREFIX}:${name}`;
  const shared = nodeOptions(settings);
  const options: ClusterOptions = {
    clusterRetryStrategy: (times) => Math.min(100 * times, 1_000),
    slotsRefreshTimeout: 2_000,
    // Node addresses come from CLUSTER SLOTS; TLS checks the certificate against the seed's name (servername), not a resolved IP.
    ...(shared.tls
      ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) }
      : {}),
    redisOptions: { ...shared, connectionName },
  };
  switch (role) {
    case 'command':
      options.enableOfflineQueue = false;
      options.redisOptions = { ...options.redisOptions, maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS };
      break;
    case 'blocking':
      throw new Error('a blocking read on a cluster needs the node of its slot: use createNodeRedis');
    case 'subscriber':
    case 'bullmq':
      options.redisOptions = { ...options.redisOptions, maxRetriesPerRequest: null };
      break;
  }
  const cluster = new Cluster(clusterSeeds(settings), options);
  // Every node connection batches one event-loop turn's commands into one write, as a single Redis does.
  if (role !== 'subscriber') cluster.on('+node', (node: Redis) => coalesceWrites(node));
  return cluster as unknown as Redis;
}

/** A plain connection to one cluster node (a blocking XREAD on the master of a slot). */
export function createNodeRedis(settings: Settings, node: { host: string; port: number }, name: string): Redis {
  return new Redis({
    ...redisBaseOptions(settings),
    host: node.host,
    port: node.port,
    db: 0,
    connectionName: `${settings.REDIS_KEY_PREFIX}:${name}`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
}
