import type { Request, Response } from 'express';
import type { DirectRoute } from '../direct-routes.ts';
import type { ResponseCache } from '../../cache/response-cache.ts';
import { parseChatRequest } from '../../chat/request-schema.ts';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import type { Logger } from '../../observability/logger.ts';
import { startReplyFacts } from '../../observability/reply-facts.ts';
import type { ChatDispatcher } from '../../queue/chat-dispatcher.ts';
import { dispatchMiss } from '../../queue/dispatch-miss.ts';
import { priorityFor } from '../../queue/priorities.ts';
import type { Admission } from '../../ratelimit/admission.ts';
import { FALLBACKS_HEADER } from '../../routing/model-router.ts';
import { contextOf } from '../request-context.ts';
import { abortOnClose, cacheStep, dlpStep, relayed } from './chat-cache-step.ts';
import { answerDispatch } from './chat-reply.ts';
import { MODEL_HEADER, replyRouted, type ChatRouting } from './chat-routed.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';
import { governed } from './chat-governance.ts';

/** Dependencies of the chat completions route. */
export interface ChatCompletionsDeps {
  dispatcher: ChatDispatcher;
  logger: Logger;
  maxBodyBytes: number;
  /** Exact and semantic response caches (src/cache); without them every request goes to the provider. */
  cache?: ResponseCache;
  /** DLP (src/dlp): redacts, blocks or counts personal data and secrets; without it nothing is scanned. */
  dlp?: DlpGuard;
  /** Deployments, cooldowns and fallbacks; without it every model goes to its first provider entry. */
  routing?: ChatRouting;
  /** Per-key models, token limits, budgets and usage (src/usage); without it keys are only rate limited. */
  governor?: KeyGovernor;
}

/** Names the parameters a provider configured with `drop_unsupported_params` did not receive. */
export const DROPPED_PARAMS_HEADER = 'X-Gateway-Dropped-Params';

/**
 * `POST /v1/chat/completions`, one pipeline: validate and route, screen
 * (DLP), then the cache answers or declines while the rate-limit decision
 * settles, then the dispatcher enqueues (or follows an identical request in
 * flight) and the reply stream is answered as JSON or SSE. Nothing before the
 * {@link Admission} has an effect beyond this process.
 */
export function chatCompletionsRoute(deps: ChatCompletionsDeps): DirectRoute {
  const handler = async (req: Request, res: Response): Promise<void> => {
    const context = contextOf(res);
    const parsed = parseChatRequest(req.body);
    // One set lookup decides: models without deployments or fallbacks keep the path below unchanged.
    if (deps.routing?.router.isRouted(parsed.model, req.headers[FALLBACKS_HEADER])) {
      return replyRouted(req, res, parsed, { ...deps, routing: deps.routing, droppedHeader: DROPPED_PARAMS_HEADER });
    }
    const routed = deps.dispatcher.route(parsed);
    const provider = routed.provider;
    if (routed.dropped.length > 0) res.setHeader(DROPPED_PARAMS_HEADER, routed.dropped.join(', '));
    // Every text is scanned before the cache, the queue and the provider see it; block mode throws pii_detected.
    // `reply` is set only with DLP_SCAN_REPLIES or DLP_RESTORE: otherwise replies are relayed untouched.
    const { request, reply } = deps.dlp ? await dlpStep(deps.dlp, routed.request, context) : { request: routed.request, reply: undefined };
    context.model = request.model;
    context.provider = provider.name;
    res.setHeader(MODEL_HEADER, request.model);
    context.span.set('gateway.model', request.model);
    context.span.set('gateway.provider', provider.name);
    deps.governor?.checkModel(context.principal, request.model);

    const miss = await cacheStep(req, res, request, provider, deps.cache, reply);
    if (!miss) return;
    const { lookup, admission } = miss;
    await governed(deps.governor, res, request, async () => {
      const dispatch = await dispatchMiss(deps.dispatcher, request, provider, { requestId: context.requestId, lookup, admission, signal: abortOnClose(res), priority: priorityFor(request.service_tier), span: context.span });
      startReplyFacts(res, { streamed: request.stream, coalesced: lookup?.coalesced ?? false }); // observability: timings and tokens
      await relayed(context, request.stream, answerDispatch(res, dispatch, { streamed: request.stream, lookup, dispatcher: deps.dispatcher, maxBodyBytes: deps.maxBodyBytes, reply }));
    });
  };
  return { method: 'POST', path: '/v1/chat/completions', handler };
}
