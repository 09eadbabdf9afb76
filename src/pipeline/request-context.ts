import type { Principal } from '../auth/principal.ts';
import type { DlpFindingCounts } from '../dlp/dlp-guard.ts';
import type { Usage } from '../chat/types.ts';
import type { ReplyFacts } from './reply-facts.ts';
import type { Admission } from '../ratelimit/admission.ts';
import type { CacheStatus } from '../cache/response-cache.ts';
import type { AttemptRecord } from '../routing/fallback-dispatch.ts';
import { NOOP_SPAN, type TraceSpan } from '../observability/tracing/trace-span.ts';

/**
 * Everything one request's handlers learn about it, in one typed object
 * instead of loose `res.locals` keys. The HTTP middleware fill in who and
 * when, the pipeline's steps what was asked and how it was answered; the
 * request observer reads it once the response is over. A batch line has one
 * of its own, never seen by HTTP. It holds no secret: the caller is a
 * {@link Principal} (owner, masked key), never the key.
 */
export interface RequestContext {
  readonly requestId: string;
  /** `performance.now()` when the request arrived. */
  readonly startedAt: number;
  /** The request's server span; {@link NOOP_SPAN} when tracing is off. Handlers open their spans under it. */
  span: TraceSpan;
  principal?: Principal;
  /** The rate-limit decision in flight (see `middleware/rate-limit.ts`). */
  rateLimit?: Promise<Admission>;
  model?: string;
  provider?: string;
  cacheStatus?: CacheStatus;
  /** Findings per entity type (counts only). */
  dlpFindings?: DlpFindingCounts;
  /** Deployments tried, when the model is routed (several deployments or fallbacks); `model` and `provider` are then the ones that answered. */
  attempts?: AttemptRecord[];
  /** Present once the request was dispatched to a provider queue. */
  reply?: ReplyFacts;
  /** The usage of a reply served from the gateway's cache (what it would have cost upstream; nothing is charged). */
  cacheHitUsage?: Usage;
  /** The code of the error the response carried. */
  errorCode?: string;
}

/** A new context, started now. */
export function newContext(requestId: string): RequestContext {
  return { requestId, startedAt: performance.now(), span: NOOP_SPAN };
}

/** Where an HTTP response keeps its request's context (Express' `res.locals`). */
interface HasLocals {
  locals: Record<string, unknown>;
}

/** Starts the context of an HTTP request (the request-id middleware, first in the chain). */
export function openContext(res: HasLocals, requestId: string): RequestContext {
  const context = newContext(requestId);
  res.locals.ctx = context;
  return context;
}

/** An HTTP request's context. A response that never met the request-id middleware is a wiring bug, not an anonymous request. */
export function contextOf(res: HasLocals): RequestContext {
  const context = res.locals.ctx as RequestContext | undefined;
  if (!context)
    throw new Error('contextOf: this response has no request context (the request-id middleware did not run)');
  return context;
}

/** Milliseconds since the request arrived. */
export function elapsedMs(context: RequestContext): number {
  return performance.now() - context.startedAt;
}
