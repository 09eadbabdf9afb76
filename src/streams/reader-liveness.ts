import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.ts';

/**
 * Who still reads a job's reply stream. Each API process has an id and a
 * liveness key, `<prefix>:reader:<id>`, that it keeps alive (a short TTL,
 * refreshed on a timer) while it reads any reply stream; a job carries the id
 * of the API process that enqueued it (`ChatJobData.readerId`), and API
 * processes that follow the job instead of enqueuing their own (coalesced
 * identical requests) add theirs to the job's readers set,
 * `<prefix>:readers:<jobId>`. A job whose reader and followers all lost their
 * liveness key has nobody left to read its reply: workers cancel its upstream
 * call (`src/execution/reader-watch.ts`). One key per API process, not per
 * request: a request adds no Redis command of its own.
 */

/** This API process as a reader of reply streams, as the dispatcher and the coalescer need it. */
export interface ReaderIdentity {
  /** Carried by this process's jobs (`ChatJobData.readerId`). */
  readonly id: string;
  /**
   * Makes sure the liveness key exists before the caller's next command on
   * the same connection (an enqueue, a coalescing claim): a SET, unless one
   * went out or was confirmed within the refresh period.
   */
  touch(): void;
}

/** The liveness key of API process `id`. */
export function readerLivenessKey(prefix: string, id: string): string {
  return `${prefix}:{flight}:reader:${id}`;
}

/** The set of the API processes that follow job `jobId` (besides the one that enqueued it). */
export function jobReadersKey(prefix: string, jobId: string): string {
  return `${prefix}:{flight}:readers:${jobId}`;
}

/**
 * Lua: `has_live_reader(livenessPrefix, readerId, readersKey)`, true while
 * the job's own reader or any of its followers has a liveness key. Shared by
 * the workers' check and the coalescer's claim, so both agree on who reads.
 * Liveness keys are built from the prefix inside the script, as BullMQ's
 * scripts build job keys; on a Redis Cluster they share the `{flight}` hash
 * tag with the readers sets and the coalescing claims, so they are in the
 * slot of the script's declared keys.
 */
export const HAS_LIVE_READER_LUA = `
local function has_live_reader(liveness_prefix, reader_id, readers_key)
  if redis.call('EXISTS', liveness_prefix .. reader_id) == 1 then return true end
  for _, id in ipairs(redis.call('SMEMBERS', readers_key)) do
    if redis.call('EXISTS', liveness_prefix .. id) == 1 then return true end
  end
  return false
end
`;

/** Options of {@link ReaderLiveness}. */
export interface ReaderLivenessOptions {
  /** Command connection (fail-fast): a refresh must never wait in an offline queue. */
  redis: Redis;
  /** Redis key prefix. */
  prefix: string;
  /** Whether this process reads any reply stream now (the stream reader has subscriptions). */
  reading: () => boolean;
  /** This process's id. @defaultValue `<hostname>:<pid>:<random>` */
  id?: string;
  /**
   * Lifetime of the liveness key, ms: how long after this process died or
   * stalled its jobs still count as read. @defaultValue 5000
   */
  ttlMs?: number;
  /** Refresh period while reading, ms. @defaultValue 1000 */
  refreshMs?: number;
  logger?: Logger;
}

/**
 * The API side of reader liveness: keeps `<prefix>:reader:<id>` alive while
 * this process reads reply streams. One SET per refresh period at most,
 * whatever the traffic; none while idle.
 */
export class ReaderLiveness implements ReaderIdentity {
  readonly id: string;
  private readonly key: string;
  private readonly ttlMs: number;
  private readonly refreshMs: number;
  private readonly options: ReaderLivenessOptions;
  private timer: NodeJS.Timeout | undefined;
  /** Epoch ms at which the last confirmed SET was sent. */
  private confirmedAt = 0;
  private refreshing = false;
  private closed = false;

  constructor(options: ReaderLivenessOptions) {
    this.options = options;
    this.id = options.id ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.key = readerLivenessKey(options.prefix, this.id);
    this.ttlMs = options.ttlMs ?? 5_000;
    this.refreshMs = options.refreshMs ?? 1_000;
  }

  /** Refreshes every period while this process reads. */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => {
      if (this.options.reading() && !this.refreshing) this.refresh();
    }, this.refreshMs);
    this.timer.unref();
  }

  touch(): void {
    if (this.refreshing || this.closed || Date.now() - this.confirmedAt < this.refreshMs) return;
    this.refresh();
  }

  /** Stops refreshing and deletes the key: whatever this process still had in flight counts as unread at once. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.options.redis.del(this.key).catch(() => {});
  }

  private refresh(): void {
    const sentAt = Date.now();
    this.refreshing = true;
    this.options.redis
      .set(this.key, '1', 'PX', this.ttlMs)
      .then(
        () => {
          this.confirmedAt = sentAt;
        },
        (err: Error) => this.options.logger?.debug({ err }, 'reader liveness not refreshed'),
      )
      .finally(() => {
        this.refreshing = false;
      });
  }
}
