import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { bullPrefix, CHAT_JOB_NAME, queueNameFor, type ChatJobData } from './job-contract.ts';
import type { QueuePlace } from './queue-places.ts';

/** Options of {@link ChatQueues}. */
export interface ChatQueuesOptions {
  /** Command connection (fail-fast). Shared by every queue. */
  connection: Redis;
  /** The gateway's Redis key prefix; each queue has its own BullMQ prefix under it ({@link bullPrefix}). */
  prefix: string;
}

/**
 * The API side of the queues: one BullMQ queue per provider, created on first
 * use. Jobs are removed when finished: replies travel on Redis streams, not in
 * BullMQ's job records.
 */
export class ChatQueues {
  private readonly queues = new Map<string, Queue<ChatJobData>>();

  private readonly options: ChatQueuesOptions;

  constructor(options: ChatQueuesOptions) {
    this.options = options;
  }

  private queueFor(provider: string): Queue<ChatJobData> {
    let queue = this.queues.get(provider);
    if (!queue) {
      queue = new Queue<ChatJobData>(queueNameFor(provider), {
        connection: this.options.connection,
        prefix: bullPrefix(this.options.prefix, provider),
        skipWaitingForReady: true,
        // BullMQ sets a queue's connection up once (an INFO for the version
        // check) and keeps the outcome for the queue's life: on this fail-fast
        // connection, a queue first used while Redis was down (by /health or a
        // /metrics scrape) would refuse every job for good. Without the check,
        // setting up sends nothing and cannot fail; the workers check the version.
        skipVersionCheck: true,
        // Nothing reads the queue's event stream: BullMQ's default keeps 10,000 events (a few MiB) in Redis.
        streams: { events: { maxLen: 500 } },
      });
      // Errors surface on add(); the emitter must not crash the process.
      queue.on('error', () => {});
      this.queues.set(provider, queue);
    }
    return queue;
  }

  /** Enqueues a chat job in the place taken for it; `priority` follows BullMQ (1 = highest). */
  async enqueue(data: ChatJobData, place: QueuePlace, priority?: number): Promise<void> {
    await this.queueFor(place.provider).add(CHAT_JOB_NAME, data, {
      jobId: place.jobId,
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

  /**
   * Where `provider`'s queue holds the job: `waiting` (for a worker, or for a
   * retry after its worker died), `active` (a worker holds it), or undefined
   * when the queue no longer has it (finished jobs are removed at once).
   */
  async whereIs(provider: string, jobId: string): Promise<'waiting' | 'active' | undefined> {
    const job = await this.queueFor(provider).getJob(jobId);
    if (!job) return undefined;
    const state = await job.getState();
    if (state === 'active') return 'active';
    return state === 'completed' || state === 'failed' || state === 'unknown' ? undefined : 'waiting';
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

  async close(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
  }
}
