import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { DirectRoute } from '../direct-routes.ts';
import { SEMANTIC_CACHE_HEADER, semanticControlOf, type SemanticControl } from '../../cache/cache-control.ts';
import type { CacheLookup, ResponseCache } from '../../cache/response-cache.ts';
import { chatCompletionRequestSchema, describeIssues, normalizeChatRequest } from '../../chat/request-schema.ts';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import type { ChatRequest } from '../../chat/types.ts';
import type { ProviderConfig } from '../../config/gateway-config.ts';
import { InvalidRequestError, ProviderTimeoutError } from '../../errors/catalog.ts';
import type { Logger } from '../../observability/logger.ts';
import { noteReplyEntry, startReplyFacts } from '../../observability/reply-facts.ts';
import type { ChatDispatcher, Dispatch } from '../../queue/chat-dispatcher.ts';
import { priorityFor } from '../../queue/priorities.ts';
import type { Admission } from '../../ratelimit/admission.ts';
import { decodeError } from '../../streams/protocol.ts';
import { StreamAbortedError, StreamDeadlineError } from '../../streams/stream-reader.ts';
import { cacheHeaders, sendCachedReply } from '../cached-reply.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { toGatewayError } from '../error-handler.ts';
import { sendJsonText } from '../json-reply.ts';
import { contextOf, elapsedMs, type RequestContext } from '../request-context.ts';
import { serverTiming } from '../server-timing.ts';
import { endSse, failSse, startSse, writeSseData } from '../sse.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';
import type { Principal } from '../../auth/principal.ts';

/** Dependencies of the chat completions route. */
export interface ChatCompletionsDeps {
  dispatcher: ChatDispatcher;
  logger: Logger;
  maxBodyBytes: number;
  /** Exact and semantic response caches (src/cache); without them every request goes to the provider. */
  cache?: ResponseCache;
  /** DLP (src/dlp): redacts, blocks or counts personal data and secrets; without it nothing is scanned. */
  dlp?: DlpGuard;
  /** Per-key models, token limits, budgets and usage (src/usage); without it keys are only rate limited. */
  governor?: KeyGovernor;
}

/** Names the parameters a provider configured with `drop_unsupported_params` did not receive. */
export const DROPPED_PARAMS_HEADER = 'X-Gateway-Dropped-Params';

/** Validates a body into a {@link ChatRequest}; 400 naming the bad fields otherwise. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
  }
  const parsed = chatCompletionRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeIssues(parsed.error)}`);
  return normalizeChatRequest(parsed.data);
}

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
    const routed = deps.dispatcher.route(parseChatRequest(req.body));
    const provider = routed.provider;
    if (routed.dropped.length > 0) res.setHeader(DROPPED_PARAMS_HEADER, routed.dropped.join(', '));
    // Every text is scanned before the cache, the queue and the provider see it; block mode throws pii_detected.
    const request = deps.dlp ? deps.dlp.screen(routed.request, context) : routed.request;
    context.model = request.model;
    context.provider = provider.name;
    const principal = context.principal;
    deps.governor?.checkModel(principal, request.model);

    // Keys hash the request as it stands here (redacted); the rate-limit decision settles with the first cache read.
    const owner = principal?.owner ?? 'anonymous';
    const gate = settleRateLimit(res);
    const lookup = deps.cache ? await deps.cache.lookup(request, owner, req.headers['cache-control'], gate, semanticControl(req, provider, principal)) : undefined;
    const admission = lookup?.admission ?? (await gate);
    context.cacheStatus = lookup?.status ?? 'BYPASS';
    if (lookup?.hit) return sendCachedReply(res, request, lookup, elapsedMs(context));
    if (lookup) res.set(cacheHeaders(lookup));
    // Token limits and budgets count what goes upstream only: a cache hit above costs nothing.
    const call = await deps.governor?.admit(principal, request);
    try {
      await answerMiss(res, { deps, request, provider, lookup, admission });
    } finally {
      if (call) void deps.governor!.finish(call, callOutcome(res, request.model));
    }
  };
  return { method: 'POST', path: '/v1/chat/completions', handler };
}

/** What the reply facts say about the call, for the governor. */
function callOutcome(res: Response, model: string) {
  const facts = contextOf(res).reply;
  const reported = facts?.promptTokens !== undefined || facts?.completionTokens !== undefined;
  return {
    model,
    usage: reported ? { promptTokens: facts?.promptTokens ?? 0, completionTokens: facts?.completionTokens ?? 0 } : undefined,
    // Never dispatched, or ended in an error entry: nothing was produced upstream to charge.
    failed: !facts || facts.terminal === 'error',
    coalesced: facts?.coalesced ?? false,
  };
}

interface Miss {
  deps: ChatCompletionsDeps;
  request: ChatRequest;
  provider: ProviderConfig;
  lookup: CacheLookup | undefined;
  admission: Admission;
}

/** Dispatches a request the cache did not answer and relays the reply. */
async function answerMiss(res: Response, { deps, request, provider, lookup, admission }: Miss): Promise<void> {
  const context = contextOf(res);
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const dispatch = await dispatchMiss(deps.dispatcher, request, provider, { context, lookup, admission, signal: abort.signal });
  startReplyFacts(res, { streamed: request.stream, coalesced: lookup?.coalesced ?? false }); // observability: timings and tokens
  // A coalesced job is cancelled only when nobody else reads it.
  const cancel = () => {
    (lookup ? lookup.mayCancel() : Promise.resolve(true)).then((ok) => (ok ? deps.dispatcher.cancel(dispatch.jobId, dispatch.provider.name) : undefined)).catch(() => {});
  };
  try {
    if (request.stream) await replyStreamed(res, dispatch, deps, cancel);
    else await replyOnce(res, dispatch);
  } catch (err) {
    if (err instanceof StreamAbortedError || err instanceof StreamDeadlineError) cancel();
    if (err instanceof StreamAbortedError) return;
    if (err instanceof StreamDeadlineError) {
      throw new ProviderTimeoutError(`${provider.name} did not answer within the gateway's deadline.`);
    }
    throw err;
  }
}

/** The semantic-cache control of this request: the provider's and the key's switches, then the client's `X-Semantic-Cache`. */
function semanticControl(req: Request, provider: ProviderConfig, principal: Principal | undefined): SemanticControl {
  if (!provider.semantic_cache || principal?.policy?.semantic_cache === false) return { semantic: 'off' };
  const control = semanticControlOf(req.headers[SEMANTIC_CACHE_HEADER]);
  if ('error' in control) throw new InvalidRequestError(control.error);
  return control;
}

/**
 * Gets the reply of a miss: follows an identical request in flight, or
 * enqueues this one (its reply passes through the cache, which stores it once
 * complete). The place in the queue is taken in the same round trip as the
 * claim, so a full queue or a provider without workers costs no extra wait;
 * a follower gives its place back.
 */
async function dispatchMiss(
  dispatcher: ChatDispatcher,
  request: ChatRequest,
  provider: ProviderConfig,
  miss: { context: RequestContext; lookup: CacheLookup | undefined; admission: Admission; signal: AbortSignal },
): Promise<Dispatch> {
  const { lookup, signal } = miss;
  const jobId = randomUUID();
  const reserving = dispatcher.reserve(provider, miss.admission, { jobId });
  // Settled below; a follower does not need it, and a refusal must not go unhandled meanwhile.
  reserving.catch(() => {});
  const claim = lookup ? await lookup.claim(provider, jobId) : undefined;
  if (claim?.role === 'follower') {
    reserving.then((place) => dispatcher.releasePlace(place), () => {});
    return dispatcher.follow(claim.jobId, provider, signal);
  }
  let dispatch: Dispatch;
  try {
    const place = await reserving;
    dispatch = await dispatcher.dispatch(request, provider, place, { requestId: miss.context.requestId, signal, priority: priorityFor(request.service_tier) });
  } catch (err) {
    await lookup?.leaderFailed(err);
    throw err;
  }
  return lookup ? { ...dispatch, entries: lookup.track(dispatch.entries) } : dispatch;
}

async function replyOnce(res: Response, dispatch: Dispatch): Promise<void> {
  for await (const entry of dispatch.entries) {
    noteReplyEntry(res, entry);
    if (entry.t === 'error') throw decodeError(entry);
    if (entry.t === 'result') {
      sendJsonText(res, 200, entry.d, { 'Server-Timing': serverTiming({ queue: entry.q, upstream: entry.u, total: elapsedMs(contextOf(res)) }) });
      return;
    }
  }
}

async function replyStreamed(res: Response, dispatch: Dispatch, deps: ChatCompletionsDeps, cancel: () => void): Promise<void> {
  let started = false;
  try {
    for await (const entry of dispatch.entries) {
      noteReplyEntry(res, entry);
      if (entry.t === 'error') {
        if (!started) throw decodeError(entry);
        failSse(res, decodeError(entry));
        return;
      }
      if (!started) {
        started = true;
        startSse(res, { 'Server-Timing': serverTiming({ queue: entry.q, upstream: entry.u, total: elapsedMs(contextOf(res)) }) });
      }
      if (entry.t === 'chunk') writeSseData(res, entry.d);
      else if (entry.t === 'end') {
        endSse(res);
        return;
      }
    }
  } catch (err) {
    if (!started || err instanceof StreamAbortedError) throw err;
    const gatewayError =
      err instanceof StreamDeadlineError
        ? new ProviderTimeoutError(`${dispatch.provider.name} stopped sending tokens.`)
        : toGatewayError(err, deps.maxBodyBytes);
    if (err instanceof StreamDeadlineError) cancel();
    failSse(res, gatewayError);
  }
}
