import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Throttles key guessing: at most `limit` failed authentications per client
 * address in any `windowMs` interval, counted in Redis so every API replica
 * shares the count. Once an address has used them up, every request from it
 * is refused (429) until its oldest counted failure leaves the window, a
 * correct key included: if a correct key got through while wrong ones got
 * 429, the 429s would only tell the guesser "wrong" faster, and guessing
 * would go on at full speed.
 *
 * Requests with a valid key cost nothing here but a `Map` size check: failures
 * are counted only on the failure path (one Lua script: trim, count, add),
 * and the block is remembered in this process ({@link blockedFor}, no I/O) as
 * soon as the script reports it. A replica therefore learns of a block at the
 * address's first failure there, not before. Refused requests are not
 * counted, so an address is never locked out for longer than the window.
 * While Redis is unreachable, failures are counted in this process instead,
 * with the same rule.
 */

const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local counted = 0
if count < limit then
  redis.call('ZADD', KEYS[1], now, now .. ':' .. ARGV[3])
  count = count + 1
  counted = 1
end
local reset = window
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
redis.call('PEXPIRE', KEYS[1], window)
return {counted, count, reset}
`;

/** Options of {@link FailedAuthThrottle}. */
export interface FailedAuthThrottleOptions {
  /** Command connection. */
  redis: Redis;
  /** Redis key prefix of the gateway. */
  prefix: string;
  /**
   * Failed authentications allowed per address per window (`AUTH_FAILURE_LIMIT`).
   * @defaultValue 20
   */
  limit?: number;
  /**
   * Window, ms (`AUTH_FAILURE_WINDOW` × 1000).
   * @defaultValue 60000
   */
  windowMs?: number;
  /**
   * Blocked addresses remembered in this process; beyond, the oldest block is
   * forgotten (its next failure reads it from Redis again).
   * @defaultValue 10000
   */
  maxBlockedAddresses?: number;
  /** Called when Redis cannot count a failure (it is then counted in this process). */
  onError?: (err: Error) => void;
  /**
   * Clock of the in-process block list and fallback count, ms.
   * @defaultValue `Date.now`
   */
  now?: () => number;
}

/** What one failed authentication, or a request from a blocked address, gets. */
export interface FailedAuthVerdict {
  /** True: refuse with 429; false: the failure was counted, answer 401. */
  blocked: boolean;
  limit: number;
  /** Failures the address may still make in the window. */
  remaining: number;
  /** Until the oldest counted failure leaves the window, ms. */
  resetMs: number;
}

interface ScriptRunner {
  gatewayFailedAuth(key: string, limit: string, windowMs: string, member: string): Promise<[number, number, number]>;
}

export class FailedAuthThrottle {
  readonly limit: number;
  readonly windowMs: number;
  private readonly options: FailedAuthThrottleOptions;
  private readonly now: () => number;
  private readonly maxBlocked: number;
  /** Address -> time its block ends (this process's clock). */
  private readonly blocks = new Map<string, number>();
  /** Fallback while Redis is unreachable: address -> times of its failures. */
  private readonly localFailures = new Map<string, number[]>();
  private readonly instance = randomBytes(4).toString('hex');
  private sequence = 0;

  constructor(options: FailedAuthThrottleOptions) {
    this.options = options;
    this.limit = options.limit ?? 20;
    this.windowMs = options.windowMs ?? 60_000;
    this.maxBlocked = options.maxBlockedAddresses ?? 10_000;
    this.now = options.now ?? Date.now;
    if (!('gatewayFailedAuth' in options.redis)) options.redis.defineCommand('gatewayFailedAuth', { numberOfKeys: 1, lua: SCRIPT });
  }

  /** True while this process knows of any blocked address: only then is a request's address worth looking up. */
  get blocking(): boolean {
    return this.blocks.size > 0;
  }

  /** The block of `address` this process knows of, if any. No I/O. */
  blockedFor(address: string): FailedAuthVerdict | undefined {
    const until = this.blocks.get(address);
    if (until === undefined) return undefined;
    const resetMs = until - this.now();
    if (resetMs <= 0) {
      this.blocks.delete(address);
      return undefined;
    }
    return { blocked: true, limit: this.limit, remaining: 0, resetMs };
  }

  /** Counts one failed authentication of `address`; `blocked` when it had none left. */
  async recordFailure(address: string): Promise<FailedAuthVerdict> {
    let counted: number;
    let count: number;
    let resetMs: number;
    try {
      const member = `${this.instance}:${(this.sequence = (this.sequence + 1) % 1e9)}`;
      const runner = this.options.redis as unknown as ScriptRunner;
      [counted, count, resetMs] = await runner.gatewayFailedAuth(this.key(address), String(this.limit), String(this.windowMs), member);
    } catch (err) {
      this.options.onError?.(err as Error);
      [counted, count, resetMs] = this.countLocally(address);
    }
    if (count >= this.limit) this.block(address, resetMs);
    return { blocked: counted === 0, limit: this.limit, remaining: Math.max(0, this.limit - count), resetMs: Math.max(0, resetMs) };
  }

  /** Redis key of an address's failures. */
  key(address: string): string {
    return `${this.options.prefix}:authfail:${address}`;
  }

  private block(address: string, resetMs: number): void {
    this.blocks.delete(address);
    if (this.blocks.size >= this.maxBlocked) {
      const oldest = this.blocks.keys().next();
      if (!oldest.done) this.blocks.delete(oldest.value);
    }
    this.blocks.set(address, this.now() + resetMs);
  }

  /** The script's rule, in this process. */
  private countLocally(address: string): [number, number, number] {
    const now = this.now();
    const times = (this.localFailures.get(address) ?? []).filter((t) => t > now - this.windowMs);
    let counted = 0;
    if (times.length < this.limit) {
      times.push(now);
      counted = 1;
    }
    this.localFailures.delete(address);
    if (this.localFailures.size >= this.maxBlocked) {
      const oldest = this.localFailures.keys().next();
      if (!oldest.done) this.localFailures.delete(oldest.value);
    }
    this.localFailures.set(address, times);
    return [counted, times.length, (times[0] ?? now) + this.windowMs - now];
  }
}
