import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.ts';

/**
 * Worker liveness in Redis. Each provider has a sorted set of worker ids
 * scored by when their last heartbeat expires (Redis clock, ms). A worker
 * beats every `intervalMs` while it consumes the queue; a worker that dies
 * stops beating and drops out after `ttlMs`, one that stops cleanly removes
 * itself at once. Both scripts read Redis's `TIME`, so processes on hosts
 * with skewed clocks agree.
 */

const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + ttl, ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  redis.call('PEXPIRE', KEYS[i], ttl * 2)
end
return now
`;

const COUNT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('ZCOUNT', KEYS[i], '(' .. now, '+inf')
end
return out
`;

/** Sorted set of the live workers of `provider`. */
export function workersKey(prefix: string, provider: string): string {
  return `${prefix}:{workers}:${provider}`;
}

/** Options of {@link WorkerHeartbeat}. */
export interface WorkerHeartbeatOptions {
  redis: Redis;
  prefix: string;
  /** Unique id of this worker process. */
  workerId: string;
  /** Providers whose queues this process consumes right now (read at every beat). */
  providers: () => readonly string[];
  /** Beat period, ms (`WORKER_HEARTBEAT_MS`). */
  intervalMs: number;
  /** How long a beat counts, ms. @defaultValue 3 x intervalMs */
  ttlMs?: number;
  logger?: Logger;
}

/** The worker side: beats while the process consumes its queues. */
export class WorkerHeartbeat {
  private readonly options: WorkerHeartbeatOptions;
  private timer: NodeJS.Timeout | undefined;
  private beating = false;
  // A Redis that restarted may have lost every heartbeat: beat as soon as the connection is back, not an interval later.
  private readonly onReconnect = () => void this.beat();

  constructor(options: WorkerHeartbeatOptions) {
    this.options = options;
  }

  private get ttlMs(): number {
    return this.options.ttlMs ?? this.options.intervalMs * 3;
  }

  /** Beats now, then every interval and whenever the connection to Redis is back. */
  start(): void {
    if (this.timer) return;
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.options.intervalMs);
    this.timer.unref();
    this.options.redis.on('ready', this.onReconnect);
  }

  private async beat(): Promise<void> {
    // While Redis is down a beat can hang in the offline queue; never stack them.
    if (this.beating) return;
    const providers = this.options.providers();
    if (providers.length === 0) return;
    this.beating = true;
    try {
      const keys = providers.map((p) => workersKey(this.options.prefix, p));
      await this.options.redis.eval(BEAT, keys.length, ...keys, this.options.workerId, String(this.ttlMs));
    } catch (err) {
      this.options.logger?.debug({ err }, 'worker heartbeat failed');
    } finally {
      this.beating = false;
    }
  }

  /** Stops beating and removes this worker, so /health sees it gone at once. */
  async stop(providers: readonly string[] = this.options.providers()): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.options.redis.off('ready', this.onReconnect);
    await Promise.allSettled(
      providers.map((p) => this.options.redis.zrem(workersKey(this.options.prefix, p), this.options.workerId)),
    );
  }
}

/** The API side: how many workers are live per provider. */
export async function countLiveWorkers(
  redis: Redis,
  prefix: string,
  providers: readonly string[],
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (providers.length === 0) return counts;
  const keys = providers.map((p) => workersKey(prefix, p));
  const result = (await redis.eval(COUNT, keys.length, ...keys)) as number[];
  providers.forEach((p, i) => counts.set(p, Number(result[i] ?? 0)));
  return counts;
}
