import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { CHAT_JOB_NAME, queueNameFor, type ChatJobData } from './job-contract.ts';

/** Options of {@link ChatQueues}. */
export interface ChatQueuesOptions {
  /** Command connection (fail-fast). Shared by every queue. */
  connection: Redis;
  /** BullMQ key prefix, e.g. `gw:bull`. */
  prefix: string;
  /** How long a measured queue depth is reused, ms. Default 250. */
  depthCacheMs?: number;
}

/**
 * The API side of the queues: one BullMQ queue per provider, created on first
 * use. Jobs are removed when finished: replies travel on Redis streams, not in
 * BullMQ's job records.
 */
export class ChatQueues {
  private readonly queues = new Map<string, Queue<ChatJobData>>();
  private readonly depths = new Map<string, { value: number; at: number; pending?: Promise<number> }>();

  private readonly options: ChatQueuesOptions;

  constructor(options: ChatQueuesOptions) {
    this.options = options;
  }

  private queueFor(provider: string): Queue<ChatJobData> {
    let queue = this.queues.get(provider);
    if (!queue) {
      queue = new Queue<ChatJobData>(queueNameFor(provider), {
        connection: this.options.connection,
        prefix: this.options.prefix,
        skipWaitingForReady: true,
        // BullMQ sets a queue's connection up once (an INFO for the version
        // check) and keeps the outcome for the queue's life: on this fail-fast
        // connection, a queue first used while Redis was down (by /health or a
        // /metrics scrape) would refuse every job for good. Without the check,
        // setting up sends nothing and cannot fail; the workers check the version.
        skipVersionCheck: true,
      });
      // Errors surface on add(); the emitter must not crash the process.
      queue.on('error', () => {});
      this.queues.set(provider, queue);
    }
    return queue;
  }

  /** Enqueues a chat job; `priority` follows BullMQ (1 = highest). */
  async enqueue(data: ChatJobData, priority?: number): Promise<void> {
    await this.queueFor(data.provider).add(CHAT_JOB_NAME, data, {
      jobId: data.jobId,
      attempts: 1,
      removeOnComplete: true,
      removeOnFail: true,
      ...(priority !== undefined ? { priority } : {}),
    });
  }

  /** Removes a job that still waits in `provider`'s queue; a job a worker holds stays (BullMQ refuses locked jobs). */
  async remove(provider: string, jobId: string): Promise<boolean> {
    return (await this.queueFor(provider).remove(jobId)) === 1;
  }

  /** Jobs waiting in `provider`'s queue (every job has a priority, so they sit in its prioritized set). */
  waiting(provider: string): Promise<number> {
    return this.queueFor(provider).getJobCountByTypes('wait', 'prioritized');
  }

  /**
   * Whether every queue of `providers` answers through the same path a job
   * is added on (readiness: a job can be enqueued). Rejects when one does not.
   */
  async probe(providers: readonly string[]): Promise<void> {
    await Promise.all(providers.map((provider) => this.waiting(provider)));
  }

  /**
   * Jobs waiting on a provider's queue. Sampled at most every `depthCacheMs`,
   * so backpressure costs no Redis round trip on most requests.
   */
  async depth(provider: string): Promise<number> {
    const now = Date.now();
    const cached = this.depths.get(provider);
    if (cached && now - cached.at < (this.options.depthCacheMs ?? 250)) return cached.value;
    if (cached?.pending) return cached.pending;
    const pending = this.waiting(provider)
      .then((value) => {
        this.depths.set(provider, { value, at: Date.now() });
        return value;
      })
      .finally(() => {
        const entry = this.depths.get(provider);
        if (entry?.pending === pending) delete entry.pending;
      });
    this.depths.set(provider, { value: cached?.value ?? 0, at: cached?.at ?? 0, pending });
    return pending;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
  }
}
