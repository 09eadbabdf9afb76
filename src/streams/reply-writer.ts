import type { Redis } from 'ioredis';
import type { Usage } from '../chat/types.ts';
import type { GatewayError } from '../errors/catalog.ts';
import { encodeError, entryFields, type StreamEntryType } from './protocol.ts';

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
 * {@link flush} awaits them all and reports the first error.
 */
export class ReplyWriter {
  private pending: Promise<unknown>[] = [];
  private expirySet = false;
  private timingSent = false;
  /** Entries written so far. */
  written = 0;

  private readonly options: ReplyWriterOptions;

  constructor(options: ReplyWriterOptions) {
    this.options = options;
  }

  private add(t: StreamEntryType, d: string, usage?: Usage): void {
    const { redis, key, timing } = this.options;
    const times = this.timingSent || !timing ? undefined : timing();
    this.timingSent = true;
    this.pending.push(redis.xadd(key, '*', ...entryFields(t, d, times, usage)));
    if (!this.expirySet) {
      this.expirySet = true;
      this.pending.push(redis.expire(key, this.options.ttlSeconds));
    }
    this.written++;
  }

  chunk(json: string): void {
    this.add('chunk', json);
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
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }
}
