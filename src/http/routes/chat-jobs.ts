import { Router, type Request, type Response } from 'express';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import type { AsyncJobStore } from '../../queue/async-jobs.ts';
import type { ChatDispatcher } from '../../queue/chat-dispatcher.ts';
import { PRIORITIES } from '../../queue/priorities.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { contextOf } from '../request-context.ts';
import { parseChatRequest } from '../../chat/request-schema.ts';
import { DROPPED_PARAMS_HEADER } from './chat-completions.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';

/** Dependencies of the asynchronous jobs routes. */
export interface ChatJobsDeps {
  dispatcher: ChatDispatcher;
  store: AsyncJobStore;
  /** How long a job may wait in its queue, ms. */
  maxWaitMs: number;
  /** DLP, as on the chat route; without it nothing is scanned. */
  dlp?: DlpGuard;
  /**
   * Per-key models, token limits and budgets, as on the chat route. A job's
   * reply is read by its poller, not this route, so it is charged its
   * admission estimate. Default: keys are only rate limited.
   */
  governor?: KeyGovernor;
}

/**
 * Asynchronous chat completions for batch clients, modelled on OpenAI's
 * background responses:
 *
 * - `POST /v1/chat/completions/jobs` — body of a chat completion (not streamed);
 *   202 with the job (`status: "queued"`) at once.
 * - `GET /v1/chat/completions/jobs/{id}` — status, and `result` once completed.
 * - `POST /v1/chat/completions/jobs/{id}/cancel` — cancels a queued or running job.
 * - `DELETE /v1/chat/completions/jobs/{id}` — forgets the job and its result.
 *
 * Jobs run at batch priority, behind every interactive request.
 */
export function chatJobsRouter(deps: ChatJobsDeps): Router {
  const router = Router();
  const owner = (res: Response) => contextOf(res).principal?.owner ?? 'anonymous';

  router.post('/v1/chat/completions/jobs', async (req: Request, res: Response) => {
    const parsed = parseChatRequest(req.body);
    if (parsed.stream) throw new InvalidRequestError('stream: asynchronous jobs cannot be streamed; poll the job for its result.');
    const context = contextOf(res);
    const routed = deps.dispatcher.route(parsed);
    const provider = routed.provider;
    if (routed.dropped.length > 0) res.setHeader(DROPPED_PARAMS_HEADER, routed.dropped.join(', '));
    const request = deps.dlp ? deps.dlp.screen(routed.request, context) : routed.request;
    context.model = request.model;
    context.provider = provider.name;
    deps.governor?.checkModel(context.principal, request.model);
    // Routes mounted here run after the rate-limit decision; this only picks up its proof.
    const admission = await settleRateLimit(res);
    const call = await deps.governor?.admit(context.principal, request);
    let failed = true;
    const id = deps.store.newId(owner(res));
    // The worker's spans join this request's trace, though it ends with the 202.
    const trace = context.span.carrier();
    try {
      const job = await deps.store.create(id, owner(res), request.model);
      await deps.dispatcher.submit(request, provider, {
        ...(trace ? { trace } : {}),
        requestId: context.requestId,
        jobId: id,
        admission,
        record: { key: deps.store.key(id), ttlSeconds: deps.store.ttlSeconds },
        maxWaitMs: deps.maxWaitMs,
        priority: PRIORITIES.batch,
      });
      failed = false;
      res.status(202).setHeader('Location', `/v1/chat/completions/jobs/${id}`).json(job);
    } catch (err) {
      // Refused (no worker, queue full) or not enqueued: no record may stay `queued` for a job that does not exist.
      await deps.store.discard(id).catch(() => {});
      throw err;
    } finally {
      void deps.governor?.finish(call, { model: request.model, failed, coalesced: false });
    }
  });

  router.get('/v1/chat/completions/jobs/:id', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.get(req.params.id, owner(res)));
  });

  router.post('/v1/chat/completions/jobs/:id/cancel', async (req: Request<{ id: string }>, res: Response) => {
    const job = await deps.store.cancel(req.params.id, owner(res));
    await deps.dispatcher.cancel(req.params.id, deps.dispatcher.providerOf(job.model));
    res.json(job);
  });

  router.delete('/v1/chat/completions/jobs/:id', async (req: Request<{ id: string }>, res: Response) => {
    const job = await deps.store.delete(req.params.id, owner(res));
    await deps.dispatcher.cancel(req.params.id, deps.dispatcher.providerOf(job.model));
    res.json({ id: req.params.id, object: 'chat.completion.job.deleted', deleted: true });
  });

  return router;
}
