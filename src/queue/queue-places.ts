import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors/catalog.ts';

/**
 * Places in a provider's queue: how `max_queue_depth` is enforced. A job may
 * be added to a queue only with a place, taken by one script that counts the
 * places held and takes one only below the limit, so simultaneous requests
 * (in any number of API processes) can never overfill a queue, unlike a depth
 * sampled before the add. A place is held in a sorted set per provider,
 * scored by when it lapses on Redis's clock: when the job's longest wait in
 * the queue is over, since after that the job can no longer start. It is
 * given back when a worker starts the job, or when the API takes the job off
 * the queue; one that is never given back (a process died, Redis lost the
 * command) lapses by itself, so the count cannot drift.
 */

// KEYS[1] places of one provider; ARGV: job id, limit, longest wait ms. Returns -1 when a place was taken, else the places held.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[2]) then return held end
local wait = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now + wait, ARGV[1])
if redis.call('PTTL', KEYS[1]) < wait then redis.call('PEXPIRE', KEYS[1], wait) end
return -1`;

/** Sorted set of the places held in `provider`'s queue. */
export function placesKey(prefix: string, provider: string): string {
  return `${prefix}:queue-places:${provider}`;
}

/** A place in a provider's queue, held for one job: the proof {@link ChatQueues.enqueue} asks for. */
export interface QueuePlace {
  readonly provider: string;
  readonly jobId: string;
}

/** Options of {@link QueuePlaces}. */
export interface QueuePlacesOptions {
  /** Command connection. */
  redis: Redis;
  /** Redis key prefix. */
  prefix: string;
}

interface ScriptRunner {
  gatewayTakeQueuePlace(key: string, jobId: string, limit: string, waitMs: string): Promise<number>;
}

/** Takes and gives back places in the providers' queues (both tiers use it). */
export class QueuePlaces {
  private readonly options: QueuePlacesOptions;

  constructor(options: QueuePlacesOptions) {
    this.options = options;
    // defineCommand sends EVALSHA and falls back to EVAL once per connection.
    if (!('gatewayTakeQueuePlace' in options.redis)) {
      options.redis.defineCommand('gatewayTakeQueuePlace', { numberOfKeys: 1, lua: TAKE });
    }
  }

  /**
   * Takes a place for `jobId` in `provider`'s queue, held at most `waitMs`;
   * 503 `service_unavailable` with `Retry-After: 1` when `limit` places are
   * already held. The script goes out with the other commands of the same
   * event-loop turn (write coalescing), so it can share their round trip.
   */
  async take(provider: string, jobId: string, limit: number, waitMs: number): Promise<QueuePlace> {
    const { redis, prefix } = this.options;
    const runner = redis as unknown as ScriptRunner;
    const held = Number(await runner.gatewayTakeQueuePlace(placesKey(prefix, provider), jobId, String(limit), String(waitMs)));
    if (held >= 0) {
      throw new ServiceUnavailableError(`The ${provider} queue is full (${held} waiting jobs); retry shortly.`, { headers: { 'Retry-After': '1' } });
    }
    return { provider, jobId };
  }

  /** Gives the place of `jobId` back (it started, or left the queue); a place not held is ignored. */
  async release(provider: string, jobId: string): Promise<void> {
    await this.options.redis.zrem(placesKey(this.options.prefix, provider), jobId);
  }
}
