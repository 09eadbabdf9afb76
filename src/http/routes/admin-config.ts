import { Router } from 'express';
import type { ConfigReloader } from '../../admin/config-reloader.ts';
import { EnvFileError } from '../../admin/env-file.ts';
import { ConfigError } from '../../config/gateway-config.ts';
import { SettingsError } from '../../config/settings.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import { requireAdmin } from '../middleware/require-admin.ts';

/**
 * `POST /admin/reload-config` (admin key): re-reads config.yaml and the
 * environment in this process, swaps when valid and broadcasts the reload to
 * every API and worker process. An invalid file answers 400 `invalid_request`
 * with the validation message, and every process keeps its configuration.
 */
export function adminConfigRouter(reloader: ConfigReloader): Router {
  const router = Router();
  router.post('/admin/reload-config', requireAdmin(), async (_req, res) => {
    try {
      res.json(await reloader.reload('POST /admin/reload-config'));
    } catch (err) {
      if (err instanceof ConfigError || err instanceof SettingsError || err instanceof EnvFileError) {
        throw new InvalidRequestError(`Configuration not reloaded, the current one stays: ${err.message}`);
      }
      throw err;
    }
  });
  return router;
}
