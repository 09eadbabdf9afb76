import { cachedReplyEntries } from '../cache/cached-reply.ts';
import type { CacheLookup } from '../cache/response-cache.ts';
import type { ChatRequest } from '../chat/types.ts';
import type { ProviderConfig } from '../config/gateway-config.ts';
import { errorCodeOf, NOOP_SPAN, type TraceCarrier, type TraceSpan } from '../observability/tracing/trace-span.ts';
import type { Admission } from '../ratelimit/admission.ts';
import type { ChatDispatcher, Dispatch, DispatchContext } from '../queue/chat-dispatcher.ts';

/** A request the caches did not answer, and how to queue it. */
export interface Miss {
  requestId: string;
  lookup: CacheLookup | undefined;
  admission: Admission;
  signal: AbortSignal;
  priority: number;
  /** @defaultValue the dispatcher's {@link ChatDispatcher.newJobId} */
  jobId?: string;
  /** Longest wait in the queue, ms. @defaultValue the provider's queue_timeout_ms */
  waitMs?: number;
  /** Refuse at once without a live worker. @defaultValue true */
  requireWorker?: boolean;
  /** See {@link DispatchContext.detached}. @defaultValue false */
  detached?: boolean;
  /** The request's span: the job carries a child's context to the worker. @defaultValue none (not traced) */
  span?: TraceSpan;
  /** Trace context to carry when there is no span (a job started after its request ended). @defaultValue none */
  trace?: TraceCarrier;
  /** See {@link DispatchContext.record}. */
  record?: DispatchContext['record'];
  /** An embeddings job ({@link DispatchContext.embeddings}). @defaultValue none: a chat job */
  embeddings?: DispatchContext['embeddings'];
  /** A native Responses job ({@link DispatchContext.responses}). @defaultValue none: a chat job */
  responses?: DispatchContext['responses'];
}

/**
 * Gets the reply of a miss (the chat route's and every batch line's):
 * follows an identical request in flight, replays the reply an identical
 * request stored since the lookup, or enqueues this one (its reply passes
 * through the cache, which stores it once complete). The place in the
 * queue is taken in the same round trip as the claim, so a full queue or a
 * provider without workers costs no extra wait; a follower gives its place back.
 */
export async function dispatchMiss(
  dispatcher: ChatDispatcher,
  request: ChatRequest,
  provider: ProviderConfig,
  miss: Miss,
): Promise<Dispatch> {
  const { lookup, signal } = miss;
  const jobId = miss.jobId ?? dispatcher.newJobId();
  const reserving = dispatcher.reserve(provider, miss.admission, {
    jobId,
    ...(miss.waitMs !== undefined ? { waitMs: miss.waitMs } : {}),
    ...(miss.requireWorker !== undefined ? { requireWorker: miss.requireWorker } : {}),
    ...(miss.detached ? { background: true } : {}),
  });
  // Settled below; a follower does not need it, and a refusal must not go unhandled meanwhile.
  reserving.catch(() => {});
  const claim = lookup ? await lookup.claim(provider, jobId) : undefined;
  const span = miss.span ?? NOOP_SPAN;
  if (claim?.role === 'stored' || claim?.role === 'follower') {
    // Another request's job answers, or the reply it stored: this one takes no place in the queue.
    reserving.then(
      (place) => dispatcher.releasePlace(place),
      () => {},
    );
    if (claim.role === 'follower') {
      span.set('gateway.coalesced', true);
      return dispatcher.follow(claim.jobId, provider, signal);
    }
    span.set('gateway.cache.stored_since_lookup', true);
    return {
      jobId,
      provider,
      enqueuedAt: Date.now(),
      entries: cachedReplyEntries(claim.stored.completion, request.stream, request.include_usage),
    };
  }
  // The job carries this span's context: the worker's spans continue the request's trace under it.
  const publish = span.child('queue publish', { kind: 'producer', attributes: { 'gateway.provider': provider.name } });
  const trace = publish.carrier() ?? miss.trace;
  let dispatch: Dispatch;
  try {
    const place = await reserving;
    dispatch = await dispatcher.dispatch(request, provider, place, {
      requestId: miss.requestId,
      signal,
      priority: miss.priority,
      ...(miss.waitMs !== undefined ? { waitMs: miss.waitMs } : {}),
      ...(miss.detached !== undefined ? { detached: miss.detached } : {}),
      ...(trace ? { trace } : {}),
      ...(lookup ? { otherReaders: () => lookup.otherReaders() } : {}),
      ...(miss.record ? { record: miss.record } : {}),
      ...(miss.embeddings ? { embeddings: miss.embeddings } : {}),
      ...(miss.responses ? { responses: miss.responses } : {}),
    });
    publish.end();
  } catch (err) {
    publish.fail(errorCodeOf(err));
    publish.end();
    await lookup?.leaderFailed(err);
    throw err;
  }
  return lookup ? { ...dispatch, entries: lookup.track(dispatch.entries) } : dispatch;
}
