import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../../auth/principal.ts';
import { RateLimitExceededError } from '../../errors/catalog.ts';
import type { RateLimitRule, SlidingWindowLimiter } from '../../ratelimit/sliding-window-limiter.ts';

/** Options of {@link rateLimit}. */
export interface RateLimitMiddlewareOptions {
  limiter: SlidingWindowLimiter;
  /** The rule now in force; read per request so a reload applies at once. */
  rule: () => RateLimitRule;
  /** Path prefix the limit applies to. Default `/v1`. */
  pathPrefix?: string;
}

/**
 * Per-key rate limit on `/v1/*` (cache hits included): sets
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`
 * (seconds until a slot frees up) on every reply, and throws 429
 * `rate_limit_exceeded` with `Retry-After` when the window is full. Runs
 * after authentication and before the body is parsed, so a throttled body is
 * never read. Requests without a principal (a public path) are not limited.
 * When Redis is unreachable the error surfaces as 503: requests are not let
 * through unlimited.
 */
export function rateLimit(options: RateLimitMiddlewareOptions) {
  const prefix = options.pathPrefix ?? '/v1';
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.path !== prefix && !req.path.startsWith(`${prefix}/`)) return next();
    const principal = res.locals.principal as Principal | undefined;
    if (!principal) return next();
    const rule = options.rule();
    const decision = await options.limiter.consume(principal.keyHash, rule, principal.maskedKey);
    const resetSeconds = Math.ceil(decision.resetMs / 1000);
    const headers = {
      'X-RateLimit-Limit': String(decision.limit),
      'X-RateLimit-Remaining': String(decision.remaining),
      'X-RateLimit-Reset': String(resetSeconds),
    };
    if (!decision.allowed) throw new RateLimitExceededError(Math.max(1, resetSeconds), headers);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    next();
  };
}
