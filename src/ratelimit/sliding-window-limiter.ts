import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sendHeldWrites } from '../redis/write-coalescing.ts';
import { rateLimitKeys, type RateLimitKeys } from './rate-limit-keys.ts';

/**
 * Sliding-window-log rate limiting, one Lua script per request.
 *
 * Each admitted request is a member of a sorted set scored by its time in ms;
 * a request is admitted when fewer than `limit` members are younger than the
 * window. So any `window` interval holds at most `limit` admitted requests,
 * with no 2x burst at a window edge (the weakness of fixed windows, which is
 * what rate-limiter-flexible's Redis limiter implements). The script reads the
 * clock of Redis (`TIME`), so every replica counts against one clock, and
 * trims, counts, admits and updates the statistics atomically. Throttled
 * requests are not logged, so a client that keeps retrying is not locked out
 * for longer than the window.
 *
 * On a Redis Cluster a key's window and the shared statistics are in
 * different slots, which one script may not touch together: the script gets
 * the window alone, and the statistics follow as one pipeline to the `{rl}`
 * slot that the request does not wait for.
 */

const SCRIPT = `
local now
if ARGV[5] ~= '' then
  now = tonumber(ARGV[5])
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  count = count + 1
  allowed = 1
end
local reset = window
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] then
  reset = tonumber(oldest[2]) + window - now
  redis.call('PEXPIRE', KEYS[1], window)
end
if ARGV[4] ~= '' then
  redis.call('ZINCRBY', KEYS[3], 1, ARGV[6])
  redis.call('HSET', KEYS[4], ARGV[6], ARGV[4])
  if allowed == 0 then redis.call('HINCRBY', KEYS[2], 'throttled', 1) end
end
return {allowed, count, reset}
`;

/** Options of {@link SlidingWindowLimiter}. */
export interface SlidingWindowLimiterOptions {
  /** Command connection. */
  redis: Redis;
  /** Redis key prefix of the gateway. */
  prefix: string;
  /**
   * Clock in ms instead of Redis's `TIME`. Only for tests that need exact
   * timing; replicas with different clocks would disagree. @defaultValue Redis time
   */
  now?: () => number;
  /**
   * Redis key of one subject's window, for limiters of other things than
   * API keys (failed authentications per address).
   * @defaultValue the rate limit's window key of the subject (`<prefix>:rl:win:<subject>`)
   */
  windowKey?: (subject: string) => string;
}

/** The limit applied to one request. */
export interface RateLimitRule {
  /** Requests admitted per window. */
  limit: number;
  /** Window length, ms. */
  windowMs: number;
}

/** What the limiter decided. */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Requests still admitted in the current window, after this one. */
  remaining: number;
  /** Until the oldest counted request leaves the window, ms: when a slot frees up. */
  resetMs: number;
}

interface ScriptRunner {
  /** The number of keys (4, or 1 on a cluster), the keys, then the arguments. */
  gatewaySlidingWindow(numberOfKeys: number, ...keysAndArgs: string[]): Promise<[number, number, number]>;
}

export class SlidingWindowLimiter {
  private readonly options: SlidingWindowLimiterOptions;
  private readonly keys: RateLimitKeys;
  /** Member suffix unique to this process; with a counter, two requests in one ms stay distinct. */
  private readonly instance = randomBytes(4).toString('hex');
  private sequence = 0;

  constructor(options: SlidingWindowLimiterOptions) {
    this.options = options;
    this.keys = rateLimitKeys(options.prefix);
    // defineCommand sends EVALSHA and falls back to EVAL once per connection.
    if (!('gatewaySlidingWindow' in options.redis)) {
      options.redis.defineCommand('gatewaySlidingWindow', { lua: SCRIPT });
    }
  }

  /**
   * Counts one request of `subject` (the key's SHA-256) against `rule`.
   * `statsLabel` (the masked key) feeds the per-key request counts of /stats;
   * empty to leave the statistics alone. `options.sendNow` sends the script at
   * once instead of with the rest of the turn's writes (write coalescing), so
   * the caller's remaining work overlaps the round trip. @defaultValue false
   */
  async consume(
    subject: string,
    rule: RateLimitRule,
    statsLabel = '',
    options: { sendNow?: boolean } = {},
  ): Promise<RateLimitDecision> {
    const member = `${this.instance}:${(this.sequence = (this.sequence + 1) % 1e9)}`;
    const now = this.options.now ? String(Math.floor(this.options.now())) : '';
    const runner = this.options.redis as unknown as ScriptRunner;
    const args = [String(rule.limit), String(rule.windowMs), member];
    const cluster = this.options.redis.isCluster;
    const pending = cluster
      ? runner.gatewaySlidingWindow(1, this.windowKey(subject), ...args, '', now, subject)
      : runner.gatewaySlidingWindow(
          4,
          this.windowKey(subject),
          this.keys.stats,
          this.keys.requestsByKey,
          this.keys.labels,
          ...args,
          statsLabel,
          now,
          subject,
        );
    if (options.sendNow) sendHeldWrites(this.options.redis);
    const [allowed, count, resetMs] = await pending;
    if (cluster && statsLabel !== '') this.countInStats(subject, statsLabel, allowed === 1);
    return {
      allowed: allowed === 1,
      limit: rule.limit,
      remaining: Math.max(0, rule.limit - count),
      resetMs: Math.max(0, resetMs),
    };
  }

  /** What the script counts on one Redis, sent apart on a cluster; a lost count never fails the request. */
  private countInStats(subject: string, statsLabel: string, allowed: boolean): void {
    const pipeline = this.options.redis
      .pipeline()
      .zincrby(this.keys.requestsByKey, 1, subject)
      .hset(this.keys.labels, subject, statsLabel);
    if (!allowed) pipeline.hincrby(this.keys.stats, 'throttled', 1);
    pipeline.exec().catch(() => {});
  }

  /** Forgets the window of `subject` (tests, admin tooling). */
  async reset(subject: string): Promise<void> {
    await this.options.redis.del(this.windowKey(subject));
  }

  /** Redis key of the window of `subject`. */
  windowKey(subject: string): string {
    return this.options.windowKey ? this.options.windowKey(subject) : this.keys.window(subject);
  }
}
