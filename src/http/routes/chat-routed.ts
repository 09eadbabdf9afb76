import type { Request, Response } from 'express';
import type { ResponseCache } from '../../cache/response-cache.ts';
import type { ChatRequest } from '../../chat/types.ts';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import { startReplyFacts } from '../../observability/reply-facts.ts';
import type { ChatDispatcher } from '../../queue/chat-dispatcher.ts';
import { priorityFor } from '../../queue/priorities.ts';
import type { CooldownView } from '../../routing/cooldown-view.ts';
import { AttemptsFailedError, dispatchWithFallbacks, type AnsweredDispatch } from '../../routing/fallback-dispatch.ts';
import { FALLBACKS_HEADER, type ModelRouter } from '../../routing/model-router.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';
import { StreamAbortedError } from '../../streams/stream-reader.ts';
import { contextOf, elapsedMs } from '../request-context.ts';
import { serverTiming } from '../server-timing.ts';
import { abortOnClose, cacheStep, dlpStep, relayed } from './chat-cache-step.ts';
import { answerDispatch } from './chat-reply.ts';
import { governed } from './chat-governance.ts';

/** Names the model that answered: the requested one, or a fallback. */
export const MODEL_HEADER = 'X-Gateway-Model';

/** Routing of the chat route: deployments, cooldowns and fallbacks (config.yaml `routing`). */
export interface ChatRouting {
  router: ModelRouter;
  cooldowns: CooldownView;
  /** Called when a fallback model answered instead of the requested one (a metric). */
  onFallback?: (requested: string, answered: string) => void;
}

/** What {@link replyRouted} needs. */
export interface RoutedReplyDeps {
  dispatcher: ChatDispatcher;
  routing: ChatRouting;
  maxBodyBytes: number;
  cache?: ResponseCache | undefined;
  dlp?: DlpGuard | undefined;
  /** Sets `X-Gateway-Dropped-Params`. */
  droppedHeader: string;
  /** Per-key models, token limits, budgets and usage. */
  governor?: KeyGovernor | undefined;
}

/**
 * The chat pipeline for a routed model: screen, answer from the cache or
 * take the deployments in the router's order until one answers before its
 * first token. Identical requests are not coalesced here (the deployment
 * that answers is known only once one does); a reply is stored in the cache
 * only when the requested model gave it.
 */
export async function replyRouted(req: Request, res: Response, request: ChatRequest, deps: RoutedReplyDeps): Promise<void> {
  const context = contextOf(res);
  const candidates = deps.routing.router.plan(request.model, context.principal, req.headers[FALLBACKS_HEADER]);
  const primary = candidates[0] as (typeof candidates)[number];
  const { request: screened, reply } = deps.dlp ? await dlpStep(deps.dlp, request, context) : { request, reply: undefined };
  context.model = request.model;
  context.provider = primary.provider.name;
  deps.governor?.checkModel(context.principal, request.model);

  const miss = await cacheStep(req, res, screened, primary.provider, deps.cache, reply);
  if (!miss) return;
  const { lookup, admission } = miss;
  context.span.set('gateway.model', request.model);
  // The key's token limit and budget cover every attempt; the model that answered is charged.
  await governed(deps.governor, res, request, async () => {
    // Every attempt's job carries this span's context to its worker.
    const publish = context.span.child('queue publish', { kind: 'producer', attributes: { 'gateway.provider': primary.provider.name } });
    const trace = publish.carrier();
    let answered: AnsweredDispatch;
    try {
      answered = await dispatchWithFallbacks(candidates, screened, {
        dispatcher: deps.dispatcher,
        cooldowns: deps.routing.cooldowns,
        admission,
        requestId: context.requestId,
        signal: abortOnClose(res),
        priority: priorityFor(request.service_tier),
        ...(trace ? { trace } : {}),
      });
    } catch (err) {
      publish.end();
      if (err instanceof StreamAbortedError) return;
      if (!(err instanceof AttemptsFailedError)) throw err;
      context.attempts = [...err.attempts];
      res.setHeader('Server-Timing', serverTiming({ total: elapsedMs(context), attempts: err.attempts }));
      throw err.failure;
    }
    publish.end();
    const { candidate, routed, dispatch, attempts } = answered;
    context.model = candidate.model;
    context.provider = candidate.provider.name;
    context.attempts = attempts;
    res.setHeader(MODEL_HEADER, candidate.model);
    if (routed.dropped.length > 0) res.setHeader(deps.droppedHeader, routed.dropped.join(', '));
    if (candidate.model !== request.model) deps.routing.onFallback?.(request.model, candidate.model);
    startReplyFacts(res, { streamed: request.stream, coalesced: false });
    // Another model's answer is not stored under this request.
    const entries = lookup && candidate.model === request.model ? lookup.track(dispatch.entries) : dispatch.entries;
    await relayed(context, request.stream, answerDispatch(res, { ...dispatch, entries }, { streamed: request.stream, lookup, dispatcher: deps.dispatcher, maxBodyBytes: deps.maxBodyBytes, reply }));
  });
}
