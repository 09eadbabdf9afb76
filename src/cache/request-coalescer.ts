import type { Redis } from 'ioredis';
import type { ProviderConfig } from '../config/gateway-config.ts';
import { GatewayError, InternalError } from '../errors/catalog.ts';
import { responseStreamKey } from '../streams/protocol.ts';
import { ReplyWriter } from '../streams/reply-writer.ts';
import type { CacheKeys } from './redis-keys.ts';

/** Options of {@link RequestCoalescer}. */
export interface RequestCoalescerOptions {
  /** Command connection. */
  redis: Redis;
  keys: CacheKeys;
  /** Redis key prefix (reply stream names). */
  prefix: string;
  /** Extra life of a claim beyond the provider's deadlines, as the dispatcher allows. Default 1000 ms. */
  graceMs?: number;
}

/** The result of {@link RequestCoalescer.joinOrLead}. */
export type CoalesceRole =
  /** Nobody is answering this request yet: dispatch it with this job id. */
  | { role: 'leader'; jobId: string }
  /** An identical request is in flight: read its reply stream. */
  | { role: 'follower'; jobId: string };

// KEYS[1] inflight hash; ARGV: job id, ttl ms. Returns the leader's job id when there is one (and counts a follower), else claims.
const JOIN_OR_LEAD = `
local leader = redis.call('HGET', KEYS[1], 'j')
if leader then
  redis.call('HINCRBY', KEYS[1], 'f', 1)
  return leader
end
redis.call('HSET', KEYS[1], 'j', ARGV[1], 'f', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return false`;

// KEYS[1] inflight hash; ARGV[1] job id. Deletes the claim if it is still this job's; returns its follower count.
const RELEASE = `
if redis.call('HGET', KEYS[1], 'j') == ARGV[1] then
  local followers = tonumber(redis.call('HGET', KEYS[1], 'f') or '0')
  redis.call('DEL', KEYS[1])
  return followers
end
return -1`;

/**
 * Coalesces identical concurrent misses, across every API replica: the first
 * request claims a Redis hash (atomically, in a script) naming its job; the
 * ones that find the claim read that job's reply stream from the start
 * instead of enqueuing their own (`ChatDispatcher.follow`), so the provider is called once. The leader
 * releases the claim once the reply is stored (or failed). When the leader's
 * client goes away, the job is cancelled only if nobody follows it.
 */
export class RequestCoalescer {
  private readonly graceMs: number;

  private readonly options: RequestCoalescerOptions;

  constructor(options: RequestCoalescerOptions) {
    this.options = options;
    this.graceMs = options.graceMs ?? 1_000;
  }

  async joinOrLead(key: string, provider: ProviderConfig, jobId: string): Promise<CoalesceRole> {
    // The claim outlives the longest wait for a first entry; a slow stream beyond that just stops coalescing.
    const ttlMs = provider.queue_timeout_ms + provider.timeout_ms + this.graceMs;
    const leader = (await this.options.redis.eval(JOIN_OR_LEAD, 1, this.options.keys.inflight(key), jobId, ttlMs)) as string | null;
    return leader ? { role: 'follower', jobId: leader } : { role: 'leader', jobId };
  }

  /** Gives up the claim of `jobId`; resolves to the number of followers it had (-1 when it was no longer the claim). */
  async release(key: string, jobId: string): Promise<number> {
    return Number(await this.options.redis.eval(RELEASE, 1, this.options.keys.inflight(key), jobId));
  }

  /**
   * The leader could not even enqueue its job: its followers would wait for a
   * stream nobody writes, so they get the leader's error on it instead.
   */
  async fail(jobId: string, err: unknown, ttlSeconds = 60): Promise<void> {
    const error = err instanceof GatewayError ? err : new InternalError('The request could not be enqueued.');
    const writer = new ReplyWriter({ redis: this.options.redis, key: responseStreamKey(this.options.prefix, jobId), ttlSeconds });
    writer.error(error);
    await writer.flush();
  }

}
