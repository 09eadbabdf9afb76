import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors/catalog.ts';
import { waitForReady } from '../redis/connections.ts';
import { parseEntry, type StreamEntry } from './protocol.ts';

/** Options of {@link StreamReader}. */
export interface StreamReaderOptions {
  /** Makes a new blocking connection. */
  connect: () => Redis;
  /** Idle connections kept for reuse. Default 64. */
  maxIdle?: number;
  /** Longest single XREAD BLOCK, ms; abort is noticed at this granularity at worst. Default 2000. */
  blockSliceMs?: number;
  /** How long a new connection may take to become ready, ms. Default 2000. */
  connectTimeoutMs?: number;
}

/** Thrown when nothing arrived before the deadline. */
export class StreamDeadlineError extends Error {
  constructor() {
    super('no reply before the deadline');
    this.name = 'StreamDeadlineError';
  }
}

/** Thrown when the caller's signal aborted the read. */
export class StreamAbortedError extends Error {
  constructor() {
    super('read aborted');
    this.name = 'StreamAbortedError';
  }
}

const TERMINAL = new Set(['result', 'end', 'error']);

/**
 * Reads reply streams with XREAD BLOCK from the start of the stream, on
 * connections used for nothing else. Connections are pooled: one per request
 * in flight, returned when the read ends.
 */
export class StreamReader {
  private readonly idle: Redis[] = [];
  private readonly all = new Set<Redis>();
  private readonly maxIdle: number;
  private readonly blockSliceMs: number;
  private readonly connectTimeoutMs: number;
  private closed = false;

  private readonly options: StreamReaderOptions;

  constructor(options: StreamReaderOptions) {
    this.options = options;
    this.maxIdle = options.maxIdle ?? 64;
    this.blockSliceMs = options.blockSliceMs ?? 2_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
  }

  /** Connections open now (busy and idle). */
  get size(): number {
    return this.all.size;
  }

  private async acquire(): Promise<Redis> {
    const conn = this.idle.pop();
    if (conn) return conn;
    const fresh = this.options.connect();
    fresh.on('error', () => {});
    this.all.add(fresh);
    if (!(await waitForReady(fresh, this.connectTimeoutMs))) {
      this.all.delete(fresh);
      fresh.disconnect();
      throw new ServiceUnavailableError('The gateway cannot reach its Redis store; try again shortly.');
    }
    return fresh;
  }

  private release(conn: Redis, healthy: boolean): void {
    if (healthy && !this.closed && conn.status === 'ready' && this.idle.length < this.maxIdle) {
      this.idle.push(conn);
      return;
    }
    this.all.delete(conn);
    conn.disconnect();
  }

  /**
   * Yields entries of `key` until a terminal one (`result`, `end`, `error`),
   * inclusive. `deadline()` is re-read after every entry, so a caller can
   * extend it (idle timeout between chunks).
   */
  async *read(key: string, deadline: () => number, signal?: AbortSignal): AsyncGenerator<StreamEntry> {
    const conn = await this.acquire();
    let lastId = '0-0';
    let inFlight: Promise<unknown> | undefined;
    let healthy = true;
    try {
      for (;;) {
        if (signal?.aborted) throw new StreamAbortedError();
        const remaining = deadline() - Date.now();
        if (remaining <= 0) throw new StreamDeadlineError();
        const block = Math.max(1, Math.min(remaining, this.blockSliceMs));
        const call = conn.xread('COUNT', 256, 'BLOCK', block, 'STREAMS', key, lastId);
        inFlight = call;
        let reply: Awaited<typeof call>;
        try {
          reply = signal ? await raceAbort(call, signal) : await call;
        } catch (err) {
          if (err instanceof StreamAbortedError) throw err;
          healthy = false;
          throw new ServiceUnavailableError('Lost the connection to Redis while waiting for the reply.', { cause: err });
        }
        inFlight = undefined;
        if (!reply) continue;
        for (const [, entries] of reply) {
          for (const [id, fields] of entries) {
            lastId = id;
            const entry = parseEntry(id, fields);
            yield entry;
            if (TERMINAL.has(entry.t)) return;
          }
        }
      }
    } finally {
      if (inFlight) {
        // The connection is still blocked in XREAD; hand it back once Redis answers.
        inFlight.then(
          () => this.release(conn, healthy),
          () => this.release(conn, false),
        );
      } else {
        this.release(conn, healthy);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const conn of this.all) conn.disconnect();
    this.all.clear();
    this.idle.length = 0;
  }
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new StreamAbortedError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new StreamAbortedError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
