import type { Redis } from 'ioredis';
import type { ProviderConfig } from '../config/gateway-config.ts';
import { GatewayError, InternalError } from '../errors/catalog.ts';
import { responseStreamKey } from '../streams/protocol.ts';
import {
  HAS_LIVE_READER_LUA,
  jobReadersKey,
  readerLivenessKey,
  type ReaderIdentity,
} from '../streams/reader-liveness.ts';
import { ReplyWriter } from '../streams/reply-writer.ts';
import type { CacheKeys } from './redis-keys.ts';

/** Options of {@link RequestCoalescer}. */
export interface RequestCoalescerOptions {
  /** Command connection. */
  redis: Redis;
  keys: CacheKeys;
  /** Redis key prefix (reply stream names). */
  prefix: string;
  /** Extra life of a claim beyond the provider's deadlines, as the dispatcher allows. @defaultValue 1000 ms */
  graceMs?: number;
  /**
   * This process as a reader of reply streams. With it, a claim names the
   * leader's process and a follower adds its own to the job's readers, so a
   * worker never gives up a job a follower still reads, and a claim whose
   * job nobody reads any more is taken over instead of followed.
   * @defaultValue none: claims are followed as long as they exist
   */
  liveness?: ReaderIdentity;
  /**
   * How long a reply stream lives (`RESPONSE_STREAM_TTL`), ms: a job's
   * followers are remembered that long beyond the claim, as long as its reply
   * can be read. @defaultValue 300000
   */
  replyTtlMs?: number;
}

/** The result of {@link RequestCoalescer.joinOrLead}. */
export type CoalesceRole =
  /** Nobody is answering this request yet: dispatch it with this job id. */
  | { role: 'leader'; jobId: string }
  /** An identical request is in flight: read its reply stream. */
  | { role: 'follower'; jobId: string };

// KEYS[1] inflight hash. ARGV: job id, claim ttl ms, liveness key prefix, this process's reader id ('' for none),
// readers set prefix, readers set ttl ms. Returns the leader's job id when there is one that someone still reads (and
// counts this request among its followers and readers), else claims for ARGV[1]. A claim without a reader ('r')
// predates reader liveness, or comes from a process without it: it is followed as long as it exists.
const JOIN_OR_LEAD = `${HAS_LIVE_READER_LUA}
local leader = redis.call('HGET', KEYS[1], 'j')
if leader then
  local reader = redis.call('HGET', KEYS[1], 'r')
  if not reader or has_live_reader(ARGV[3], reader, ARGV[5] .. leader) then
    redis.call('HINCRBY', KEYS[1], 'f', 1)
    if ARGV[4] ~= '' then
      redis.call('SADD', ARGV[5] .. leader, ARGV[4])
      redis.call('PEXPIRE', ARGV[5] .. leader, ARGV[6])
    end
    return leader
  end
  redis.call('DEL', KEYS[1])
end
redis.call('HSET', KEYS[1], 'j', ARGV[1], 'f', 0)
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'r', ARGV[4]) end
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

interface CoalescerScripts {
  gatewayJoinOrLead(...args: Array<string | number>): Promise<string | null>;
  gatewayReleaseClaim(...args: string[]): Promise<number>;
}

/**
 * Coalesces identical concurrent misses, across every API replica: the first
 * request claims a Redis hash (atomically, in a script) naming its job; the
 * ones that find the claim read that job's reply stream from the start
 * instead of enqueuing their own (`ChatDispatcher.follow`), so the provider is called once. The leader
 * releases the claim once the reply is stored (or failed). When the leader's
 * client goes away, the job is cancelled only if nobody follows it. When the
 * leader's API process dies (no release), followers keep the job read (see
 * `src/streams/reader-liveness.ts`), and once nobody reads it the claim is
 * taken over by the next identical request instead of followed.
 */
export class RequestCoalescer {
  private readonly graceMs: number;

  private readonly options: RequestCoalescerOptions;

  constructor(options: RequestCoalescerOptions) {
    this.options = options;
    this.graceMs = options.graceMs ?? 1_000;
    // Every miss claims and releases: defineCommand sends EVALSHA, and the script's text once per connection.
    if (!('gatewayJoinOrLead' in options.redis))
      options.redis.defineCommand('gatewayJoinOrLead', { numberOfKeys: 1, lua: JOIN_OR_LEAD });
    if (!('gatewayReleaseClaim' in options.redis))
      options.redis.defineCommand('gatewayReleaseClaim', { numberOfKeys: 1, lua: RELEASE });
  }

  private get scripts(): CoalescerScripts {
    return this.options.redis as unknown as CoalescerScripts;
  }

  async joinOrLead(key: string, provider: ProviderConfig, jobId: string): Promise<CoalesceRole> {
    // The claim outlives the longest wait for a first entry; a slow stream beyond that just stops coalescing.
    const ttlMs = provider.queue_timeout_ms + provider.timeout_ms + this.graceMs;
    const { prefix, liveness } = this.options;
    // Sent before the claim, on the same connection: whoever finds the claim finds this process's liveness key too.
    liveness?.touch();
    const leader = await this.scripts.gatewayJoinOrLead(
      this.options.keys.inflight(key),
      jobId,
      ttlMs,
      readerLivenessKey(prefix, ''),
      liveness?.id ?? '',
      jobReadersKey(prefix, ''),
      ttlMs + (this.options.replyTtlMs ?? 300_000),
    );
    return leader ? { role: 'follower', jobId: leader } : { role: 'leader', jobId };
  }

  /** Gives up the claim of `jobId`; resolves to the number of followers it had (-1 when it was no longer the claim). */
  async release(key: string, jobId: string): Promise<number> {
    return Number(await this.scripts.gatewayReleaseClaim(this.options.keys.inflight(key), jobId));
  }

  /**
   * The leader could not even enqueue its job: its followers would wait for a
   * stream nobody writes, so they get the leader's error on it instead.
   */
  async fail(jobId: string, err: unknown, ttlSeconds = 60): Promise<void> {
    const error = err instanceof GatewayError ? err : new InternalError('The request could not be enqueued.');
    const writer = new ReplyWriter({
      redis: this.options.redis,
      key: responseStreamKey(this.options.prefix, jobId),
      ttlSeconds,
    });
    writer.error(error);
    await writer.flush();
  }
}
