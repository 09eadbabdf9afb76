import type { ChatRequest } from '../chat/types.ts';
import type { EmbeddingsRequest } from '../embeddings/request-schema.ts';

/**
 * The job contract between the API tier and the provider workers: the data of
 * one BullMQ job on a provider's queue. Workers answer on the Redis stream
 * named by {@link ChatJobData.streamKey} (protocol in `src/streams/protocol.ts`).
 * Nothing secret is in here: no gateway key, no upstream key.
 */
export interface ChatJobData {
  /** Contract version; bump on incompatible change. */
  v: 1;
  /** Unique per execution; also the BullMQ job id and the stream's suffix. */
  jobId: string;
  /** The client-facing request id, for logs only. */
  requestId: string;
  /** Provider name from config.yaml. */
  provider: string;
  /** Validated and, when DLP redacts, already redacted. */
  request: ChatRequest;
  /** Redis stream the worker writes the reply to. */
  streamKey: string;
  /** Epoch ms when the API enqueued the job. */
  enqueuedAt: number;
  /**
   * Epoch ms (API clock) by which a worker must start the job: enqueuedAt +
   * queue_timeout_ms (ASYNC_JOB_MAX_WAIT_MS for asynchronous jobs). A worker
   * that receives it later refuses it with `provider_timeout`. Absent from
   * jobs of API processes older than this field; `deadlineAt` applies then.
   */
  startBy?: number;
  /** Epoch ms after which nobody waits for the reply: a worker skips the job, retries stop. */
  deadlineAt: number;
  /**
   * Id of the API process that reads the reply stream (interactive jobs):
   * while the job runs, the worker cancels its upstream call once neither
   * that process nor any process following the job keeps its liveness key
   * (`src/streams/reader-liveness.ts`). Absent for asynchronous jobs and from
   * API processes that predate it: such a job is never given up for lack of
   * readers. Added without a version bump: older workers ignore it.
   */
  readerId?: string;
  /**
   * Set for asynchronous jobs: the Redis hash of the job's record, which the
   * worker moves to `in_progress`, then `completed` (with the result) or
   * `failed` (see `src/queue/async-job-record.ts`). The API reads only when
   * the job started from it; the outcome reaches the job's row through the
   * reply stream, as for any batch line.
   */
  record?: { key: string; ttlSeconds: number };
  /**
   * W3C trace context (`traceparent`, `tracestate`) of the API span that
   * enqueued the job, so the worker's spans join the request's trace. Absent
   * when the API traces nothing. Added without a version bump: older workers
   * ignore it. Identifiers only: nothing of the request is in it.
   */
  trace?: { traceparent: string; tracestate?: string };
  /**
   * Set for an embeddings job (`POST /v1/embeddings`): the worker calls the
   * provider's embeddings API instead of chat and answers one `result` entry
   * holding OpenAI's embeddings list; `request` then only names the model.
   * Workers that predate it would run the empty chat request and answer a
   * provider error, so workers are upgraded before API processes
   * (docs/decisions/embeddings-through-the-queue.md).
   */
  embeddings?: EmbeddingsRequest;
  /**
   * Set for a native Responses job (a provider with `responses_api: native`):
   * the Responses body to forward to the upstream's `/responses`, texts as DLP
   * left them; the worker answers with the upstream's `response` object
   * (`result`) or its stream events (one `chunk` each, then `end`), and
   * `request` only names the model. Workers are upgraded before API
   * processes, as for `embeddings`.
   */
  responses?: Record<string, unknown>;
}

/** BullMQ job name used for chat jobs. */
export const CHAT_JOB_NAME = 'chat';

/**
 * BullMQ's key prefix of `provider`'s queue under the gateway's Redis key
 * prefix. The hash tag keeps every key of one queue in one Redis Cluster slot
 * (BullMQ's scripts touch several at once) while queues spread over shards.
 */
export function bullPrefix(redisKeyPrefix: string, provider: string): string {
  return `${redisKeyPrefix}:bull:{${provider}}`;
}

/** The BullMQ queue name of a provider. */
export function queueNameFor(provider: string): string {
  return `chat-${provider}`;
}
