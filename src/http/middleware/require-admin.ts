import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../../auth/principal.ts';
import { AdminRequiredError, InvalidApiKeyError } from '../../errors/catalog.ts';

/** Lets only admin keys through (403 `admin_required` for a valid non-admin key). */
export function requireAdmin() {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const principal = res.locals.principal as Principal | undefined;
    if (!principal) throw new InvalidApiKeyError();
    if (!principal.admin) throw new AdminRequiredError();
    next();
  };
}
