import { Router } from 'express';
import type { GatewayConfig } from '../../config/gateway-config.ts';

/** `GET /v1/models`: every routable model (chat, then embedding models), in OpenAI's list shape. */
export function modelsRouter(config: () => GatewayConfig): Router {
  const router = Router();
  router.get('/v1/models', (_req, res) => {
    const current = config();
    const created = Math.floor(current.loadedAt.getTime() / 1000);
    res.json({
      object: 'list',
      // A model with several deployments is listed once, owned by its first provider entry.
      data: [...current.modelIndex, ...current.embeddingIndex].map(([id, p]) => ({ id, object: 'model', created, owned_by: p.name })),
    });
  });
  router.get('/v1/models/:model', (req, res, next) => {
    const provider = config().modelIndex.get(req.params.model) ?? config().embeddingIndex.get(req.params.model);
    if (!provider) return next();
    res.json({ id: req.params.model, object: 'model', created: Math.floor(config().loadedAt.getTime() / 1000), owned_by: provider.name });
  });
  return router;
}
