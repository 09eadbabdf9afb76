import type { Principal } from '../auth/principal.ts';
import type { CacheLookup } from '../cache/response-cache.ts';
import type { ChatRequest } from '../chat/types.ts';
import type { ProviderConfig } from '../config/gateway-config.ts';
import type { ReplyScreen } from '../dlp/reply-filter.ts';
import type { Dispatch, DispatchContext } from '../queue/chat-dispatcher.ts';
import type { Admission } from '../ratelimit/admission.ts';
import type { Candidate } from '../routing/model-router.ts';
import type { GovernedCall } from '../usage/key-governor.ts';
import type { JobKind } from './door.ts';
import type { RequestContext } from './request-context.ts';

/** What the client asked of the gateway besides the request itself (HTTP headers, for the HTTP doors). */
export interface ExchangeHints {
  /** `X-Gateway-Fallbacks`: fallback models for this request. */
  fallbacks?: string | string[] | undefined;
  /** `Cache-Control`: `no-cache`, `no-store`. */
  cacheControl?: string | string[] | undefined;
  /** `X-Semantic-Cache`: `off`, or a threshold. */
  semantic?: string | string[] | undefined;
}

/**
 * How a detached request (a batch line, an asynchronous job) is queued: its
 * reply may be read by another runner after a restart, so its job id is
 * stored before the job is enqueued, and a job an earlier run enqueued is
 * followed rather than sent again.
 */
export interface DetachedDispatch {
  /** Stores the job id before the job is enqueued; throws when it must not be enqueued any more. */
  beforeEnqueue: (jobId: string) => Promise<void>;
  /** Builds the job id. */
  jobId: () => string;
  /** The job an earlier run enqueued, to follow if it still runs. @defaultValue none */
  resumeJobId?: string | undefined;
  /** Longest wait in the queue, ms. */
  waitMs: number;
  /** An asynchronous job's Redis record. @defaultValue none */
  record?: DispatchContext['record'];
  /** Trace context the job carries to its worker when no span is recording. @defaultValue none */
  trace?: DispatchContext['trace'];
  /** Called once the job is on its queue, or followed. @defaultValue none */
  onEnqueued?: () => void;
}

/**
 * One request on its way through the pipeline: what the entry point gave
 * (the decoded request, the caller, the hints, the rate-limit decision, how
 * to set a reply header) and what each step adds. The steps read and write
 * only this, so every door runs them the same way.
 */
export interface Exchange {
  readonly context: RequestContext;
  /** The request: as decoded, then as routed (dropped parameters) and screened (DLP). */
  request: ChatRequest;
  readonly principal: Principal | undefined;
  readonly hints: ExchangeHints;
  /** The rate-limit decision in flight; enqueuing needs its admission. */
  readonly gate: Promise<Admission>;
  /** Aborted when the reader goes away (a client that left, a batch cancelled). */
  readonly signal: AbortSignal;
  /** BullMQ priority of the job. */
  readonly priority: number;
  /** Sets a gateway header of the reply (ignored where there is no HTTP reply). */
  readonly header: (name: string, value: string) => void;
  /** Present for batch lines and asynchronous jobs. */
  readonly detached?: DetachedDispatch | undefined;
  /** What the provider is asked for. @defaultValue chat */
  readonly kind?: JobKind | undefined;

  /** The provider of the first deployment (the one the caches and screening consider). */
  provider?: ProviderConfig;
  /** The deployments to try in order, when the model is routed (several deployments or fallbacks). */
  candidates?: Candidate[];
  /** Scans or restores the reply (DLP_SCAN_REPLIES, DLP_RESTORE). */
  replyFilter?: ReplyScreen | undefined;
  lookup?: CacheLookup | undefined;
  admission?: Admission;
  /** The key's admitted call, settled with the reply's usage. */
  call?: GovernedCall | undefined;
}

/** How an entry point answers: the only part of a request's handling that differs between doors. */
export interface Answerer {
  /** A cache hit: `lookup.hit` holds the stored `chat.completion` JSON. */
  hit(exchange: Exchange, lookup: CacheLookup): void | Promise<void>;
  /** A dispatched request: reads the reply entries to the terminal one. */
  relay(exchange: Exchange, dispatch: Dispatch): Promise<void>;
}
