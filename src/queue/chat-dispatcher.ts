import { randomBytes, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ChatRequest } from '../chat/types.ts';
import type { GatewayConfig, ProviderConfig } from '../config/gateway-config.ts';
import { servesEmbeddings } from '../embeddings/embeddings-wire.ts';
import { InvalidRequestError, ModelNotFoundError, ProviderTimeoutError } from '../errors/catalog.ts';
import type { WorkerPresence } from '../health/worker-presence.ts';
import type { Logger } from '../observability/logger.ts';
import { isInert, paramNames } from '../providers/inert-params.ts';
import { adapterFor } from '../providers/registry.ts';
import { cancelChannel, cancelKey, isTerminal, responseStreamKey, type StreamEntry } from '../streams/protocol.ts';
import type { ReaderIdentity } from '../streams/reader-liveness.ts';
import type { ReplyRelease } from '../streams/reply-release.ts';
import { ReplyWriter } from '../streams/reply-writer.ts';
import type { ReplyStreamReader } from '../streams/stream-reader.ts';
import type { Admission } from '../ratelimit/admission.ts';
import type { ChatQueues } from './chat-queues.ts';
import type { ChatJobData } from './job-contract.ts';
import type { QueuePlace, QueuePlaces } from './queue-places.ts';
import { ProviderKeys } from '../providers/provider-keys.ts';

/** A follower is one of the readers its leader counted. */
const FOLLOWER = (): Promise<number> => Promise.resolve(-1);

/** Options of {@link ChatDispatcher}. */
export interface ChatDispatcherOptions {
  config: () => GatewayConfig;
  queues: ChatQueues;
  /** Places in the queues (`max_queue_depth`). */
  places: QueuePlaces;
  /** Which providers have a live worker. */
  workers: WorkerPresence;
  reader: ReplyStreamReader;
  /** Command connection (cancel marks). */
  redis: Redis;
  prefix: string;
  /** Where provider keys are looked up to tell an unconfigured provider. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Extra wait beyond the worker's own deadlines, so its error arrives first. @defaultValue 1000 ms */
  graceMs?: number;
  /**
   * This process as the reader of its jobs' replies: its id goes with every
   * interactive job, so a worker can tell when nobody reads a reply any more.
   * @defaultValue none: jobs carry no reader and are never given up for lack of one
   */
  liveness?: ReaderIdentity;
  /**
   * Expiry of a reply stream the API ends itself (a job taken back from its
   * queue), seconds: only the requests reading it right then need it.
   * @defaultValue 60
   */
  streamTtlSeconds?: number;
  /**
   * Deletes a reply stream once its readers have the terminal entry.
   * @defaultValue none: reply streams live out their TTL
   */
  release?: ReplyRelease;
  logger?: Logger;
}

/** A request matched to its provider: see {@link ChatDispatcher.route}. */
export interface RoutedRequest {
  provider: ProviderConfig;
  /** The request to send on: without the dropped parameters. */
  request: ChatRequest;
  /** Parameters dropped because the provider cannot honour them (sent as `X-Gateway-Dropped-Params`). */
  dropped: readonly string[];
}

/** Who dispatches, and how. */
export interface DispatchContext {
  requestId: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  priority?: number;
  /**
   * Longest the job may wait in the queue before a worker starts it, ms.
   * @defaultValue the provider's queue_timeout_ms
   */
  waitMs?: number;
  /**
   * Nobody may be reading when the reply arrives (batch lines, whose runner
   * may restart and come back for it): the job names no reader, so a worker
   * finishes it rather than giving it up when this process goes away.
   * @defaultValue false
   */
  detached?: boolean;
  /** W3C trace context the job carries to the worker (job-contract.ts `trace`). @defaultValue none */
  trace?: ChatJobData['trace'];
  /**
   * How many other requests read this job's reply through this one (a
   * coalescing leader's followers), asked once this request is done with it;
   * undefined when unknown, which leaves the stream to its TTL.
   * @defaultValue nobody else: the stream is deleted once this request has its terminal entry
   */
  otherReaders?: () => Promise<number | undefined>;
  /** An asynchronous job's Redis record, which its worker marks `in_progress` ({@link ChatJobData.record}). */
  record?: { key: string; ttlSeconds: number };
  /** An embeddings job's request ({@link ChatJobData.embeddings}). @defaultValue none: a chat job */
  embeddings?: ChatJobData['embeddings'];
  /** A native Responses job's body ({@link ChatJobData.responses}). @defaultValue none: a chat job */
  responses?: ChatJobData['responses'];
}

/** Options of {@link ChatDispatcher.reserve}. */
export interface ReserveOptions {
  /**
   * The job's id, when others must know it first (request coalescing).
   * @defaultValue a random UUID
   */
  jobId?: string;
  /**
   * Refuse at once when no live worker serves the provider. Interactive
   * requests want to know now; batch work may wait for a worker to come.
   * @defaultValue true
   */
  requireWorker?: boolean;
  /**
   * Longest the job may wait in the queue, ms: the place lapses then.
   * @defaultValue the provider's queue_timeout_ms
   */
  waitMs?: number;
  /**
   * Background work (batch lines, asynchronous jobs): takes only places that
   * interactive requests leave, so it never makes one of them get "queue is
   * full" (see `src/queue/queue-places.ts`).
   * @defaultValue false
   */
  background?: boolean;
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
 * The API side of the broker: routes a request to its provider, takes a place
 * in its queue, enqueues one job and reads the reply stream. Deadlines: a
 * worker must start the job within queue_timeout_ms, or the API takes it back
 * off the queue and answers 504; the first entry must arrive within
 * queue_timeout_ms + timeout_ms (+ grace); each later one within
 * stream_idle_timeout_ms (+ grace).
 */
export class ChatDispatcher {
  private readonly keys: ProviderKeys;
  private readonly graceMs: number;
  /**
   * Redis Cluster hash tag of this process's job ids (`{tag}<uuid>`): its
   * reply streams share one slot, so one XREAD reads them all, while other
   * processes' streams land on other slots.
   */
  private readonly jobTag = randomBytes(4).toString('hex');

  private readonly options: ChatDispatcherOptions;

  constructor(options: ChatDispatcherOptions) {
    this.options = options;
    this.keys = new ProviderKeys(options.env);
    this.graceMs = options.graceMs ?? 1_000;
  }

  /** A new job id of this process, under its hash tag (`name` instead of a random UUID after it). */
  newJobId(name: string = randomUUID()): string {
    return `{${this.jobTag}}${name}`;
  }

  /**
   * The provider serving `request.model` (or `deployment`, one of the
   * provider entries serving it, chosen by the router), and the request as it can be sent
   * there; throws the client's error when there is no usable provider or the
   * request cannot be expressed in its format. Parameters the format cannot
   * honour are a 400 naming them, unless the provider drops them
   * (`drop_unsupported_params`), which {@link RoutedRequest.dropped} reports.
   */
  route(request: ChatRequest, deployment?: ProviderConfig): RoutedRequest {
    const provider = deployment ?? this.options.config().modelIndex.get(request.model);
    if (!provider) throw new ModelNotFoundError(request.model);
    this.keys.require(provider);
    const adapter = adapterFor(provider.format);
    const unsupportedAll = adapter.unsupportedParams(request);
    // Inert ones go quietly whatever the provider's setting; the others need drop_unsupported_params.
    const inert = unsupportedAll.filter((name) => isInert(name, request));
    const unsupported = inert.length === 0 ? unsupportedAll : unsupportedAll.filter((name) => !inert.includes(name));
    let routed = request;
    if (inert.length > 0) {
      routed = { ...request };
      for (const name of inert) delete routed[name];
    }
    const named = (params: Array<keyof ChatRequest>) => params.flatMap((name) => paramNames(name, request));
    if (unsupported.length > 0) {
      if (!provider.drop_unsupported_params) {
        const list = named(unsupported);
        const names = list.map((name) => `'${name}'`).join(', ');
        throw new InvalidRequestError(
          `${names} ${list.length > 1 ? 'are' : 'is'} not supported by ${provider.name} (model '${request.model}'). Remove ${list.length > 1 ? 'them' : 'it'}, or set drop_unsupported_params: true for ${provider.name} in config.yaml to have the gateway drop ${list.length > 1 ? 'them' : 'it'}.`,
        );
      }
      routed = { ...routed };
      for (const name of unsupported) delete routed[name];
    }
    const problem = adapter.validate(routed);
    if (problem) throw new InvalidRequestError(`${request.model}: ${problem}`);
    const dropped = named(provider.drop_unsupported_params ? [...inert, ...unsupported] : inert);
    const leftOut = adapter.leftOut?.(routed) ?? [];
    return { provider, request: routed, dropped: leftOut.length > 0 ? [...dropped, ...leftOut] : dropped };
  }

  /**
   * The provider serving the embedding model `model` (`embedding_models`);
   * throws the client's error for a chat model, an unknown one, a provider
   * whose format has no embeddings API, or one without its key.
   */
  routeEmbeddings(model: string): ProviderConfig {
    const config = this.options.config();
    const provider = config.embeddingIndex.get(model);
    if (!provider) {
      if (config.modelIndex.has(model))
        throw new InvalidRequestError(
          `'${model}' is a chat model; /v1/embeddings serves the embedding models of this gateway (embedding_models in config.yaml).`,
        );
      throw new ModelNotFoundError(model);
    }
    if (!servesEmbeddings(provider.format))
      throw new InvalidRequestError(
        `'${model}' is served by ${provider.name}, an ${provider.format}-format provider, which has no embeddings API.`,
      );
    this.keys.require(provider);
    return provider;
  }

  /**
   * Takes a place in `provider`'s queue for one job: 503
   * `service_unavailable` at once when no worker serves the provider (unless
   * `requireWorker` is false), or when its queue holds max_queue_depth jobs
   * already (interactive ones; for `background`, of both kinds). The {@link Admission} is
   * the rate limiter's word that this request may have effects at all.
   */
  async reserve(provider: ProviderConfig, _admission: Admission, options: ReserveOptions = {}): Promise<QueuePlace> {
    if (options.requireWorker !== false) await this.options.workers.requireLiveWorker(provider.name);
    const tier = options.background ? 'background' : 'interactive';
    return this.options.places.take(
      provider.name,
      options.jobId ?? this.newJobId(),
      provider.max_queue_depth,
      options.waitMs ?? provider.queue_timeout_ms,
      tier,
    );
  }

  /** Gives back a place that will not be used (its request follows another's job instead). */
  releasePlace(place: QueuePlace): void {
    this.options.places.release(place.provider, place.jobId).catch(() => {});
  }

  /**
   * Enqueues one job in the place taken for it ({@link reserve}) and reads
   * its reply stream. A job no worker has started by queue_timeout_ms is
   * taken back off the queue and its stream ends with `provider_timeout`,
   * even when this request's client has left but coalesced ones still read it.
   */
  async dispatch(
    request: ChatRequest,
    provider: ProviderConfig,
    place: QueuePlace,
    context: DispatchContext,
  ): Promise<Dispatch> {
    const jobId = place.jobId;
    const enqueuedAt = Date.now();
    const streamKey = responseStreamKey(this.options.prefix, jobId);
    const startBy = enqueuedAt + (context.waitMs ?? provider.queue_timeout_ms);
    const deadlineAt = startBy + provider.timeout_ms;
    // An embeddings or native Responses job's texts are in its own field; its request only names the model, so they are not sent twice.
    const sent =
      context.embeddings || context.responses
        ? { model: request.model, messages: [], n: 1, stream: request.stream, include_usage: false }
        : request;
    const job: ChatJobData = {
      v: 1,
      jobId,
      requestId: context.requestId,
      provider: provider.name,
      request: sent,
      streamKey,
      enqueuedAt,
      startBy,
      deadlineAt,
    };
    if (context.trace) job.trace = context.trace;
    if (context.record) job.record = context.record;
    if (context.embeddings) job.embeddings = context.embeddings;
    if (context.responses) job.responses = context.responses;
    const liveness = this.options.liveness;
    if (liveness && context.detached !== true) {
      job.readerId = liveness.id;
      // Sent before the enqueue (one command connection in the API): no worker sees the job before the liveness key.
      liveness.touch();
    }
    await this.enqueue(job, place, context.priority);
    // One timer per job, cleared by its first reply entry: taking a job back costs nothing unless it is still waiting.
    const takeBack = setTimeout(
      () => void this.takeBack(provider.name, jobId, streamKey),
      Math.max(0, startBy - Date.now()),
    );
    takeBack.unref();
    const entries = this.readReply(
      streamKey,
      deadlineAt,
      provider,
      context.signal,
      context.otherReaders ?? (() => Promise.resolve(0)),
      () => clearTimeout(takeBack),
    );
    return { jobId, provider, enqueuedAt, entries };
  }

  /**
   * Reads the reply stream of a job another request enqueued (an identical
   * request in flight, see `src/cache/request-coalescer.ts`), with the same
   * deadlines as if this request had enqueued it now. If that job waits too
   * long, the request that enqueued it takes it back and ends the stream.
   */
  follow(jobId: string, provider: ProviderConfig, signal: AbortSignal): Dispatch {
    const enqueuedAt = Date.now();
    const streamKey = responseStreamKey(this.options.prefix, jobId);
    return {
      jobId,
      provider,
      enqueuedAt,
      entries: this.readReply(
        streamKey,
        enqueuedAt + provider.queue_timeout_ms + provider.timeout_ms,
        provider,
        signal,
        FOLLOWER,
      ),
    };
  }

  /**
   * Reply entries up to the terminal one: the first within the job's deadline
   * (+ grace), each later one within the idle time. Once the caller is done
   * with them, the stream is released (`otherReaders`: see {@link DispatchContext.otherReaders}).
   */
  private async *readReply(
    streamKey: string,
    deadlineAt: number,
    provider: ProviderConfig,
    signal: AbortSignal,
    otherReaders: () => Promise<number | undefined>,
    onEntry?: () => void,
  ): AsyncGenerator<StreamEntry> {
    let deadline = deadlineAt + this.graceMs;
    const idleMs = provider.stream_idle_timeout_ms + this.graceMs;
    let terminal = false;
    try {
      for await (const entry of this.options.reader.read(streamKey, () => deadline, signal)) {
        onEntry?.();
        deadline = Date.now() + idleMs;
        terminal = isTerminal(entry.t);
        yield entry;
      }
    } finally {
      const release = this.options.release;
      // Off the reply's path: the client has its answer whatever becomes of the stream.
      if (release)
        void otherReaders()
          .then((others) => release.done(streamKey, others, terminal))
          .catch((err: Error) =>
            this.options.logger?.debug({ err: err.message, streamKey }, 'reply stream left to its TTL'),
          );
    }
  }

  /**
   * A job no worker started within queue_timeout_ms: if it still waits in the
   * queue, it leaves it, and its reply stream ends with `provider_timeout`
   * (so every request reading it, coalesced ones included, gets the same
   * answer). A job a worker already holds stays: its reply is on the way.
   */
  private async takeBack(provider: string, jobId: string, streamKey: string): Promise<void> {
    try {
      if (!(await this.options.queues.remove(provider, jobId))) return;
      this.releasePlace({ provider, jobId });
      const writer = new ReplyWriter({
        redis: this.options.redis,
        key: streamKey,
        ttlSeconds: this.options.streamTtlSeconds ?? 60,
      });
      writer.error(
        new ProviderTimeoutError(
          `No ${provider} worker was free within the queue timeout; the request was taken off the queue.`,
        ),
      );
      await writer.flush();
    } catch (err) {
      // The reader's own deadline still ends the request.
      this.options.logger?.warn({ err, jobId, provider }, 'could not take a late job back from its queue');
    }
  }

  /** Adds the job; its place is given back when it cannot be added. */
  private async enqueue(job: ChatJobData, place: QueuePlace, priority?: number): Promise<void> {
    try {
      await this.options.queues.enqueue(job, place, priority);
    } catch (err) {
      this.releasePlace(place);
      throw err;
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
    await Promise.all([
      redis.set(cancelKey(prefix, jobId), '1', 'EX', 600),
      redis.publish(cancelChannel(prefix), jobId),
    ]);
    if (provider)
      await Promise.all([this.options.queues.remove(provider, jobId), this.options.places.release(provider, jobId)]);
  }

  /**
   * Where a job enqueued by an earlier process stands, for a reader that
   * comes back to it: `withdrawn` when it still waited and is now off the
   * queue (enqueue it again), `running` when a worker holds it or its reply
   * stream exists (follow it), `gone` when Redis knows nothing of it.
   */
  async reclaim(provider: string, jobId: string): Promise<'withdrawn' | 'running' | 'gone'> {
    const { queues, redis, prefix } = this.options;
    const streamed = async () => (await redis.exists(responseStreamKey(prefix, jobId))) === 1;
    // A reply stream means the job ran or runs: its answer is there or on its way. Asked first, since a job
    // leaves its queue the moment it finishes (and BullMQ's remove counts a job that is not there as removed).
    if (await streamed()) return 'running';
    const where = await queues.whereIs(provider, jobId);
    if (where === 'waiting' && (await queues.remove(provider, jobId)) && !(await streamed())) {
      this.releasePlace({ provider, jobId });
      return 'withdrawn';
    }
    if (where !== undefined) return 'running';
    // Finished between the two looks: its reply is in the stream.
    return (await streamed()) ? 'running' : 'gone';
  }

  /** The provider name serving `model`, if any (for {@link cancel}). */
  providerOf(model: string): string | undefined {
    return this.options.config().modelIndex.get(model)?.name;
  }
}
