import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.ts';
import { HAS_LIVE_READER_LUA, jobReadersKey, readerLivenessKey } from '../streams/reader-liveness.ts';

// KEYS[i]: readers set of job i. ARGV[1]: liveness key prefix; ARGV[i + 1]: the reader id job i carries. Returns 1 (read) or 0 per job.
const CHECK = `${HAS_LIVE_READER_LUA}
local out = {}
for i = 1, #KEYS do
  out[i] = has_live_reader(ARGV[1], ARGV[i + 1], KEYS[i]) and 1 or 0
end
return out`;

/** Options of {@link ReaderWatch}. */
export interface ReaderWatchOptions {
  /** Connection for the checks. */
  redis: Redis;
  /** Redis key prefix. */
  prefix: string;
  logger?: Logger;
  /** How often the readers of running jobs are looked at, ms. @defaultValue 1000 */
  intervalMs?: number;
  /**
   * Checks in a row that must find nobody reading before a job is given up.
   * More than one, so a liveness key that is being re-written (Redis just
   * restarted empty, an API process reconnecting) is not taken for a death.
   * @defaultValue 2
   */
  misses?: number;
}

interface Watched {
  readerId: string;
  misses: number;
  onGone: () => void;
}

/**
 * The worker side of reader liveness (`src/streams/reader-liveness.ts`):
 * while jobs run, one script per interval tells, for all of them at once,
 * whether anyone still reads their reply; a job found unread `misses` times
 * in a row is handed to its `onGone` (the executor aborts its upstream call).
 * A check that fails (Redis away) decides nothing. No timer runs while no
 * watched job does.
 */
export class ReaderWatch {
  private readonly watched = new Map<string, Watched>();
  private readonly intervalMs: number;
  private readonly misses: number;
  private readonly options: ReaderWatchOptions;
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(options: ReaderWatchOptions) {
    this.options = options;
    this.intervalMs = options.intervalMs ?? 1_000;
    this.misses = options.misses ?? 2;
  }

  /** Jobs watched now. */
  get size(): number {
    return this.watched.size;
  }

  /** Watches job `jobId`, read by API process `readerId`; returns the function that stops watching it. */
  watch(jobId: string, readerId: string, onGone: () => void): () => void {
    const entry: Watched = { readerId, misses: 0, onGone };
    this.watched.set(jobId, entry);
    if (!this.timer) {
      this.timer = setInterval(() => void this.check(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      if (this.watched.get(jobId) === entry) this.watched.delete(jobId);
      if (this.watched.size === 0) this.stopTimer();
    };
  }

  close(): void {
    this.watched.clear();
    this.stopTimer();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async check(): Promise<void> {
    // A check waiting for Redis must not be stacked with more.
    if (this.checking || this.watched.size === 0) return;
    this.checking = true;
    const jobs = [...this.watched];
    try {
      const keys = jobs.map(([jobId]) => jobReadersKey(this.options.prefix, jobId));
      const readers = jobs.map(([, w]) => w.readerId);
      const read = (await this.options.redis.eval(
        CHECK,
        keys.length,
        ...keys,
        readerLivenessKey(this.options.prefix, ''),
        ...readers,
      )) as number[];
      jobs.forEach(([jobId, w], i) => {
        if (this.watched.get(jobId) !== w) return; // finished meanwhile
        if (Number(read[i]) === 1) {
          w.misses = 0;
          return;
        }
        if (++w.misses < this.misses) return;
        this.watched.delete(jobId);
        w.onGone();
      });
      if (this.watched.size === 0) this.stopTimer();
    } catch (err) {
      this.options.logger?.debug({ err }, 'readers of running jobs not checked');
    } finally {
      this.checking = false;
    }
  }
}
