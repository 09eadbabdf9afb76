import type { TraceCarrier } from '../../observability/tracing/trace-span.ts';
import { Router, type Request, type Response } from 'express';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import type { AsyncJobStore } from '../../batches/async-jobs.ts';
import type { ChatDispatcher } from '../../queue/chat-dispatcher.ts';
import { PRIORITIES } from '../../queue/priorities.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { contextOf } from '../../pipeline/request-context.ts';
import { parseChatRequest } from '../../chat/request-schema.ts';
import { DROPPED_PARAMS_HEADER } from '../../pipeline/gateway-headers.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';

/** Dependencies of the asynchronous jobs routes. */
export interface ChatJobsDeps {
  dispatcher: ChatDispatcher;
  store: AsyncJobStore;
  /** Starts a stored job now rather than at the runner's next poll, its worker spans under `trace`; resolves once it is queued (`BatchRunner.startNow`). */
  start: (id: string, trace?: TraceCarrier) => Promise<void>;
  /** DLP, as on the chat route; without it nothing is scanned. */
  dlp?: DlpGuard;
  /**
   * Per-key models, token limits and budgets: a job the key could not run
   * now is refused at once; it is charged when it runs (the batch runner runs
   * it through the pipeline). @defaultValue keys are only rate limited
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
 * A job is stored in the key-store database and run by the batch runner
 * (a one-line batch), so it survives Redis and process restarts. Jobs run
 * at batch priority, behind every interactive request.
 */
export function chatJobsRouter(deps: ChatJobsDeps): Router {
  const router = Router();
  const owner = (res: Response) => contextOf(res).principal?.owner ?? 'anonymous';

  router.post('/v1/chat/completions/jobs', async (req: Request, res: Response) => {
    const parsed = parseChatRequest(req.body);
    if (parsed.stream)
      throw new InvalidRequestError('stream: asynchronous jobs cannot be streamed; poll the job for its result.');
    const context = contextOf(res);
    const principal = context.principal;
    // Refused now rather than when it runs: an unknown model, a model the key may not use.
    const routed = deps.dispatcher.route(parsed);
    if (routed.dropped.length > 0) res.setHeader(DROPPED_PARAMS_HEADER, routed.dropped.join(', '));
    deps.governor?.checkModel(principal, parsed.model);
    // Stored redacted: the database never holds what DLP would not send upstream.
    const request = deps.dlp ? await deps.dlp.screenAsync(parsed, context) : parsed;
    context.model = request.model;
    context.provider = routed.provider.name;
    // Routes mounted here run after the rate-limit decision: only an admitted request is stored.
    await settleRateLimit(res);
    // A key over its token limit or budget is refused now; the job is charged when it runs, through the pipeline.
    const call = await deps.governor?.admit(principal, request);
    if (call) void deps.governor?.finish(call, { model: request.model, failed: true, coalesced: false });
    const id = deps.store.newId(owner(res));
    // Stored as a request body (include_usage is internal, and false for a job that is not streamed).
    const { include_usage: _internal, ...body } = request;
    const job = await deps.store.create(id, owner(res), {
      model: request.model,
      json: JSON.stringify(body),
      priority: PRIORITIES.batch,
      keyId: principal?.keyId,
    });
    // Stored: it runs even if starting it now fails (the runner's next poll takes it). Its worker spans join this request's trace.
    await deps.start(id, context.span.carrier()).catch(() => {});
    res.status(202).setHeader('Location', `/v1/chat/completions/jobs/${id}`).json(job);
  });

  router.get('/v1/chat/completions/jobs/:id', async (req: Request<{ id: string }>, res: Response) => {
    res.json(await deps.store.get(req.params.id, owner(res)));
  });

  router.post('/v1/chat/completions/jobs/:id/cancel', async (req: Request<{ id: string }>, res: Response) => {
    const { job, queued } = await deps.store.cancel(req.params.id, owner(res));
    if (queued) await deps.dispatcher.cancel(queued.jobId, deps.dispatcher.providerOf(queued.model));
    res.json(job);
  });

  router.delete('/v1/chat/completions/jobs/:id', async (req: Request<{ id: string }>, res: Response) => {
    const { queued } = await deps.store.delete(req.params.id, owner(res));
    if (queued) await deps.dispatcher.cancel(queued.jobId, deps.dispatcher.providerOf(queued.model));
    res.json({ id: req.params.id, object: 'chat.completion.job.deleted', deleted: true });
  });

  return router;
}
