import type { NextFunction, Request, Response } from 'express';
import { contextOf } from '../../pipeline/request-context.ts';
import { traced } from '../../observability/tracing/trace-span.ts';
import type { FailedAuthThrottle, FailedAuthVerdict } from '../../auth/failed-auth-throttle.ts';
import type { KeyAuthenticator } from '../../auth/principal.ts';
import { InvalidApiKeyError, TooManyFailedAuthError, type GatewayError } from '../../errors/catalog.ts';
import { clientAddress } from '../client-address.ts';

/** Longest key we bother hashing; anything longer is invalid outright. */
const MAX_KEY_LENGTH = 512;

/** The key from `X-API-Key`, else from `Authorization: Bearer <key>`. */
function presentedKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  return undefined;
}

/** Key guessing protection of {@link authenticate}. */
export interface FailedAuthOptions {
  throttle: FailedAuthThrottle;
  /**
   * Proxies in front of the gateway whose `X-Forwarded-For` entries are
   * trusted (`TRUST_PROXY`, see {@link clientAddress}).
   * @defaultValue 0
   */
  trustedProxies?: number;
}

/**
 * Requires a valid gateway key on every path except `publicPaths`, and puts
 * the principal on the request's context.
 *
 * With `failedAuth`, a presented key that is wrong counts against the client
 * address, and an address with no failures left gets 429
 * `too_many_failed_auth` for every request (see failed-auth-throttle.ts for
 * why a correct key is refused too). A request without any key is not a
 * guess and is not counted. A valid key's request only pays a `Map` size
 * check unless some address is blocked right now.
 */
export function authenticate(
  authenticator: KeyAuthenticator,
  publicPaths: readonly string[],
  failedAuth?: FailedAuthOptions,
) {
  const open = new Set(publicPaths);
  const throttle = failedAuth?.throttle;
  const trustedProxies = failedAuth?.trustedProxies ?? 0;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (open.has(req.path)) return next();
    if (throttle?.blocking) {
      const block = throttle.blockedFor(clientAddress(req, trustedProxies));
      if (block) throw tooManyFailures(block);
    }
    const key = presentedKey(req);
    if (!key) throw new InvalidApiKeyError();
    const context = contextOf(res);
    const span = context.span.child('auth');
    const principal =
      key.length > MAX_KEY_LENGTH
        ? undefined
        : await traced(span, authenticator.authenticate(key), (found) => (found ? undefined : 'invalid_api_key'));
    if (!principal) {
      if (!throttle) throw new InvalidApiKeyError();
      const verdict = await throttle.recordFailure(clientAddress(req, trustedProxies));
      throw verdict.blocked ? tooManyFailures(verdict) : new InvalidApiKeyError();
    }
    context.principal = principal;
    next();
  };
}

function tooManyFailures(verdict: FailedAuthVerdict): GatewayError {
  const seconds = Math.max(1, Math.ceil(verdict.resetMs / 1000));
  return new TooManyFailedAuthError(seconds, {
    'X-RateLimit-Limit': String(verdict.limit),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': String(seconds),
  });
}
