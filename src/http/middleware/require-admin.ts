import type { NextFunction, Request, Response } from 'express';
import { contextOf } from '../../pipeline/request-context.ts';
import { AdminRequiredError, InvalidApiKeyError } from '../../errors/catalog.ts';

/** Lets only admin keys through (403 `admin_required` for a valid non-admin key). */
export function requireAdmin() {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const principal = contextOf(res).principal;
    if (!principal) throw new InvalidApiKeyError();
    if (!principal.admin) throw new AdminRequiredError();
    next();
  };
}
