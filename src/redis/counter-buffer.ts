import type { Redis } from 'ioredis';

/** Options of {@link CounterBuffer}. */
export interface CounterBufferOptions {
  redis: Redis;
  /** How often buffered increments are written, ms. @defaultValue 200 */
  flushMs?: number;
  /** Called when a flush fails (Redis down); those increments are lost, never the request. */
  onError?: (err: Error) => void;
}

/**
 * Hash counters shared by every process (statistics), incremented in memory
 * and written to Redis as one pipeline every `flushMs`. On the hot path this
 * turns several HINCRBY per request into a few per flush. Readers in the same
 * process call {@link flush} first; other processes' increments arrive within
 * `flushMs`.
 */
export class CounterBuffer {
  private readonly redis: Redis;
  private readonly flushMs: number;
  private readonly onError: ((err: Error) => void) | undefined;
  /** key -> field -> buffered delta; `float` fields are written with HINCRBYFLOAT. */
  private pending = new Map<string, Map<string, { delta: number; float: boolean }>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(options: CounterBufferOptions) {
    this.redis = options.redis;
    this.flushMs = options.flushMs ?? 200;
    this.onError = options.onError;
  }

  /** Adds an integer to a counter (HINCRBY). */
  add(key: string, field: string, delta = 1): void {
    this.buffer(key, field, delta, false);
  }

  /** Adds to a float counter (HINCRBYFLOAT), e.g. a sum of similarities. */
  addFloat(key: string, field: string, delta: number): void {
    this.buffer(key, field, delta, true);
  }

  private buffer(key: string, field: string, delta: number, float: boolean): void {
    let fields = this.pending.get(key);
    if (!fields) {
      fields = new Map();
      this.pending.set(key, fields);
    }
    const entry = fields.get(field);
    if (entry) entry.delta += delta;
    else fields.set(field, { delta, float });
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes what is buffered now. Never throws. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const pipeline = this.redis.pipeline();
    for (const [key, fields] of batch) {
      for (const [field, { delta, float }] of fields) {
        if (float) pipeline.hincrbyfloat(key, field, delta);
        else pipeline.hincrby(key, field, delta);
      }
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      const failed = results.find(([err]) => err);
      if (failed?.[0]) this.onError?.(failed[0]);
    } catch (err) {
      this.onError?.(err as Error);
    }
  }

  /** Flushes and stops the timer. */
  async close(): Promise<void> {
    await this.flush();
  }
}
