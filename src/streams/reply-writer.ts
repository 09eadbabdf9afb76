import type { Redis } from 'ioredis';
import type { Usage } from '../chat/types.ts';
import type { GatewayError } from '../errors/catalog.ts';
import { encodeError, entryFields, joinChunks, type StreamEntryType } from './protocol.ts';

/** Options of {@link ReplyWriter}. */
export interface ReplyWriterOptions {
  redis: Redis;
  /** The reply stream's key. */
  key: string;
  /** Expiry of the stream, set with its first entry (a safety net: readers delete it once they have the reply). */
  ttlSeconds: number;
  /** Timings carried by the first entry (queue wait, upstream time); none when undefined. */
  timing?: () => { q: number; u: number };
}

/**
 * Writes one reply stream (protocol in `./protocol.ts`). Commands are issued
 * without awaiting each one (ioredis keeps their order on the connection);
 * {@link flush} awaits them all and reports the first error. The chunks of one
 * event-loop turn (every event of one upstream read) leave as one entry: an
 * entry per chunk cost a command, a Redis write and a reader's wake-up each.
 */
export class ReplyWriter {
  private pending: Promise<unknown>[] = [];
  /** Chunks of this turn not yet written. */
  private chunks: string[] = [];
  private expirySet = false;
  private timingSent = false;

  private readonly options: ReplyWriterOptions;

  constructor(options: ReplyWriterOptions) {
    this.options = options;
  }

  private add(t: StreamEntryType, d: string, usage?: Usage): void {
    if (t !== 'chunk') this.writeChunks();
    const { redis, key, timing } = this.options;
    const times = this.timingSent || !timing ? undefined : timing();
    this.timingSent = true;
    this.pending.push(redis.xadd(key, '*', ...entryFields(t, d, times, usage)));
    if (!this.expirySet) {
      this.expirySet = true;
      this.pending.push(redis.expire(key, this.options.ttlSeconds));
    }
  }

  chunk(json: string): void {
    if (this.chunks.push(json) === 1) queueMicrotask(() => this.writeChunks());
  }

  private writeChunks(): void {
    if (this.chunks.length === 0) return;
    const chunks = this.chunks;
    this.chunks = [];
    this.add('chunk', joinChunks(chunks));
  }

  result(json: string, usage: Usage): void {
    this.add('result', json, usage);
  }

  end(usage: Usage): void {
    this.add('end', '{}', usage);
  }

  error(err: GatewayError): void {
    this.add('error', encodeError(err));
  }

  async flush(): Promise<void> {
    this.writeChunks();
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }
}
