import type { NextFunction, Request, Response } from 'express';
import { contextOf } from '../request-context.ts';
import type { KeyAuthenticator } from '../../auth/principal.ts';
import { InvalidApiKeyError } from '../../errors/catalog.ts';

/** Longest key we bother hashing; anything longer is invalid outright. */
const MAX_KEY_LENGTH = 512;

/** The key from `X-API-Key`, else from `Authorization: Bearer <key>`. */
export function presentedKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * Requires a valid gateway key on every path except `publicPaths`, and puts
 * the principal on the request's context.
 */
export function authenticate(authenticator: KeyAuthenticator, publicPaths: readonly string[]) {
  const open = new Set(publicPaths);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (open.has(req.path)) return next();
    const key = presentedKey(req);
    if (!key || key.length > MAX_KEY_LENGTH) throw new InvalidApiKeyError();
    const principal = await authenticator.authenticate(key);
    if (!principal) throw new InvalidApiKeyError();
    contextOf(res).principal = principal;
    next();
  };
}
