import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ChatRequest } from '../chat/types.ts';
import type { GatewayConfig, ProviderConfig } from '../config/gateway-config.ts';
import { InvalidRequestError, ModelNotFoundError, ProviderError, ServiceUnavailableError } from '../errors/catalog.ts';
import { adapterFor } from '../providers/registry.ts';
import { cancelChannel, cancelKey, responseStreamKey, type StreamEntry } from '../streams/protocol.ts';
import type { ReaderIdentity } from '../streams/reader-liveness.ts';
import type { StreamReader } from '../streams/stream-reader.ts';
import type { Admission } from '../ratelimit/admission.ts';
import type { ChatQueues } from './chat-queues.ts';
import type { ChatJobData } from './job-contract.ts';

/** Options of {@link ChatDispatcher}. */
export interface ChatDispatcherOptions {
  config: () => GatewayConfig;
  queues: ChatQueues;
  reader: StreamReader;
  /** Command connection (cancel marks). */
  redis: Redis;
  prefix: string;
  /** Where provider keys are looked up to tell an unconfigured provider. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Extra wait beyond the worker's own deadlines, so its error arrives first. Default 1000 ms. */
  graceMs?: number;
  /**
   * This process as the reader of its jobs' replies: its id goes with every
   * interactive job, so a worker can tell when nobody reads a reply any more.
   * @defaultValue none: jobs carry no reader and are never given up for lack of one
   */
  liveness?: ReaderIdentity;
}

/** A request matched to its provider: see {@link ChatDispatcher.route}. */
export interface RoutedRequest {
  provider: ProviderConfig;
  /** The request to send on: without the dropped parameters. */
  request: ChatRequest;
  /** Parameters dropped because the provider cannot honour them (sent as `X-Gateway-Dropped-Params`). */
  dropped: ReadonlyArray<keyof ChatRequest>;
}

/** Who dispatches, and how. */
export interface DispatchContext {
  requestId: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** The rate limiter let this request through. */
  admission: Admission;
  priority?: number;
  /** Chosen by the caller when others must know it first (request coalescing). */
  jobId?: string;
}

/** One request in flight through the queue. */
export interface Dispatch {
  jobId: string;
  provider: ProviderConfig;
  enqueuedAt: number;
  /** Reply entries up to and including the terminal one. */
  entries: AsyncGenerator<StreamEntry>;
}

/**
 * The API side of the broker: routes a request to its provider, enqueues one
 * job and reads the reply stream. Deadlines: the first entry must arrive
 * within queue_timeout_ms + timeout_ms (+ grace); each later one within
 * stream_idle_timeout_ms (+ grace).
 */
export class ChatDispatcher {
  private readonly env: NodeJS.ProcessEnv;
  private readonly graceMs: number;

  private readonly options: ChatDispatcherOptions;

  constructor(options: ChatDispatcherOptions) {
    this.options = options;
    this.env = options.env ?? process.env;
    this.graceMs = options.graceMs ?? 1_000;
  }

  /**
   * The provider serving `request.model`, and the request as it can be sent
   * there; throws the client's error when there is no usable provider or the
   * request cannot be expressed in its format. Parameters the format cannot
   * honour are a 400 naming them, unless the provider drops them
   * (`drop_unsupported_params`), which {@link RoutedRequest.dropped} reports.
   */
  route(request: ChatRequest): RoutedRequest {
    const provider = this.options.config().modelIndex.get(request.model);
    if (!provider) throw new ModelNotFoundError(request.model);
    if (!this.env[provider.api_key_env]) {
      throw new ProviderError(`${provider.name} is unavailable: its API key (${provider.api_key_env}) is not configured.`);
    }
    const adapter = adapterFor(provider.format);
    const unsupported = adapter.unsupportedParams(request);
    let routed = request;
    if (unsupported.length > 0) {
      if (!provider.drop_unsupported_params) {
        const names = unsupported.map((name) => `'${name}'`).join(', ');
        throw new InvalidRequestError(
          `${names} ${unsupported.length > 1 ? 'are' : 'is'} not supported by ${provider.name} (model '${request.model}'). Remove ${unsupported.length > 1 ? 'them' : 'it'}, or set drop_unsupported_params: true for ${provider.name} in config.yaml to have the gateway drop ${unsupported.length > 1 ? 'them' : 'it'}.`,
        );
      }
      routed = { ...request };
      for (const name of unsupported) delete routed[name];
    }
    const problem = adapter.validate(routed);
    if (problem) throw new InvalidRequestError(`${request.model}: ${problem}`);
    return { provider, request: routed, dropped: provider.drop_unsupported_params ? unsupported : [] };
  }

  /**
   * Enqueues one job and reads its reply stream. The {@link Admission} is the
   * rate limiter's word that this request may have effects at all.
   */
  async dispatch(request: ChatRequest, provider: ProviderConfig, context: DispatchContext): Promise<Dispatch> {
    await this.checkDepth(provider);
    const jobId = context.jobId ?? randomUUID();
    const enqueuedAt = Date.now();
    const streamKey = responseStreamKey(this.options.prefix, jobId);
    const deadlineAt = enqueuedAt + provider.queue_timeout_ms + provider.timeout_ms;
    const job: ChatJobData = { v: 1, jobId, requestId: context.requestId, provider: provider.name, request, streamKey, enqueuedAt, deadlineAt };
    const liveness = this.options.liveness;
    if (liveness) {
      job.readerId = liveness.id;
      // Sent before the enqueue (one command connection in the API): no worker sees the job before the liveness key.
      liveness.touch();
    }
    await this.options.queues.enqueue(job, context.priority);
    return { jobId, provider, enqueuedAt, entries: this.readReply(streamKey, deadlineAt, provider, context.signal) };
  }

  /**
   * Reads the reply stream of a job another request enqueued (an identical
   * request in flight, see `src/cache/request-coalescer.ts`), with the same
   * deadlines as if this request had enqueued it now.
   */
  follow(jobId: string, provider: ProviderConfig, signal: AbortSignal): Dispatch {
    const enqueuedAt = Date.now();
    const streamKey = responseStreamKey(this.options.prefix, jobId);
    return { jobId, provider, enqueuedAt, entries: this.readReply(streamKey, enqueuedAt + provider.queue_timeout_ms + provider.timeout_ms, provider, signal) };
  }

  /** Reply entries up to the terminal one: the first within the job's deadline (+ grace), each later one within the idle time. */
  private async *readReply(streamKey: string, deadlineAt: number, provider: ProviderConfig, signal: AbortSignal): AsyncGenerator<StreamEntry> {
    let deadline = deadlineAt + this.graceMs;
    const idleMs = provider.stream_idle_timeout_ms + this.graceMs;
    for await (const entry of this.options.reader.read(streamKey, () => deadline, signal)) {
      deadline = Date.now() + idleMs;
      yield entry;
    }
  }

  /**
   * Enqueues an asynchronous job whose worker writes its outcome to `record`
   * instead of anyone reading the reply stream. It may wait in the queue up to
   * `maxWaitMs` (batch work is tolerant of queuing).
   */
  async submit(request: ChatRequest, provider: ProviderConfig, context: { requestId: string; jobId: string; admission: Admission; record: { key: string; ttlSeconds: number }; maxWaitMs: number; priority: number }): Promise<void> {
    await this.checkDepth(provider);
    const enqueuedAt = Date.now();
    await this.options.queues.enqueue(
      {
        v: 1,
        jobId: context.jobId,
        requestId: context.requestId,
        provider: provider.name,
        request,
        streamKey: responseStreamKey(this.options.prefix, context.jobId),
        enqueuedAt,
        deadlineAt: enqueuedAt + context.maxWaitMs + provider.timeout_ms,
        record: context.record,
      },
      context.priority,
    );
  }

  private async checkDepth(provider: ProviderConfig): Promise<void> {
    const depth = await this.options.queues.depth(provider.name);
    if (depth >= provider.max_queue_depth) {
      throw new ServiceUnavailableError(`The ${provider.name} queue is full (${depth} waiting jobs); retry shortly.`, { headers: { 'Retry-After': '1' } });
    }
  }

  /**
   * Drops a job: removed from `provider`'s queue if it still waits there, and
   * marked (a Redis key plus a pub/sub message) so that a worker skips it or
   * aborts its upstream call. Without `provider` only the mark is set.
   */
  async cancel(jobId: string, provider?: string): Promise<void> {
    const { redis, prefix } = this.options;
    // The mark goes first: a job a worker takes between the two steps still sees it.
    await Promise.all([redis.set(cancelKey(prefix, jobId), '1', 'EX', 600), redis.publish(cancelChannel(prefix), jobId)]);
    if (provider) await this.options.queues.remove(provider, jobId);
  }

  /** The provider name serving `model`, if any (for {@link cancel}). */
  providerOf(model: string): string | undefined {
    return this.options.config().modelIndex.get(model)?.name;
  }
}
