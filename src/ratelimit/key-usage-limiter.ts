import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * Tokens per minute and spend budgets of one key, enforced atomically in
 * Redis (one Lua script per admission, one per completion) so every API
 * replica counts against the same numbers.
 *
 * The rule: a request is admitted while what the key has already used,
 * counting the estimates of its requests still in flight, is below the
 * limit; its own estimate is then added. When the reply ends the estimate is
 * replaced by the usage the provider reported. So the limit is exceeded at
 * most by the last request admitted (its real usage beyond what was left),
 * never by requests admitted after the limit was reached, whichever replica
 * they reached.
 *
 * - Tokens: a sorted set of `<id>:<tokens>` members scored by time (Redis'
 *   own clock); members older than a minute fall out.
 * - Spend: a counter of settled nano-USD per period plus a sorted set of
 *   in-flight estimates; estimates older than {@link STALE_RESERVATION_MS}
 *   (a process died before settling) stop counting. The counter is seeded
 *   from the key store's usage when it is missing (a new period, or a Redis
 *   that lost its data): admission answers `unseeded` until {@link seed}.
 */

const STALE_RESERVATION_MS = 15 * 60_000;
const MINUTE_MS = 60_000;

const LUA_HELPERS = `
local function now_ms(override)
  if override ~= '' then return tonumber(override) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function sum_members(key)
  local total = 0
  for _, m in ipairs(redis.call('ZRANGE', key, 0, -1)) do
    total = total + tonumber(string.match(m, ':(%d+)$'))
  end
  return total
end
`;

/** KEYS: tokens zset, spend counter, reservations zset. Returns {allowed, reason, retryMs, used}. */
const ADMIT = `${LUA_HELPERS}
local now = now_ms(ARGV[7])
if ARGV[1] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${MINUTE_MS})
  local used = sum_members(KEYS[1])
  if used >= tonumber(ARGV[1]) then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return {0, 'tokens', tonumber(oldest[2]) + ${MINUTE_MS} - now, used}
  end
end
if ARGV[3] ~= '' then
  local settled = redis.call('GET', KEYS[2])
  if not settled then return {0, 'unseeded', 0, 0} end
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - ${STALE_RESERVATION_MS})
  local spent = tonumber(settled) + sum_members(KEYS[3])
  if spent >= tonumber(ARGV[3]) then return {0, 'budget', 0, spent} end
end
if ARGV[1] ~= '' then
  redis.call('ZADD', KEYS[1], now, ARGV[5] .. ':' .. ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ${MINUTE_MS})
end
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[3], now, ARGV[5] .. ':' .. ARGV[4])
  redis.call('EXPIRE', KEYS[3], ARGV[6])
end
return {1, '', 0, 0}
`;

/** KEYS as {@link ADMIT}. ARGV: id, token estimate, real tokens or '', cost estimate, real cost or '', ttl, now. */
const SETTLE = `${LUA_HELPERS}
local now = now_ms(ARGV[7])
if ARGV[3] ~= '' then
  redis.call('ZREM', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
  if tonumber(ARGV[3]) > 0 then
    redis.call('ZADD', KEYS[1], now, ARGV[1] .. ':' .. ARGV[3])
    redis.call('PEXPIRE', KEYS[1], ${MINUTE_MS})
  end
end
if ARGV[5] ~= '' then
  redis.call('ZREM', KEYS[3], ARGV[1] .. ':' .. ARGV[4])
  -- A counter that vanished meanwhile is seeded again from the key store, which will hold this spend too.
  if tonumber(ARGV[5]) > 0 and redis.call('EXISTS', KEYS[2]) == 1 then
    redis.call('INCRBY', KEYS[2], ARGV[5])
  end
end
return 1
`;

/** What one key is limited to; absent fields are not checked. */
export interface KeyUsageLimits {
  tokensPerMinute?: number;
  /** Budget of the current period, nano-USD. */
  budgetNanoUsd?: number;
}

/** An admitted request's claim, handed back to {@link KeyUsageLimiter.settle}. */
export interface UsageReservation {
  id: string;
  keys: [string, string, string];
  limits: KeyUsageLimits;
  estimatedTokens: number;
  estimatedCostNanoUsd: number;
  ttlSeconds: number;
}

/** Why a request was refused. */
export type KeyUsageRefusal =
  | { reason: 'tokens'; retryAfterMs: number; used: number }
  | { reason: 'budget'; used: number }
  | { reason: 'unseeded' };

/** Options of {@link KeyUsageLimiter}. */
export interface KeyUsageLimiterOptions {
  redis: Redis;
  /** Redis key prefix of the gateway. */
  prefix: string;
  /** Clock in ms instead of Redis' `TIME`, for tests. @defaultValue Redis time */
  now?: () => number;
}

interface ScriptRunner {
  gatewayKeyAdmit(k1: string, k2: string, k3: string, ...args: string[]): Promise<[number, string, number, number]>;
  gatewayKeySettle(k1: string, k2: string, k3: string, ...args: string[]): Promise<number>;
}

export class KeyUsageLimiter {
  private readonly options: KeyUsageLimiterOptions;
  private sequence = 0;
  /** Member prefix unique to this process; with a counter, reservations of all replicas stay distinct. */
  private readonly instance = randomBytes(4).toString('hex');

  constructor(options: KeyUsageLimiterOptions) {
    this.options = options;
    if (!('gatewayKeyAdmit' in options.redis)) {
      options.redis.defineCommand('gatewayKeyAdmit', { numberOfKeys: 3, lua: ADMIT });
      options.redis.defineCommand('gatewayKeySettle', { numberOfKeys: 3, lua: SETTLE });
    }
  }

  /**
   * Admits one request of `keyHash` estimated at `tokens` tokens and
   * `costNanoUsd`, against `limits` in the budget period `periodId`
   * (`2026-11-24` or `2026-11`), whose counter lives `ttlSeconds`.
   */
  async admit(
    keyHash: string,
    limits: KeyUsageLimits,
    estimate: { tokens: number; costNanoUsd: number; periodId: string; ttlSeconds: number },
  ): Promise<{ reservation: UsageReservation } | { refusal: KeyUsageRefusal }> {
    const p = this.options.prefix;
    // The key's hash tag keeps the script's three keys in one slot on a Redis Cluster (beside its rate-limit window).
    const keys: [string, string, string] = [
      `${p}:vk:tpm:{${keyHash}}`,
      spendKey(p, keyHash, estimate.periodId),
      `${p}:vk:res:{${keyHash}}:${estimate.periodId}`,
    ];
    const id = `${this.instance}.${(this.sequence = (this.sequence + 1) % 1e9)}`;
    const tokens = Math.max(0, Math.round(estimate.tokens));
    const cost = Math.max(0, Math.round(estimate.costNanoUsd));
    const [allowed, reason, retryMs, used] = await (this.options.redis as unknown as ScriptRunner).gatewayKeyAdmit(
      ...keys,
      limits.tokensPerMinute === undefined ? '' : String(limits.tokensPerMinute),
      String(tokens),
      limits.budgetNanoUsd === undefined ? '' : String(limits.budgetNanoUsd),
      String(cost),
      id,
      String(estimate.ttlSeconds),
      this.clock(),
    );
    if (allowed !== 1) {
      if (reason === 'unseeded') return { refusal: { reason: 'unseeded' } };
      return {
        refusal:
          reason === 'tokens'
            ? { reason: 'tokens', retryAfterMs: Math.max(0, retryMs), used }
            : { reason: 'budget', used },
      };
    }
    return {
      reservation: {
        id,
        keys,
        limits,
        estimatedTokens: tokens,
        estimatedCostNanoUsd: cost,
        ttlSeconds: estimate.ttlSeconds,
      },
    };
  }

  /**
   * Starts the spend counter of `keyHash` in `periodId` at `spentNanoUsd` (what
   * the key store recorded), unless another replica already did.
   */
  async seed(keyHash: string, periodId: string, spentNanoUsd: number, ttlSeconds: number): Promise<void> {
    await this.options.redis.set(
      spendKey(this.options.prefix, keyHash, periodId),
      String(Math.max(0, Math.round(spentNanoUsd))),
      'EX',
      ttlSeconds,
      'NX',
    );
  }

  /** Replaces the reservation's estimates with what the call really used. */
  async settle(reservation: UsageReservation, used: { tokens: number; costNanoUsd: number }): Promise<void> {
    const { limits } = reservation;
    await (this.options.redis as unknown as ScriptRunner).gatewayKeySettle(
      ...reservation.keys,
      reservation.id,
      String(reservation.estimatedTokens),
      limits.tokensPerMinute === undefined ? '' : String(Math.max(0, Math.round(used.tokens))),
      String(reservation.estimatedCostNanoUsd),
      limits.budgetNanoUsd === undefined ? '' : String(Math.max(0, Math.round(used.costNanoUsd))),
      String(reservation.ttlSeconds),
      this.clock(),
    );
  }

  private clock(): string {
    return this.options.now ? String(Math.floor(this.options.now())) : '';
  }
}

/** The spend counter of a key's budget period. */
function spendKey(prefix: string, keyHash: string, periodId: string): string {
  return `${prefix}:vk:spend:{${keyHash}}:${periodId}`;
}
