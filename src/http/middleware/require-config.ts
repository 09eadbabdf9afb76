import type { NextFunction, Request, Response } from 'express';
import { ServiceUnavailableError } from '../../errors/catalog.ts';

/**
 * While no configuration is loaded (config.yaml was invalid at start and has
 * not been fixed and reloaded), `/v1/*` answers 503 with the reason instead
 * of pretending every model is unknown. Probes and admin stay reachable so
 * the operator can see why and reload.
 */
export function requireConfig(configError: () => string | undefined, pathPrefix = '/v1') {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const error = configError();
    if (error !== undefined && (req.path === pathPrefix || req.path.startsWith(`${pathPrefix}/`))) {
      throw new ServiceUnavailableError(
        `The gateway has no valid configuration: ${error}. Fix it and reload (SIGHUP or POST /admin/reload-config).`,
      );
    }
    next();
  };
}
