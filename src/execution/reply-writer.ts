import type { Redis } from 'ioredis';
import { entryFields, type StreamEntryType, type StreamErrorPayload } from '../streams/protocol.ts';
import type { Usage } from '../chat/types.ts';
import type { GatewayError } from '../errors/catalog.ts';

/**
 * Writes one job's reply stream (protocol in `src/streams/protocol.ts`).
 * Commands are issued without awaiting each one (ioredis keeps their order on
 * the connection); {@link flush} awaits them all and reports the first error.
 */
export class ReplyWriter {
  private pending: Promise<unknown>[] = [];
  private expirySet = false;
  private timingSent = false;
  /** Entries written so far. */
  written = 0;

  private readonly redis: Redis;
  private readonly key: string;
  private readonly ttlSeconds: number;
  private readonly timing: () => { q: number; u: number };

  constructor(redis: Redis, key: string, ttlSeconds: number, timing: () => { q: number; u: number }) {
    this.redis = redis;
    this.key = key;
    this.ttlSeconds = ttlSeconds;
    this.timing = timing;
  }

  private add(t: StreamEntryType, d: string, usage?: Usage): void {
    const timing = this.timingSent ? undefined : this.timing();
    this.timingSent = true;
    this.pending.push(this.redis.xadd(this.key, '*', ...entryFields(t, d, timing, usage)));
    if (!this.expirySet) {
      this.expirySet = true;
      this.pending.push(this.redis.expire(this.key, this.ttlSeconds));
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
    const payload: StreamErrorPayload = { code: err.code, message: err.message };
    this.add('error', JSON.stringify(payload));
  }

  async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }
}
