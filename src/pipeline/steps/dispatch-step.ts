import type { ChatRequest } from '../../chat/types.ts';
import type { ProviderConfig } from '../../config/gateway-config.ts';
import { ResponsesReplyFilter } from '../../dlp/responses-reply-filter.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import type { Candidate } from '../../routing/model-router.ts';
import type { JobKind } from '../door.ts';
import { embeddingsOfChat } from '../../embeddings/embeddings-texts.ts';
import type { ChatDispatcher, Dispatch } from '../../queue/chat-dispatcher.ts';
import { dispatchMiss, type Miss } from '../dispatch-miss.ts';
import { AttemptsFailedError, dispatchWithFallbacks } from '../../routing/fallback-dispatch.ts';
import type { Exchange } from '../exchange.ts';
import { DROPPED_PARAMS_HEADER, MODEL_HEADER } from '../gateway-headers.ts';
import { startReplyFacts } from '../reply-facts.ts';
import { screenedBody } from '../screened-body.ts';
import { elapsedMs } from '../request-context.ts';
import { serverTiming } from '../server-timing.ts';
import type { Routing } from './route-step.ts';

/**
 * Gets the reply of a miss, as a job of the exchange's kind (chat,
 * embeddings, or a native Responses body, the last two with the texts DLP screened). The strategy follows the route step: one
 * deployment (an identical request in flight is followed instead of sent
 * again), or the deployments in order until one answers before its first
 * token (not coalesced: which one answers is known only then; a reply is
 * stored in the cache only when the requested model gave it). A native
 * Responses request gives each deployment what it takes: the body, or its
 * translation through the canonical request. A detached
 * request whose earlier run enqueued a job that still runs follows that job,
 * so a restart does not call the provider again.
 */
export async function dispatchStep(
  exchange: Exchange,
  dispatcher: ChatDispatcher,
  routing: Routing | undefined,
): Promise<Dispatch> {
  const resumed = await resume(exchange, dispatcher);
  const dispatch =
    resumed ??
    (exchange.candidates && routing
      ? await dispatchRouted(exchange, dispatcher, routing)
      : await dispatchOne(exchange, dispatcher));
  exchange.detached?.onEnqueued?.();
  return dispatch;
}

async function resume(exchange: Exchange, dispatcher: ChatDispatcher): Promise<Dispatch | undefined> {
  const jobId = exchange.detached?.resumeJobId;
  if (!jobId) return undefined;
  const providers: ProviderConfig[] = exchange.candidates
    ? exchange.candidates.map((c) => c.provider)
    : [exchange.provider as ProviderConfig];
  for (const provider of new Set(providers)) {
    const state = await dispatcher.reclaim(provider.name, jobId);
    if (state === 'withdrawn') return undefined;
    if (state === 'running') {
      startReplyFacts(exchange.context, { streamed: exchange.request.stream, coalesced: false });
      return dispatcher.follow(jobId, provider, exchange.signal);
    }
  }
  return undefined;
}

async function dispatchOne(exchange: Exchange, dispatcher: ChatDispatcher): Promise<Dispatch> {
  const { context, lookup, detached } = exchange;
  const jobId = detached?.jobId();
  if (detached && jobId) await detached.beforeEnqueue(jobId);
  const dispatch = await dispatchMiss(dispatcher, exchange.request, exchange.provider as ProviderConfig, {
    requestId: context.requestId,
    lookup,
    admission: exchange.admission as NonNullable<Exchange['admission']>,
    signal: exchange.signal,
    priority: exchange.priority,
    span: context.span,
    ...jobOf(exchange),
    ...(detached
      ? {
          jobId,
          waitMs: detached.waitMs,
          requireWorker: false,
          detached: true,
          ...(detached.record ? { record: detached.record } : {}),
          ...(detached.trace ? { trace: detached.trace } : {}),
        }
      : {}),
  });
  startReplyFacts(context, { streamed: exchange.request.stream, coalesced: lookup?.coalesced ?? false });
  return dispatch;
}

type ResponsesKind = Extract<JobKind, { type: 'responses' }>;

/** What a job other than chat carries: built from the exchange's texts as DLP left them. */
function jobOf(exchange: Exchange): Pick<Miss, 'embeddings' | 'responses'> {
  const kind = exchange.kind;
  if (kind?.type === 'embeddings') return { embeddings: embeddingsOfChat(exchange.request, kind.shape) };
  if (kind?.type === 'responses') return { responses: screenedBody(exchange) };
  return {};
}

async function dispatchRouted(exchange: Exchange, dispatcher: ChatDispatcher, routing: Routing): Promise<Dispatch> {
  const { context, detached, lookup } = exchange;
  const requested = exchange.request.model;
  // Every attempt's job carries this span's context to its worker.
  const publish = context.span.child('queue publish', {
    kind: 'producer',
    attributes: { 'gateway.provider': exchange.provider?.name ?? '' },
  });
  const trace = publish.carrier() ?? detached?.trace;
  let answered;
  try {
    answered = await dispatchWithFallbacks(exchange.candidates ?? [], exchange.request, {
      dispatcher,
      cooldowns: routing.cooldowns,
      admission: exchange.admission as NonNullable<Exchange['admission']>,
      requestId: context.requestId,
      signal: exchange.signal,
      priority: exchange.priority,
      ...(trace ? { trace } : {}),
      ...(detached
        ? {
            detached: {
              jobId: detached.jobId,
              beforeEnqueue: detached.beforeEnqueue,
              waitMs: detached.waitMs,
              ...(detached.record ? { record: detached.record } : {}),
            },
          }
        : {}),
      ...(exchange.kind?.type === 'responses'
        ? { jobFor: (candidate: Candidate) => responsesJob(exchange, candidate) }
        : {}),
    });
  } catch (err) {
    if (err instanceof AttemptsFailedError) {
      context.attempts = [...err.attempts];
      exchange.header('Server-Timing', serverTiming({ total: elapsedMs(context), attempts: err.attempts }));
      throw err.failure;
    }
    throw err;
  } finally {
    publish.end();
  }
  const { candidate, routed, dispatch, attempts } = answered;
  const translated = exchange.kind?.type === 'responses' && !takesResponses(candidate.provider);
  if (exchange.kind?.type === 'responses') answeredResponses(exchange, exchange.kind, candidate, routed.request);
  context.model = candidate.model;
  context.provider = candidate.provider.name;
  context.attempts = attempts;
  exchange.header(MODEL_HEADER, candidate.model);
  if (routed.dropped.length > 0) exchange.header(DROPPED_PARAMS_HEADER, routed.dropped.join(', '));
  if (candidate.model !== requested) routing.onFallback?.(requested, candidate.model);
  startReplyFacts(context, { streamed: exchange.request.stream, coalesced: false });
  // Another model's answer is not stored under this request, nor a translated one under a native request's key.
  return lookup && candidate.model === requested && !translated
    ? { ...dispatch, entries: lookup.track(dispatch.entries) }
    : dispatch;
}

/** Whether a deployment takes the Responses API natively (`responses_api: native`, which only the OpenAI format has). */
function takesResponses(provider: ProviderConfig): boolean {
  return provider.responses_api === 'native' && provider.format === 'openai';
}

/** A native Responses request's job on one deployment: its body, or its translation through the canonical request. */
function responsesJob(
  exchange: Exchange,
  candidate: Candidate,
): { request: ChatRequest; responses?: Record<string, unknown> } {
  const kind = exchange.kind as ResponsesKind;
  const body = screenedBody(exchange);
  if (takesResponses(candidate.provider)) return { request: exchange.request, responses: body };
  if (!kind.fallback)
    throw new InvalidRequestError(`${candidate.provider.name} does not take the Responses API natively.`);
  return { request: kind.fallback.translate(body, candidate.provider.format) };
}

/**
 * Tells the door which deployment answers a native Responses request. A
 * translated one's reply is in the chat shape: the request becomes the one
 * it was sent (what a stored response keeps), and DLP reads the reply as a
 * chat reply.
 */
function answeredResponses(exchange: Exchange, kind: ResponsesKind, candidate: Candidate, sent: ChatRequest): void {
  const by = { provider: candidate.provider.name, model: candidate.model };
  if (takesResponses(candidate.provider)) {
    kind.fallback?.answered(by);
    return;
  }
  kind.fallback?.answered({ ...by, translated: sent });
  exchange.request = sent;
  if (exchange.replyFilter instanceof ResponsesReplyFilter) exchange.replyFilter = exchange.replyFilter.chat;
}
