import type { Redis } from 'ioredis';
import { SlidingWindowLimiter } from '../ratelimit/sliding-window-limiter.ts';

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
 * are counted only on the failure path (the rate limiter's sliding-window
 * script: trim, count, add),
 * and the block is remembered in this process ({@link blockedFor}, no I/O) as
 * soon as the script reports it. A replica therefore learns of a block at the
 * address's first failure there, not before. Refused requests are not
 * counted, so an address is never locked out for longer than the window.
 * While Redis is unreachable, failures are counted in this process instead,
 * with the same rule.
 */

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
  /** The sliding-window log of the API-key rate limit, over addresses' failures. */
  private readonly window: SlidingWindowLimiter;

  constructor(options: FailedAuthThrottleOptions) {
    this.options = options;
    this.limit = options.limit ?? 20;
    this.windowMs = options.windowMs ?? 60_000;
    this.maxBlocked = options.maxBlockedAddresses ?? 10_000;
    this.now = options.now ?? Date.now;
    this.window = new SlidingWindowLimiter({
      redis: options.redis,
      prefix: options.prefix,
      windowKey: (address) => this.key(address),
    });
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
      const decision = await this.window.consume(address, { limit: this.limit, windowMs: this.windowMs });
      [counted, count, resetMs] = [decision.allowed ? 1 : 0, this.limit - decision.remaining, decision.resetMs];
    } catch (err) {
      this.options.onError?.(err as Error);
      [counted, count, resetMs] = this.countLocally(address);
    }
    if (count >= this.limit) this.block(address, resetMs);
    return {
      blocked: counted === 0,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetMs: Math.max(0, resetMs),
    };
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
