import type { ChatRequest } from '../chat/types.ts';
import { GatewayError, ProviderError, ProviderTimeoutError, type ErrorCode } from '../errors/catalog.ts';
import type { ChatDispatcher, Dispatch, DispatchContext, RoutedRequest } from '../queue/chat-dispatcher.ts';
import type { Admission } from '../ratelimit/admission.ts';
import { decodeError, type StreamEntry } from '../streams/protocol.ts';
import { StreamDeadlineError } from '../streams/stream-reader.ts';
import type { CooldownView } from './cooldown-view.ts';
import type { Candidate } from './model-router.ts';

/** Failures after which the next deployment is tried: the upstream or the queue failed, not the request. */
const FALL_THROUGH: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'provider_error',
  'provider_timeout',
  'service_unavailable',
]);

/** One deployment tried: `outcome` is `ok` or the error code it ended with. */
export interface AttemptRecord {
  model: string;
  provider: string;
  outcome: string;
  /** From the start of the attempt to its first reply entry, ms. */
  ms: number;
}

/** The deployment that answers, its reply (first entry included), and every attempt made. */
export interface AnsweredDispatch {
  candidate: Candidate;
  routed: RoutedRequest;
  dispatch: Dispatch;
  attempts: AttemptRecord[];
}

/** What {@link dispatchWithFallbacks} needs besides the candidates. */
export interface FallbackContext {
  dispatcher: ChatDispatcher;
  cooldowns: CooldownView;
  admission: Admission;
  requestId: string;
  /** Aborted when the client goes away: the attempt in flight is cancelled and the read rejects. */
  signal: AbortSignal;
  priority?: number;
  /** W3C trace context every attempt's job carries to its worker. @defaultValue none */
  trace?: DispatchContext['trace'];
  /**
   * Detached work (batch lines, asynchronous jobs): each attempt's job id is
   * stored before its job is enqueued, the job names no reader, and it may
   * wait for a worker. @defaultValue none: interactive
   */
  detached?: {
    jobId: () => string;
    beforeEnqueue: (jobId: string) => Promise<void>;
    waitMs: number;
    record?: DispatchContext['record'];
  };
  /**
   * The job of one candidate when it depends on the deployment (a native
   * Responses request: its body for a deployment that takes the Responses
   * API natively, its translation for another). Throws a GatewayError when
   * the candidate cannot take the request: it is skipped.
   * @defaultValue the request, as a chat job
   */
  jobFor?: (candidate: Candidate) => { request: ChatRequest; responses?: DispatchContext['responses'] };
}

/**
 * Tries the candidates in order until one answers. An attempt is one job on
 * its deployment's queue; it counts as answered with its first non-error
 * reply entry, which is also the first moment anything can reach the client.
 * Until then a 429, 5xx, time-out, connection error, full queue or missing
 * worker (`provider_error`, `provider_timeout`, `service_unavailable`) moves
 * on to the next candidate; after it, nothing is retried. A candidate whose
 * format cannot express the request is skipped. When every candidate failed,
 * {@link AttemptsFailedError} carries the last upstream failure (else the
 * first refusal) and what each attempt did.
 */
export async function dispatchWithFallbacks(
  candidates: readonly Candidate[],
  request: ChatRequest,
  context: FallbackContext,
): Promise<AnsweredDispatch> {
  const { dispatcher } = context;
  const attempts: AttemptRecord[] = [];
  let refusal: GatewayError | undefined;
  let last: GatewayError | undefined;
  for (const candidate of candidates) {
    const startedAt = performance.now();
    const note = (outcome: string) =>
      attempts.push({
        model: candidate.model,
        provider: candidate.provider.name,
        outcome,
        ms: performance.now() - startedAt,
      });
    let routed: RoutedRequest;
    let job: ReturnType<NonNullable<FallbackContext['jobFor']>>;
    try {
      job = context.jobFor ? context.jobFor(candidate) : { request };
      routed = dispatcher.route({ ...job.request, model: candidate.model }, candidate.provider);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      refusal ??= err;
      note(err.code);
      continue;
    }
    let dispatch: Dispatch | undefined;
    let failure: unknown;
    try {
      const place = await reserve(candidate, context);
      dispatch = await dispatcher.dispatch(routed.request, candidate.provider, place, {
        requestId: context.requestId,
        signal: context.signal,
        ...(context.priority !== undefined ? { priority: context.priority } : {}),
        ...(context.trace ? { trace: context.trace } : {}),
        ...(job.responses ? { responses: job.responses } : {}),
        ...(context.detached
          ? {
              detached: true,
              waitMs: context.detached.waitMs,
              ...(context.detached.record ? { record: context.detached.record } : {}),
            }
          : {}),
      });
      const first = await dispatch.entries.next();
      if (!first.done && first.value.t !== 'error') {
        note('ok');
        return {
          candidate,
          routed,
          attempts,
          dispatch: { ...dispatch, entries: prepend(first.value, dispatch.entries) },
        };
      }
      // The job ended with an error entry: nothing of it is left to drop.
      failure = first.done
        ? new ProviderError(`${candidate.provider.name} ended its reply without an answer.`)
        : decodeError(first.value);
    } catch (err) {
      // A job that has not answered (its deadline passed, or the client left) is dropped.
      if (dispatch) dispatcher.cancel(dispatch.jobId, candidate.provider.name).catch(() => {});
      failure =
        err instanceof StreamDeadlineError
          ? new ProviderTimeoutError(`${candidate.provider.name} did not answer within the gateway's deadline.`)
          : err;
    }
    if (!(failure instanceof GatewayError) || !FALL_THROUGH.has(failure.code)) throw failure;
    note(failure.code);
    last = failure;
    // The worker set the cooldown before it wrote the error: the next request already sees it.
    await context.cooldowns.refresh([candidate.provider.name]);
  }
  throw new AttemptsFailedError(
    last ?? refusal ?? new ProviderError('No deployment could take the request.'),
    attempts,
  );
}

/** A place in the candidate's queue; detached work stores its job id first and may wait for a worker. */
async function reserve(candidate: Candidate, context: FallbackContext) {
  const detached = context.detached;
  if (!detached) return context.dispatcher.reserve(candidate.provider, context.admission);
  const jobId = detached.jobId();
  await detached.beforeEnqueue(jobId);
  return context.dispatcher.reserve(candidate.provider, context.admission, {
    jobId,
    requireWorker: false,
    waitMs: detached.waitMs,
    background: true,
  });
}

/** Every candidate failed: the last failure, with the attempts for `Server-Timing`. */
export class AttemptsFailedError extends Error {
  readonly failure: GatewayError;
  readonly attempts: readonly AttemptRecord[];

  constructor(failure: GatewayError, attempts: readonly AttemptRecord[]) {
    super(failure.message);
    this.name = 'AttemptsFailedError';
    this.failure = failure;
    this.attempts = attempts;
  }
}

async function* prepend(first: StreamEntry, rest: AsyncGenerator<StreamEntry>): AsyncGenerator<StreamEntry> {
  yield first;
  yield* rest;
}
