import { Router, type Request, type Response } from 'express';
import type { ResponseStore } from '../../doors/responses/response-store.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import { viewerOf } from './files.ts';
import { pageQuery } from './list-query.ts';

function orderOf(req: Request): 'asc' | 'desc' {
  const order = req.query.order;
  if (order === undefined || order === 'desc') return 'desc';
  if (order === 'asc') return 'asc';
  throw new InvalidRequestError("order: must be 'asc' or 'desc'.");
}

/**
 * Stored responses of the Responses door: `GET /v1/responses/{id}`,
 * `DELETE /v1/responses/{id}`, `GET /v1/responses/{id}/input_items` (OpenAI's
 * list object: `after`, `before`, `limit` 1-100, `order`). Each key owner
 * sees its own responses only; any other id is a 404.
 */
export function responsesRouter(deps: { store: ResponseStore }): Router {
  const router = Router();

  router.get('/v1/responses/:id', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.get(req.params.id, viewerOf(res).owner));
  });

  router.delete('/v1/responses/:id', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.delete(req.params.id, viewerOf(res).owner));
  });

  router.get('/v1/responses/:id/input_items', async (req: Request<{ id: string }>, res: Response) => {
    const page = pageQuery(req, { defaultLimit: 20, maxLimit: 100 });
    const before = typeof req.query.before === 'string' && req.query.before !== '' ? req.query.before : undefined;
    res.json(
      await deps.store.inputItems(req.params.id, viewerOf(res).owner, {
        ...page,
        ...(before !== undefined ? { before } : {}),
        order: orderOf(req),
      }),
    );
  });

  return router;
}
