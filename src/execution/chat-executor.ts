import type { Redis } from 'ioredis';
import { sumUsage } from '../chat/token-usage.ts';
import type { ChatCompletion, ChatRequest, Usage } from '../chat/types.ts';
import type { GatewayConfig, ProviderConfig } from '../config/gateway-config.ts';
import {
  GatewayError,
  InternalError,
  InvalidRequestError,
  NotFoundError,
  ProviderError,
  ProviderTimeoutError,
  ServiceUnavailableError,
} from '../errors/catalog.ts';
import type { Logger } from '../observability/logger.ts';
import type { AttemptOutcome } from '../observability/upstream-metrics.ts';
import { NO_TRACING, type TraceSpan, type Tracing } from '../observability/tracing/trace-span.ts';
import { adapterFor } from '../providers/registry.ts';
import type { ParsedCompletion, ProviderAdapter, StreamDelta } from '../providers/types.ts';
import { transitionAsyncJob } from '../queue/async-job-record.ts';
import type { ChatJobData } from '../queue/job-contract.ts';
import { cancelKey, isTerminal } from '../streams/protocol.ts';
import { ReplyWriter } from '../streams/reply-writer.ts';
import { ChunkEmitter } from './chunk-emitter.ts';
import type { ReaderWatch } from './reader-watch.ts';
import { embeddingsReply } from '../embeddings/embeddings-reply.ts';
import { embeddingsHttpRequest, parseEmbeddingsReply, servesEmbeddings } from '../embeddings/embeddings-wire.ts';
import type { EmbeddingsRequest } from '../embeddings/request-schema.ts';
import { nativeEvent, responseUsage, responsesHttpRequest } from '../providers/openai/responses-api.ts';
import {
  attemptCompletion,
  attemptJson,
  attemptSse,
  attemptStream,
  CancelledError,
  type AttemptContext,
} from './upstream-attempt.ts';
import { UpstreamFailure, clientErrorFor } from './upstream-failure.ts';
import { scrubUpstreamText } from './upstream-text.ts';
import { createUpstreamClient, type UpstreamSend } from './upstream-http.ts';
import { proxySettingsFrom } from './upstream-proxy.ts';
import { ProviderKeys } from '../providers/provider-keys.ts';

/** Options of {@link ChatExecutor}. */
export interface ChatExecutorOptions {
  /** Connection for reply streams and cancel checks. */
  redis: Redis;
  /** Redis key prefix. */
  prefix: string;
  /** Reply stream TTL, seconds. */
  streamTtlSeconds: number;
  /** The current configuration (re-read per job, so reloads apply). */
  config: () => GatewayConfig;
  /** Where provider keys are read. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  logger: Logger;
  /** Sends upstream HTTP requests. @defaultValue a keep-alive node:http(s) client ({@link createUpstreamClient}) */
  send?: UpstreamSend;
  /** First retry delay, ms; doubles per attempt, with jitter. @defaultValue 250 */
  backoffBaseMs?: number;
  /** Longest retry delay, ms. @defaultValue 5000 */
  backoffMaxMs?: number;
  /** Called once per finished job (metrics). */
  onFinished?: (outcome: JobOutcome) => void;
  /** Counts upstream attempts and retries (gateway_upstream_attempts_total, gateway_upstream_retries_total). @defaultValue none */
  /**
   * Spans of each job (`chat job`, under the API's `queue publish` when the job
   * carries a trace context), its queue wait and every upstream attempt.
   * @defaultValue {@link NO_TRACING}
   */
  tracing?: Tracing;
  upstreamMetrics?: {
    attempt(provider: string, outcome: AttemptOutcome): void;
    retry(provider: string, reason: AttemptOutcome): void;
  };
  /**
   * Cancels the upstream call of an interactive job once nobody reads its
   * reply any more (the API process that reads it is gone).
   * @defaultValue none: a job runs to its end whoever reads it
   */
  readerWatch?: ReaderWatch;
  /**
   * Told of every failed upstream attempt (deployment cooldowns); resolving
   * true means the provider is out for a while, so the failure is not retried.
   * @defaultValue none: failures are retried as `max_retries` says
   */
  onUpstreamFailure?: (provider: string, failure: UpstreamFailure) => Promise<boolean>;
}

/** What happened to one job. */
export interface JobOutcome {
  provider: string;
  model: string;
  status: 'ok' | 'error' | 'cancelled' | 'skipped';
  errorCode?: string;
  usage?: Usage;
  queueMs: number;
  upstreamMs: number;
  /** Time to first written entry, ms. */
  firstEntryMs?: number;
}

/**
 * Runs chat jobs on the worker side: one upstream call (or `n` for adapters
 * without multi-choice support), retried with backoff on 429, 5xx and
 * connection errors while nothing has reached the reply stream, then answered
 * on the job's Redis stream. Never throws for upstream trouble: every failure
 * becomes an `error` entry the API turns into the client's error.
 */
export class ChatExecutor {
  private readonly inflight = new Map<string, AbortController>();
  private readonly env: NodeJS.ProcessEnv;
  private readonly keys: ProviderKeys;
  private readonly send: UpstreamSend;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;

  private readonly options: ChatExecutorOptions;

  constructor(options: ChatExecutorOptions) {
    this.options = options;
    this.env = options.env ?? process.env;
    this.keys = new ProviderKeys(this.env);
    const proxy = proxySettingsFrom(this.env);
    this.send = options.send ?? createUpstreamClient(proxy ? { proxy } : {}).send;
    this.backoffBaseMs = options.backoffBaseMs ?? 250;
    this.backoffMaxMs = options.backoffMaxMs ?? 5_000;
  }

  /** Jobs running now. */
  get active(): number {
    return this.inflight.size;
  }

  /** Aborts a running job's upstream call (the client went away). */
  cancel(jobId: string): boolean {
    const controller = this.inflight.get(jobId);
    controller?.abort();
    return controller !== undefined;
  }

  /**
   * Runs one job. `delivery.first`: the queue has never handed this job to a
   * worker before, so its reply stream cannot hold a dead worker's partial
   * reply and the pre-flight skips reading it. Default false (always look).
   *
   * An interactive job (no asynchronous record) on its first delivery does not
   * wait for its cancel mark before calling out: the mark is read while the
   * upstream call starts, aborts it when set, and is known before a
   * non-streamed result is written (a stream's first chunks may precede it;
   * nobody reads them). The API takes a job whose client gave up off the
   * queue (`ChatDispatcher.cancel`), so only a job taken during the cancel
   * itself can reach the upstream before being aborted.
   */
  async run(job: ChatJobData, delivery: { first?: boolean } = {}): Promise<JobOutcome> {
    const tracing = this.options.tracing ?? NO_TRACING;
    // From the enqueue (API clock) to the reply's end, so the queue wait is inside it.
    const span = tracing.start('chat job', job.trace, {
      kind: 'consumer',
      startTime: job.enqueuedAt,
      attributes: {
        'gateway.provider': job.provider,
        'gateway.model': job.request.model,
        'gateway.request_id': job.requestId,
      },
    });
    const outcome = await tracing.within(span, () => this.execute(job, delivery, span));
    span.set('gateway.job.status', outcome.status);
    if (outcome.errorCode) span.fail(outcome.errorCode);
    span.end();
    return outcome;
  }

  private async execute(job: ChatJobData, delivery: { first?: boolean }, span: TraceSpan): Promise<JobOutcome> {
    const startedAt = Date.now();
    span.child('queue wait', { startTime: job.enqueuedAt }).end(startedAt);
    const outcome: JobOutcome = {
      provider: job.provider,
      model: job.request.model,
      status: 'ok',
      queueMs: Math.max(0, startedAt - job.enqueuedAt),
      upstreamMs: 0,
    };
    const controller = new AbortController();
    this.inflight.set(job.jobId, controller);
    let unread = false;
    const stopWatching =
      job.readerId !== undefined && !job.record
        ? this.options.readerWatch?.watch(job.jobId, job.readerId, () => {
            unread = true;
            controller.abort();
          })
        : undefined;
    let resultJson: string | undefined;
    let failure: GatewayError | undefined;
    const writer = new ReplyWriter({
      redis: this.options.redis,
      key: job.streamKey,
      ttlSeconds: this.options.streamTtlSeconds,
      timing: () => {
        outcome.firstEntryMs = Date.now() - startedAt;
        return { q: outcome.queueMs, u: outcome.firstEntryMs };
      },
    });
    try {
      const overlapCancelCheck = delivery.first === true && !job.record;
      const state = overlapCancelCheck ? 'run' : await this.preflight(job, delivery.first === true);
      if (state !== 'run') {
        outcome.status = state === 'cancelled' ? 'cancelled' : 'skipped';
        if (state === 'orphaned') {
          writer.error(
            new ProviderError(
              'The worker serving this request stopped mid-reply; the partial reply cannot be resumed.',
            ),
          );
        }
        return outcome;
      }
      // A first delivery must start within the queue timeout (startBy); a re-delivery, whose first worker died, while anyone still waits.
      const startBy = delivery.first === true ? (job.startBy ?? job.deadlineAt) : job.deadlineAt;
      if (startedAt > startBy) {
        throw new ProviderTimeoutError(
          `The request waited in the ${job.provider} queue longer than its queue timeout; no worker was free in time.`,
        );
      }
      const provider = this.options.config().providerIndex.get(job.provider);
      if (!provider) throw new ProviderError(`Provider '${job.provider}' is no longer configured.`);
      const apiKey = this.keys.require(provider);
      const adapter = adapterFor(provider.format);
      const cancelChecked = overlapCancelCheck ? this.abortIfMarked(job, controller) : Promise.resolve();
      const run: JobRun = {
        job,
        provider,
        adapter,
        apiKey,
        signal: controller.signal,
        cancelChecked,
        writer,
        outcome,
        span,
      };
      if (job.record)
        await transitionAsyncJob(this.options.redis, job.record.key, job.record.ttlSeconds, 'in_progress', {
          started_at: String(Math.floor(startedAt / 1000)),
        });
      if (job.embeddings) resultJson = await this.runEmbeddings(run, job.embeddings);
      else if (job.responses) resultJson = await this.runResponses(run, job.responses);
      else if (job.request.stream) await this.runStreamed(run);
      else resultJson = await this.runOnce(run);
    } catch (err) {
      if (err instanceof CancelledError || controller.signal.aborted) {
        outcome.status = 'cancelled';
        if (unread) {
          this.options.logger.warn(
            { jobId: job.jobId, readerId: job.readerId, provider: job.provider },
            'upstream call cancelled: nobody reads its reply any more',
          );
          // Ends the stream, so a reader that comes back (an API process that stalled past its liveness) is not left waiting.
          writer.error(
            new ServiceUnavailableError(
              'The request was cancelled: nobody read its reply for several seconds. Retry it.',
            ),
          );
        }
      } else {
        const gatewayError =
          err instanceof GatewayError ? err : new InternalError('The worker failed unexpectedly.', { cause: err });
        if (!(err instanceof GatewayError)) this.logUnexpected(err, job.jobId);
        outcome.status = 'error';
        outcome.errorCode = gatewayError.code;
        writer.error(gatewayError);
        failure = gatewayError;
      }
    } finally {
      stopWatching?.();
      this.inflight.delete(job.jobId);
      outcome.upstreamMs = Date.now() - startedAt;
      try {
        await writer.flush();
        // The job's runner reads its stream and releases it like any reader; the TTL stays the safety net.
        if (job.record) await this.recordOutcome(job.record, resultJson, failure);
      } catch (err) {
        this.options.logger.error({ err, jobId: job.jobId }, 'could not write the reply stream');
      }
      this.options.onFinished?.(outcome);
    }
    return outcome;
  }

  /** Every provider key of the current configuration that is set here: what upstream text is scrubbed of. */
  private readonly upstreamSecrets = (): string[] => this.keys.keysOf(this.options.config().providers);

  /** A bug, not an upstream failure; its message and stack still pass the scrubber, since either may quote what an upstream sent. */
  private logUnexpected(err: unknown, jobId: string): void {
    const secrets = this.upstreamSecrets();
    const e = err as Error | undefined;
    const scrub = (text: string | undefined) =>
      text === undefined ? undefined : scrubUpstreamText(text, secrets, { maxLength: 4_000 });
    this.options.logger.error(
      { err: { type: e?.name, message: scrub(e?.message ?? String(err)), stack: scrub(e?.stack) }, jobId },
      'job failed unexpectedly',
    );
  }

  /** Finishes an asynchronous job's record (a cancelled record stays cancelled). */
  private async recordOutcome(
    record: NonNullable<ChatJobData['record']>,
    resultJson: string | undefined,
    failure: GatewayError | undefined,
  ): Promise<void> {
    const completedAt = String(Math.floor(Date.now() / 1000));
    if (resultJson !== undefined) {
      await transitionAsyncJob(this.options.redis, record.key, record.ttlSeconds, 'completed', {
        completed_at: completedAt,
        result: resultJson,
      });
    } else if (failure) {
      const error = JSON.stringify({ code: failure.code, message: failure.message });
      await transitionAsyncJob(this.options.redis, record.key, record.ttlSeconds, 'failed', {
        completed_at: completedAt,
        error,
      });
    }
  }

  /**
   * Reads the job's cancel mark and aborts `controller` if it is set. A failed
   * read is logged and ignored: the pub/sub cancel still reaches running jobs.
   */
  private async abortIfMarked(job: ChatJobData, controller: AbortController): Promise<void> {
    try {
      if (await this.options.redis.exists(cancelKey(this.options.prefix, job.jobId))) controller.abort();
    } catch (err) {
      this.options.logger.debug({ err, jobId: job.jobId }, 'cancel mark not read');
    }
  }

  /**
   * Looks before calling out: a cancelled job is skipped; on a re-delivery, a
   * reply stream with entries means a previous worker died while serving it.
   */
  private async preflight(
    job: ChatJobData,
    firstDelivery: boolean,
  ): Promise<'run' | 'cancelled' | 'done' | 'orphaned'> {
    const redis = this.options.redis;
    const [cancelled, last] = await Promise.all([
      redis.exists(cancelKey(this.options.prefix, job.jobId)),
      firstDelivery ? [] : redis.xrevrange(job.streamKey, '+', '-', 'COUNT', 1),
    ]);
    if (cancelled) return 'cancelled';
    const entry = last[0];
    if (!entry) return 'run';
    return isTerminal(entry[1][1] ?? '') ? 'done' : 'orphaned';
  }

  private attemptContext(run: JobRun, request: ChatRequest): AttemptContext {
    const baseUrl = run.provider.base_url ?? run.adapter.defaultBaseUrl;
    return {
      adapter: run.adapter,
      endpoint: { baseUrl, apiKey: run.apiKey },
      request,
      cancel: run.signal,
      timeoutMs: run.provider.timeout_ms,
      idleTimeoutMs: run.provider.stream_idle_timeout_ms,
      send: this.send,
      secrets: this.upstreamSecrets,
    };
  }

  /** The requests to send: one, or `n` single-choice ones for adapters that cannot do `n`. */
  private upstreamRequests(run: JobRun): ChatRequest[] {
    const request = run.job.request;
    const upstreamModel = run.provider.upstream_models?.[request.model] ?? request.model;
    const base = { ...request, model: upstreamModel };
    if (run.adapter.supportsMultipleChoices || request.n === 1) return [base];
    return Array.from({ length: request.n }, () => ({ ...base, n: 1 }));
  }

  /** Returns the `chat.completion` JSON it wrote. */
  private async runOnce(run: JobRun): Promise<string> {
    const requests = this.upstreamRequests(run);
    const parts = await Promise.all(
      requests.map((request) =>
        this.withRetries(
          run,
          () => attemptCompletion(this.attemptContext(run, request)),
          () => false,
        ),
      ),
    );
    await run.cancelChecked;
    if (run.signal.aborted) throw new CancelledError();
    const completion = mergeCompletions(run.job, parts, requests.length > 1);
    run.outcome.usage = completion.usage;
    const json = JSON.stringify(completion);
    run.writer.result(json, completion.usage);
    return json;
  }

  /** An embeddings job: one upstream call, retried like chat, answered as OpenAI's list object. Returns the JSON it wrote. */
  private async runEmbeddings(run: JobRun, request: EmbeddingsRequest): Promise<string> {
    const format = run.provider.format;
    if (!servesEmbeddings(format))
      throw new InvalidRequestError(`${run.provider.name} speaks the ${format} format, which has no embeddings API.`);
    const upstreamModel = run.provider.upstream_models?.[request.model] ?? request.model;
    const http = embeddingsHttpRequest(format, request, upstreamModel, {
      baseUrl: run.provider.base_url ?? run.adapter.defaultBaseUrl,
      apiKey: run.apiKey,
    });
    const ctx = this.attemptContext(run, run.job.request);
    const result = await this.withRetries(
      run,
      () =>
        attemptJson(
          ctx,
          () => http,
          (body) => parseEmbeddingsReply(format, body, request.input.length),
        ),
      () => false,
    );
    await run.cancelChecked;
    if (run.signal.aborted) throw new CancelledError();
    const { json, promptTokens } = embeddingsReply(result, request.input, request.model, request.encoding_format);
    const usage: Usage = { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens };
    run.outcome.usage = usage;
    run.writer.result(json, usage);
    return json;
  }

  /**
   * A native Responses job: the body goes to the upstream's `/responses`
   * (retried like chat until its first event reached the reply stream); its
   * `response` object is the `result`, or each stream event a chunk, under
   * the model id the client asked for. Returns the JSON of a `result`.
   */
  private async runResponses(run: JobRun, body: Record<string, unknown>): Promise<string | undefined> {
    if (run.provider.format !== 'openai')
      throw new InvalidRequestError(
        `${run.provider.name} speaks the ${run.provider.format} format, which has no Responses API.`,
      );
    const model = run.job.request.model;
    const upstreamModel = run.provider.upstream_models?.[model] ?? model;
    const http = responsesHttpRequest(body, upstreamModel, {
      baseUrl: run.provider.base_url ?? run.adapter.defaultBaseUrl,
      apiKey: run.apiKey,
    });
    const ctx = this.attemptContext(run, run.job.request);
    if (body.stream !== true) {
      const response = await this.withRetries(
        run,
        () =>
          attemptJson(
            ctx,
            () => http,
            (reply) => reply as Record<string, unknown>,
          ).catch(notFound),
        () => false,
      );
      await run.cancelChecked;
      if (run.signal.aborted) throw new CancelledError();
      const usage = responseUsage(response) ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
      const json = JSON.stringify({ ...response, model });
      run.outcome.usage = usage;
      run.writer.result(json, usage);
      return json;
    }
    let emitted = false;
    let usage: Usage | undefined;
    await this.withRetries(
      run,
      () =>
        attemptSse(
          ctx,
          () => http,
          () => emitted,
          (event) => {
            const native = nativeEvent(event.data, model);
            if (native.kind === 'done') return true;
            if (native.kind === 'error')
              throw new UpstreamFailure(`reported an error mid-stream: ${native.message}`, 'stream', !emitted);
            emitted = true;
            run.writer.chunk(native.json);
            if (native.usage) usage = native.usage;
            return native.terminal;
          },
        ).catch(notFound),
      () => emitted,
    );
    const final = usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    run.outcome.usage = final;
    run.writer.end(final);
    return undefined;
  }

  private async runStreamed(run: JobRun): Promise<void> {
    const { job, writer } = run;
    const requests = this.upstreamRequests(run);
    const emitter = new ChunkEmitter(
      completionId(job),
      Math.floor(job.enqueuedAt / 1000),
      job.request.model,
      job.request.include_usage,
      (json) => writer.chunk(json),
    );
    const fanOut = requests.length > 1;
    const usages = await Promise.all(
      requests.map((request, i) => {
        let emittedByThisCall = false;
        const sink = {
          delta: (event: StreamDelta) => {
            emittedByThisCall = true;
            emitter.delta(fanOut ? i : event.choice, event);
          },
          emitted: () => emittedByThisCall,
        };
        return this.withRetries(run, () => attemptStream(this.attemptContext(run, request), sink), sink.emitted);
      }),
    );
    emitter.finishAll(job.request.n);
    const usage = sumUsage(usages.filter((u): u is Usage => u !== undefined));
    run.outcome.usage = usage;
    emitter.usage(usage);
    writer.end(usage);
  }

  private async withRetries<T>(run: JobRun, attempt: () => Promise<T>, emitted: () => boolean): Promise<T> {
    const maxAttempts = run.provider.max_retries + 1;
    const metrics = this.options.upstreamMetrics;
    const provider = run.provider.name;
    for (let n = 1; ; n++) {
      const span = run.span.child('upstream attempt', {
        kind: 'client',
        attributes: { 'gateway.provider': provider, 'gateway.attempt': n },
      });
      if (span.recording)
        span.set('server.address', new URL(run.provider.base_url ?? run.adapter.defaultBaseUrl).hostname);
      try {
        const result = await attempt();
        metrics?.attempt(provider, 'ok');
        span.set('gateway.upstream.outcome', 'ok');
        span.end();
        return result;
      } catch (err) {
        const outcome = attemptOutcome(err);
        if (outcome) metrics?.attempt(provider, outcome);
        endFailedAttempt(span, err, outcome);
        if (!(err instanceof UpstreamFailure)) throw err;
        const out = (await this.options.onUpstreamFailure?.(provider, err)) ?? false;
        const delay = Math.min(err.options.retryAfterMs ?? this.backoff(n), this.backoffMaxMs);
        const canRetry =
          !out && err.retryable && !emitted() && n < maxAttempts && Date.now() + delay < run.job.deadlineAt;
        if (!canRetry) throw clientErrorFor(err, provider, n);
        metrics?.retry(provider, outcome!);
        this.options.logger.warn(
          { jobId: run.job.jobId, provider, attempt: n, reason: err.message },
          'retrying upstream call',
        );
        await sleep(delay, run.signal);
      }
    }
  }

  private backoff(attempt: number): number {
    const exp = this.backoffBaseMs * 2 ** (attempt - 1);
    return Math.min(this.backoffMaxMs, exp / 2 + Math.random() * (exp / 2));
  }
}

/**
 * A native Responses upstream's 404 names something of the client's it does
 * not know (a `previous_response_id`, a stored item): the client's 404, with
 * the upstream's (scrubbed) message, not a provider failure.
 */
function notFound(err: unknown): never {
  if (
    err instanceof UpstreamFailure &&
    err.kind === 'status' &&
    err.options.status === 404 &&
    err.options.upstreamMessage
  )
    throw new NotFoundError(err.options.upstreamMessage);
  throw err;
}

interface JobRun {
  job: ChatJobData;
  provider: ProviderConfig;
  adapter: ProviderAdapter;
  apiKey: string;
  signal: AbortSignal;
  /** Settles once the cancel mark has been read (at once when the pre-flight read it). */
  cancelChecked: Promise<void>;
  writer: ReplyWriter;
  outcome: JobOutcome;
  /** The job's span: attempts open theirs under it. */
  span: TraceSpan;
}

function endFailedAttempt(span: TraceSpan, err: unknown, outcome: AttemptOutcome | undefined): void {
  if (!span.recording) return;
  const status = err instanceof UpstreamFailure ? err.options.status : undefined;
  if (status !== undefined) span.set('http.response.status_code', status);
  span.set('gateway.upstream.outcome', outcome ?? 'error');
  span.fail(outcome ?? 'error');
  span.end();
}

const FAILURE_OUTCOMES: Record<UpstreamFailure['kind'], AttemptOutcome> = {
  status: 'status',
  network: 'connection_error',
  timeout: 'timeout',
  protocol: 'protocol_error',
  stream: 'stream_error',
};

/** The metric outcome of a failed attempt; undefined for an error that is no attempt's (a bug). */
function attemptOutcome(err: unknown): AttemptOutcome | undefined {
  if (err instanceof CancelledError) return 'cancelled';
  if (!(err instanceof UpstreamFailure)) return undefined;
  return err.kind === 'status' && err.retryable ? 'retryable_status' : FAILURE_OUTCOMES[err.kind];
}

/** The job id's letters and digits: no dashes, and no Redis Cluster hash-tag braces. */
function completionId(job: ChatJobData): string {
  return `chatcmpl-${job.jobId.replace(/[^A-Za-z0-9]/g, '')}`;
}

function mergeCompletions(job: ChatJobData, parts: readonly ParsedCompletion[], renumber: boolean): ChatCompletion {
  const choices = parts.flatMap((part, i) =>
    part.choices.map((choice): ChatCompletion['choices'][number] => ({
      index: renumber ? i : choice.index,
      message: choice.message,
      finish_reason: choice.finish_reason,
      ...(choice.stop_sequence !== undefined ? { stop_sequence: choice.stop_sequence } : {}),
      logprobs: choice.logprobs ?? null,
    })),
  );
  choices.sort((a, b) => a.index - b.index);
  return {
    id: completionId(job),
    object: 'chat.completion',
    created: Math.floor(job.enqueuedAt / 1000),
    model: job.request.model,
    choices,
    usage: sumUsage(parts.map((p) => p.usage)),
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new CancelledError());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new CancelledError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
