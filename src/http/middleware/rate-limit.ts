import type { NextFunction, Request, Response } from 'express';
import { RateLimitExceededError } from '../../errors/catalog.ts';
import { admit, type Admission } from '../../ratelimit/admission.ts';
import type { RateLimitRule, SlidingWindowLimiter } from '../../ratelimit/sliding-window-limiter.ts';
import { contextOf } from '../../pipeline/request-context.ts';
import { traced } from '../../observability/tracing/trace-span.ts';

/** Options of {@link rateLimit}. */
export interface RateLimitMiddlewareOptions {
  limiter: SlidingWindowLimiter;
  /** The rule now in force; read per request so a reload applies at once. */
  rule: () => RateLimitRule;
  /** Path prefix the limit applies to. @defaultValue `/v1` */
  pathPrefix?: string;
}

/**
 * Per-key rate limit on `/v1/*` (cache hits included), the key's own
 * `rate_limit` when it has one (src/auth/key-policy.ts), else `rule`: sets
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`
 * (seconds until a slot frees up) on every reply, and answers 429
 * `rate_limit_exceeded` with `Retry-After` when the window is full.
 *
 * The decision (one Redis round trip) is started here and awaited later, so
 * it overlaps reading and validating the body and the cache lookup: routes
 * mounted after {@link awaitRateLimit} see it settled; the chat route awaits
 * it itself ({@link settleRateLimit}) together with its cache read; the error
 * handler settles it before rendering any error, so a throttled request
 * always gets its 429. A throttled request's body is read and validated but
 * never cached, queued or sent upstream. Requests without a principal (a
 * public path) are not limited. When Redis is unreachable the error surfaces
 * as 503: requests are not let through unlimited.
 *
 * A request that is alone in the process sends its script at once rather than
 * at the end of the event-loop turn, so reading, validating and scanning its
 * body overlap the round trip; under load the script waits for the turn's
 * other writes and leaves with them in one syscall.
 */
export function rateLimit(options: RateLimitMiddlewareOptions) {
  const prefix = options.pathPrefix ?? '/v1';
  let inFlight = 0;
  const finished = () => {
    inFlight--;
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path !== prefix && !req.path.startsWith(`${prefix}/`)) return next();
    const context = contextOf(res);
    const principal = context.principal;
    if (!principal) return next();
    inFlight++;
    res.once('close', finished);
    const sendNow = inFlight === 1;
    const span = context.span.child('rate limit');
    const own = principal.policy?.rate_limit;
    const rule = own ? { limit: own.requests, windowMs: own.window_seconds * 1000 } : options.rule();
    const deciding = options.limiter
      .consume(principal.keyHash, rule, principal.maskedKey, { sendNow })
      .then((decision) => {
        const resetSeconds = Math.ceil(decision.resetMs / 1000);
        const headers = {
          'X-RateLimit-Limit': String(decision.limit),
          'X-RateLimit-Remaining': String(decision.remaining),
          'X-RateLimit-Reset': String(resetSeconds),
        };
        if (!decision.allowed) throw new RateLimitExceededError(Math.max(1, resetSeconds), headers);
        if (!res.headersSent) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
        return admit();
      });
    const decided = traced(span, deciding);
    // Whoever settles it sees the rejection; it must never count as unhandled meanwhile.
    decided.catch(() => {});
    context.rateLimit = decided;
    next();
  };
}

/**
 * This request's rate-limit decision: resolves with the {@link Admission}
 * that enqueuing needs once it is in and its headers are set, rejects with
 * 429 (or 503 when Redis is down). Resolves at once for requests that are not
 * limited.
 */
export function settleRateLimit(res: Response): Promise<Admission> {
  return contextOf(res).rateLimit ?? Promise.resolve(admit());
}

/** Waits for the rate-limit decision before the routes mounted after it. */
export function awaitRateLimit() {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const pending = contextOf(res).rateLimit;
    if (!pending) return next();
    pending.then(() => next(), next);
  };
}
