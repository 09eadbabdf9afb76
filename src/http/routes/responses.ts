import { Router, type Request, type Response } from 'express';
import type { NativeAction, NativeResources } from '../../doors/responses/native-resources.ts';
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
 * sees its own responses only; any other id is a 404. The owner's responses
 * of a native Responses upstream are that upstream's answer.
 */
export function responsesRouter(deps: { store: ResponseStore; native?: NativeResources }): Router {
  const router = Router();

  /** Answers from the native upstream when `id` is one of the owner's native responses; false otherwise. */
  async function native(req: Request<{ id: string }>, res: Response, action: NativeAction): Promise<boolean> {
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    const answer = await deps.native?.call(req.params.id, viewerOf(res).owner, action, query);
    if (!answer) return false;
    res.status(answer.status).json(answer.body);
    return true;
  }

  router.get('/v1/responses/:id', async (req: Request<{ id: string }>, res: Response) => {
    if (await native(req, res, 'retrieve')) return;
    res.json(await deps.store.get(req.params.id, viewerOf(res).owner));
  });

  router.delete('/v1/responses/:id', async (req: Request<{ id: string }>, res: Response) => {
    if (await native(req, res, 'delete')) return;
    res.json(await deps.store.delete(req.params.id, viewerOf(res).owner));
  });

  router.get('/v1/responses/:id/input_items', async (req: Request<{ id: string }>, res: Response) => {
    if (await native(req, res, 'input_items')) return;
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
