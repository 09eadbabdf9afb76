import { gatewayCacheMark, withUsageMark } from '../chat/usage-mark.ts';
import type { TokenDetails } from '../observability/metrics.ts';
import type { TraceCarrier } from '../observability/tracing/trace-span.ts';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../auth/principal.ts';
import type { CacheLookup } from '../cache/response-cache.ts';
import { parseChatRequest } from '../chat/request-schema.ts';
import { GatewayError, InternalError, InvalidApiKeyError, toEnvelope } from '../errors/catalog.ts';
import type { ChatPipeline } from '../pipeline/chat-pipeline.ts';
import type { Answerer, Exchange } from '../pipeline/exchange.ts';
import { noteReplyEntry } from '../pipeline/reply-facts.ts';
import { newContext } from '../pipeline/request-context.ts';
import type { ChatDispatcher, Dispatch } from '../queue/chat-dispatcher.ts';
import { PRIORITIES } from '../queue/priorities.ts';
import { admit } from '../ratelimit/admission.ts';
import { decodeError } from '../streams/protocol.ts';
import { StreamAbortedError } from '../streams/stream-reader.ts';
import type { BatchOutputLine } from './batch-objects.ts';
import type { LineRow } from './batch-store.ts';

/** Dependencies of {@link LineExecutor}. */
export interface LineExecutorOptions {
  /** The one request pipeline, as the chat route runs it. */
  pipeline: ChatPipeline;
  /** Builds job ids and cancels the jobs of stopped lines. */
  dispatcher: ChatDispatcher;
  /** Longest wait of a line in its queue, ms (`ASYNC_JOB_MAX_WAIT_MS`). */
  waitMs: number;
  /**
   * The key a batch was created with, as the pipeline sees it: its model
   * list, token limit, budget and semantic switch; undefined when that key
   * was revoked or deleted (its lines then fail). `keyId` is undefined for a
   * static key, which is answered with a principal of the owner alone.
   */
  principalOf: (keyId: string | undefined, owner: string) => Promise<Principal | undefined>;
  /** Notes the tokens of a line answered by a provider (usage metrics, as the request observer does for a synchronous call). */
  onTokens?: (
    provider: string,
    model: string,
    promptTokens: number,
    completionTokens: number,
    details: TokenDetails,
  ) => void;
}

/** What became of a line: the line of the output file, or of the error file. */
export interface LineOutcome {
  status: 'succeeded' | 'failed';
  output: BatchOutputLine;
}

/** Why a line's signal aborts: `stop` cancels its job (cancel, expiry), `leave` lets it run on for the next runner (shutdown, takeover). */
export type LineAbort = 'stop' | 'leave';

/** One line of a batch, as the line's owner and where it stands. */
export interface LineTask {
  batchId: string;
  owner: string;
  /** The issued key the batch was created with. @defaultValue none: a static key */
  keyId?: string | undefined;
  line: LineRow;
  /** Stores the job id before the job is enqueued; throws when the line must not be enqueued any more (its batch stopped). */
  markDispatched: (jobId: string) => Promise<void>;
  signal: AbortSignal;
  /** BullMQ priority of its job. @defaultValue PRIORITIES.batch */
  priority?: number;
  /** The Redis record an asynchronous job's worker marks `in_progress` (see `src/queue/async-job-record.ts`). */
  record?: { key: string; ttlSeconds: number };
  /** Called once the line's job is on its queue (or follows one that is). */
  onEnqueued?: () => void;
  /** Trace context the line's job carries to its worker. @defaultValue none */
  trace?: TraceCarrier;
}

/**
 * Runs one batch line through the one request pipeline, as the chat route
 * runs a non-streamed request of the batch's key: routed, DLP-screened,
 * governed by the key (model list, token limit, budget, semantic switch),
 * answered by the caches when they can, else one job on its provider's queue
 * at batch priority (behind every interactive request) or the task's own (an
 * asynchronous job's). The batch passed the key's rate limit when it was
 * created; its lines are paced by the per-batch concurrency instead.
 *
 * A line refused by the gateway or whose reply is an error (after the
 * worker's retries) fails into the error file; anything that says "try again
 * later" (Redis down, a full queue, the stream lost) is thrown, and the line
 * stays open. A line already enqueued by an earlier run follows that job
 * while its reply stream still exists, so a restart does not call the provider again.
 */
export class LineExecutor {
  private readonly options: LineExecutorOptions;

  constructor(options: LineExecutorOptions) {
    this.options = options;
  }

  async run(task: LineTask): Promise<LineOutcome> {
    const { line } = task;
    const requestId = `batch_req_${randomBytes(12).toString('hex')}`;
    const { dispatcher } = this.options;
    const answerer = new LineAnswerer(line.custom_id, requestId, this.options.onTokens);
    try {
      const principal = await this.options.principalOf(task.keyId, task.owner);
      if (!principal) throw new InvalidApiKeyError('The API key this batch was created with was revoked.');
      const exchange: Exchange = {
        context: { ...newContext(requestId), principal },
        request: parseChatRequest(JSON.parse(line.body)),
        principal,
        hints: {},
        gate: Promise.resolve(admit()),
        signal: task.signal,
        priority: task.priority ?? PRIORITIES.batch,
        header: () => {},
        detached: {
          beforeEnqueue: task.markDispatched,
          jobId: () => dispatcher.newJobId(`${task.batchId}-${line.line_index}-${randomBytes(4).toString('hex')}`),
          resumeJobId: line.status === 'dispatched' && line.job_id ? line.job_id : undefined,
          waitMs: this.options.waitMs,
          ...(task.record ? { record: task.record } : {}),
          ...(task.trace ? { trace: task.trace } : {}),
          ...(task.onEnqueued ? { onEnqueued: task.onEnqueued } : {}),
        },
      };
      await this.options.pipeline.run(exchange, answerer);
    } catch (err) {
      // "Retry it": Redis or the gateway could not serve the line now; it stays open.
      if (err instanceof GatewayError && err.code !== 'service_unavailable')
        return failed(line.custom_id, requestId, err);
      const dispatch = answerer.dispatch;
      // Stopped for good, or stuck: the job must not run on for nobody. A runner that leaves lets it finish for the next one.
      const stuck = !(err instanceof StreamAbortedError);
      if (dispatch && (stuck || (task.signal.aborted && (task.signal.reason as LineAbort) === 'stop')))
        await dispatcher.cancel(dispatch.jobId, dispatch.provider.name).catch(() => {});
      throw err;
    }
    return (
      answerer.outcome ?? failed(line.custom_id, requestId, new InternalError('The line ended without an answer.'))
    );
  }
}

/** Takes a line's answer: the cached or the provider's `chat.completion`, through the DLP reply filter when there is one. */
class LineAnswerer implements Answerer {
  outcome: LineOutcome | undefined;
  dispatch: Dispatch | undefined;
  private readonly customId: string;
  private readonly requestId: string;
  private readonly onTokens: LineExecutorOptions['onTokens'];

  constructor(customId: string, requestId: string, onTokens: LineExecutorOptions['onTokens']) {
    this.customId = customId;
    this.requestId = requestId;
    this.onTokens = onTokens;
  }

  async hit(exchange: Exchange, lookup: CacheLookup): Promise<void> {
    const hit = lookup.hit as NonNullable<CacheLookup['hit']>;
    const stored = exchange.replyFilter ? await exchange.replyFilter.completionAsync(hit.completion) : hit.completion;
    this.outcome = succeeded(
      this.customId,
      this.requestId,
      JSON.parse(withUsageMark(stored, gatewayCacheMark(hit)).json),
    );
  }

  async relay(exchange: Exchange, dispatch: Dispatch): Promise<void> {
    this.dispatch = dispatch;
    for await (const entry of dispatch.entries) {
      noteReplyEntry(exchange.context, entry);
      if (entry.t === 'error') throw decodeError(entry);
      if (entry.t === 'result') {
        this.onTokens?.(
          dispatch.provider.name,
          exchange.context.model ?? exchange.request.model,
          entry.pt ?? 0,
          entry.ct ?? 0,
          { cachedRead: entry.cr ?? 0, cacheWrite: entry.cw ?? 0, reasoning: entry.rt ?? 0 },
        );
        this.outcome = succeeded(
          this.customId,
          this.requestId,
          JSON.parse(exchange.replyFilter ? await exchange.replyFilter.completionAsync(entry.d) : entry.d),
        );
        return;
      }
    }
    throw new Error(`the reply stream of job ${dispatch.jobId} ended without a result`);
  }
}

function succeeded(customId: string, requestId: string, body: unknown): LineOutcome {
  return {
    status: 'succeeded',
    output: {
      id: requestId,
      custom_id: customId,
      response: { status_code: 200, request_id: requestId, body },
      error: null,
    },
  };
}

function failed(customId: string, requestId: string, err: GatewayError): LineOutcome {
  return {
    status: 'failed',
    output: {
      id: requestId,
      custom_id: customId,
      response: { status_code: err.status, request_id: requestId, body: toEnvelope(err, requestId) },
      error: null,
    },
  };
}

/** The error-file line of a request that was never answered (the batch expired or was cancelled first). */
export function notRun(customId: string, code: 'batch_expired' | 'batch_cancelled', message: string): BatchOutputLine {
  return {
    id: `batch_req_${randomBytes(12).toString('hex')}`,
    custom_id: customId,
    response: null,
    error: { code, message },
  };
}
