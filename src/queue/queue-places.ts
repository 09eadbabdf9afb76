import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors/catalog.ts';

/**
 * Places in a provider's queue: how `max_queue_depth` is enforced. A job may
 * be added to a queue only with a place, taken by one script that counts the
 * places held and takes one only below the limit, so simultaneous requests
 * (in any number of API processes) can never overfill a queue, unlike a depth
 * sampled before the add. A place is held in a sorted set per provider and
 * tier, scored by when it lapses on Redis's clock: when the job's longest wait
 * in the queue is over, since after that the job can no longer start. It is
 * given back when a worker starts the job, or when the API takes the job off
 * the queue; one that is never given back (a process died, Redis lost the
 * command) lapses by itself, so the count cannot drift.
 *
 * Two tiers share the limit unequally: an interactive request counts only
 * interactive places, so it always finds room up to `max_queue_depth`;
 * background work (batch lines, asynchronous jobs) counts both and takes only
 * what interactive requests leave. Background jobs wait behind interactive
 * ones anyway (their priority), so they never delay them; they only must not
 * take the places interactive requests need.
 */

// KEYS[1] places of the tier taken from, KEYS[2] the other tier's (background: interactive; interactive: none);
// ARGV: job id, limit, longest wait ms. Returns -1 when a place was taken, else the places held.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = 0
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  held = held + redis.call('ZCARD', KEYS[i])
end
if held >= tonumber(ARGV[2]) then return held end
local wait = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now + wait, ARGV[1])
if redis.call('PTTL', KEYS[1]) < wait then redis.call('PEXPIRE', KEYS[1], wait) end
return -1`;

/** Which requests a place is for: interactive ones never count background places. */
export type PlaceTier = 'interactive' | 'background';

/** Sorted set of the places held in `provider`'s queue by one tier (the provider's hash tag keeps both tiers in one slot). */
export function placesKey(prefix: string, provider: string, tier: PlaceTier = 'interactive'): string {
  return `${prefix}:queue-places:{${provider}}${tier === 'background' ? ':background' : ''}`;
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
  gatewayTakeQueuePlace(...keysAndArgs: string[]): Promise<number>;
}

/** Takes and gives back places in the providers' queues (both tiers use it). */
export class QueuePlaces {
  private readonly options: QueuePlacesOptions;

  constructor(options: QueuePlacesOptions) {
    this.options = options;
    // defineCommand sends EVALSHA and falls back to EVAL once per connection.
    if (!('gatewayTakeQueuePlace' in options.redis)) {
      options.redis.defineCommand('gatewayTakeQueuePlace', { lua: TAKE });
    }
  }

  /**
   * Takes a place for `jobId` in `provider`'s queue, held at most `waitMs`;
   * 503 `service_unavailable` with `Retry-After: 1` when `limit` places are
   * already held (by interactive requests; for `background`, by both tiers).
   * The script goes out with the other commands of the same event-loop turn
   * (write coalescing), so it can share their round trip.
   */
  async take(
    provider: string,
    jobId: string,
    limit: number,
    waitMs: number,
    tier: PlaceTier = 'interactive',
  ): Promise<QueuePlace> {
    const { redis, prefix } = this.options;
    const runner = redis as unknown as ScriptRunner;
    const keys =
      tier === 'background'
        ? [placesKey(prefix, provider, 'background'), placesKey(prefix, provider)]
        : [placesKey(prefix, provider)];
    const held = Number(
      await runner.gatewayTakeQueuePlace(String(keys.length), ...keys, jobId, String(limit), String(waitMs)),
    );
    if (held >= 0) {
      throw new ServiceUnavailableError(`The ${provider} queue is full (${held} waiting jobs); retry shortly.`, {
        headers: { 'Retry-After': '1' },
      });
    }
    return { provider, jobId };
  }

  /** Gives the place of `jobId` back (it started, or left the queue), whichever tier holds it; a place not held is ignored. */
  async release(provider: string, jobId: string): Promise<void> {
    const { redis, prefix } = this.options;
    await Promise.all([
      redis.zrem(placesKey(prefix, provider), jobId),
      redis.zrem(placesKey(prefix, provider, 'background'), jobId),
    ]);
  }
}
