import { Router, type Request, type Response } from 'express';
import type { GatewayConfig } from '../../config/gateway-config.ts';
import { messagesError } from '../../doors/messages/errors.ts';
import { resolveModel } from '../../doors/messages/messages-door.ts';
import { ModelNotFoundError } from '../../errors/catalog.ts';
import { contextOf } from '../../pipeline/request-context.ts';

/** Largest page of Anthropic's model list (`limit`, 1 to 1000, default 20). */
const MAX_PAGE = 1000;
const DEFAULT_PAGE = 20;

/** Anthropic's clients (Claude Code's model discovery, the SDKs) send `anthropic-version` on every call; OpenAI's never do. */
function wantsAnthropicShape(req: Request): boolean {
  return typeof req.headers['anthropic-version'] === 'string';
}

/** Anthropic's `ModelInfo`, with the fields the gateway knows; the rest are null as the API allows. */
function anthropicModel(id: string, created: Date): Record<string, unknown> {
  return { type: 'model', id, display_name: id, created_at: created.toISOString() };
}

/** A page of Anthropic's list: `limit`, and `after_id` / `before_id` cursors (model ids). */
function anthropicList(req: Request, res: Response, ids: string[], created: Date): void {
  const limitParam = Number(req.query.limit ?? DEFAULT_PAGE);
  const limit = Number.isInteger(limitParam) && limitParam >= 1 ? Math.min(limitParam, MAX_PAGE) : DEFAULT_PAGE;
  let start = 0;
  let end = ids.length;
  if (typeof req.query.after_id === 'string') start = ids.indexOf(req.query.after_id) + 1;
  if (typeof req.query.before_id === 'string') {
    const before = ids.indexOf(req.query.before_id);
    end = before >= 0 ? before : ids.length;
    start = Math.max(start, end - limit);
  }
  const page = ids.slice(start, Math.min(end, start + limit));
  res.json({
    data: page.map((id) => anthropicModel(id, created)),
    has_more: start + page.length < end,
    first_id: page[0] ?? null,
    last_id: page.at(-1) ?? null,
  });
}

/**
 * `GET /v1/models`: every routable model (chat, then embedding models), in OpenAI's list shape, or in
 * Anthropic's when the request carries `anthropic-version`. A single model is
 * looked up under its aliases too in Anthropic's shape, since Anthropic
 * clients ask by their own model names.
 */
export function modelsRouter(config: () => GatewayConfig): Router {
  const router = Router();
  router.get('/v1/models', (req, res) => {
    const current = config();
    if (wantsAnthropicShape(req)) return anthropicList(req, res, [...current.modelIndex.keys()], current.loadedAt);
    const created = Math.floor(current.loadedAt.getTime() / 1000);
    res.json({
      object: 'list',
      // A model with several deployments is listed once, owned by its first provider entry.
      data: [...current.modelIndex, ...current.embeddingIndex].map(([id, p]) => ({
        id,
        object: 'model',
        created,
        owned_by: p.name,
      })),
    });
  });
  router.get('/v1/models/:model', (req, res, next) => {
    const current = config();
    const id = req.params.model;
    if (wantsAnthropicShape(req)) {
      if (current.modelIndex.has(resolveModel(current, id))) return void res.json(anthropicModel(id, current.loadedAt));
      const { status, body } = messagesError(new ModelNotFoundError(id), contextOf(res).requestId);
      return void res.status(status).json(body);
    }
    const provider = current.modelIndex.get(id) ?? current.embeddingIndex.get(id);
    if (!provider) return next();
    res.json({ id, object: 'model', created: Math.floor(current.loadedAt.getTime() / 1000), owned_by: provider.name });
  });
  return router;
}
