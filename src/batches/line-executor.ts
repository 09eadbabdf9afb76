import type { TraceCarrier } from '../observability/tracing/trace-span.ts';
import { randomBytes } from 'node:crypto';
import type { ResponseCache } from '../cache/response-cache.ts';
import { parseChatRequest } from '../chat/request-schema.ts';
import { semanticCacheOn } from '../config/gateway-config.ts';
import type { DlpGuard } from '../dlp/dlp-guard.ts';
import { GatewayError, toEnvelope } from '../errors/catalog.ts';
import type { ChatDispatcher, Dispatch } from '../queue/chat-dispatcher.ts';
import { dispatchMiss } from '../queue/dispatch-miss.ts';
import { PRIORITIES } from '../queue/priorities.ts';
import { admit } from '../ratelimit/admission.ts';
import { decodeError } from '../streams/protocol.ts';
import { StreamAbortedError } from '../streams/stream-reader.ts';
import type { BatchOutputLine } from './batch-objects.ts';
import type { LineRow } from './batch-store.ts';

/** Dependencies of {@link LineExecutor}. */
export interface LineExecutorOptions {
  dispatcher: ChatDispatcher;
  /** Longest wait of a line in its queue, ms (`ASYNC_JOB_MAX_WAIT_MS`). */
  waitMs: number;
  cache?: ResponseCache;
  dlp?: DlpGuard;
  /** Notes the tokens of a line answered by a provider (usage accounting, as for a synchronous call). */
  onTokens?: (provider: string, model: string, promptTokens: number, completionTokens: number) => void;
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
 * Runs one batch line as the chat route runs a non-streamed request: routed,
 * DLP-screened, answered by the caches when they can, else one job on its
 * provider's queue at batch priority (behind every interactive request) or
 * the task's own (an asynchronous job's),
 * whose reply stream it reads. A line whose reply is an error (after the
 * worker's retries) fails; anything that says "try again later" (Redis down,
 * a full queue, the stream lost) is thrown, and the line stays open. A line
 * already enqueued by an earlier run follows that job while its reply stream
 * still exists, so a restart does not call the provider again.
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
    let routed;
    let request;
    try {
      routed = dispatcher.route(parseChatRequest(JSON.parse(line.body)));
      request = this.options.dlp ? await this.options.dlp.screenAsync(routed.request, {}) : routed.request;
    } catch (err) {
      if (err instanceof GatewayError) return failed(line.custom_id, requestId, err);
      throw err;
    }
    const provider = routed.provider;
    let dispatch: Dispatch;
    // Enqueued by an earlier run: follow that job if it ran or runs, so the provider is not called twice.
    if (line.status === 'dispatched' && line.job_id && (await dispatcher.reclaim(provider.name, line.job_id)) === 'running') {
      dispatch = dispatcher.follow(line.job_id, provider, task.signal);
    } else {
      const lookup = this.options.cache
        ? await this.options.cache.lookup(request, task.owner, undefined, Promise.resolve(admit()), { semantic: semanticCacheOn(provider, request.model) ? 'on' : 'off' })
        : undefined;
      if (lookup?.hit) return succeeded(line.custom_id, requestId, JSON.parse(lookup.hit.completion));
      const jobId = dispatcher.newJobId(`${task.batchId}-${line.line_index}-${randomBytes(4).toString('hex')}`);
      await task.markDispatched(jobId);
      dispatch = await dispatchMiss(dispatcher, request, provider, {
        requestId,
        lookup,
        // The batch passed the key's rate limit when it was created; its lines are paced by the per-batch concurrency instead.
        admission: admit(),
        signal: task.signal,
        priority: task.priority ?? PRIORITIES.batch,
        jobId,
        ...(task.record ? { record: task.record } : {}),
        ...(task.trace ? { trace: task.trace } : {}),
        waitMs: this.options.waitMs,
        requireWorker: false,
        detached: true,
      });
    }
    task.onEnqueued?.();
    try {
      for await (const entry of dispatch.entries) {
        if (entry.t === 'error') {
          const err = decodeError(entry);
          // "Retry it": Redis or the gateway could not serve the line now; it stays open.
          if (err.code === 'service_unavailable') throw err;
          return failed(line.custom_id, requestId, err);
        }
        if (entry.t === 'result') {
          this.options.onTokens?.(provider.name, request.model, entry.pt ?? 0, entry.ct ?? 0);
          return succeeded(line.custom_id, requestId, JSON.parse(entry.d));
        }
      }
      throw new Error(`the reply stream of job ${dispatch.jobId} ended without a result`);
    } catch (err) {
      // Stopped for good, or stuck: the job must not run on for nobody. A runner that leaves lets it finish for the next one.
      const stuck = !(err instanceof StreamAbortedError) && (!(err instanceof GatewayError) || err.code === 'service_unavailable');
      if (stuck || (task.signal.aborted && (task.signal.reason as LineAbort) === 'stop')) await dispatcher.cancel(dispatch.jobId, provider.name).catch(() => {});
      throw err;
    }
  }
}

function succeeded(customId: string, requestId: string, body: unknown): LineOutcome {
  return { status: 'succeeded', output: { id: requestId, custom_id: customId, response: { status_code: 200, request_id: requestId, body }, error: null } };
}

function failed(customId: string, requestId: string, err: GatewayError): LineOutcome {
  return {
    status: 'failed',
    output: { id: requestId, custom_id: customId, response: { status_code: err.status, request_id: requestId, body: toEnvelope(err, requestId) }, error: null },
  };
}

/** The error-file line of a request that never ran (the batch expired first). */
export function notRun(customId: string, code: 'batch_expired', message: string): BatchOutputLine {
  return { id: `batch_req_${randomBytes(12).toString('hex')}`, custom_id: customId, response: null, error: { code, message } };
}
