import { ReplyError, type Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors/catalog.ts';
import { waitForReady } from '../redis/connections.ts';
import { isTerminal, parseEntries, type StreamEntry } from './protocol.ts';

/** Options of {@link StreamReader}. */
export interface StreamReaderOptions {
  /** Makes a new connection; the reader opens one for its blocking reads (and one to wake it when `waker` is not given). */
  connect: () => Redis;
  /** Connection that sends `CLIENT UNBLOCK` when a read starts while the shared XREAD is blocked. @defaultValue one opened with `connect` */
  waker?: Redis;
  /** Longest single XREAD BLOCK, ms. @defaultValue 2000 */
  blockSliceMs?: number;
  /**
   * Longest single XREAD BLOCK when the server refuses `CLIENT ID` or
   * `CLIENT UNBLOCK` (ACLs, renamed commands), ms: a read that starts while
   * the XREAD blocks then waits up to this long to be included. @defaultValue 5
   */
  fallbackSliceMs?: number;
  /** How long the blocking connection may take to become ready before a read fails with 503, ms. @defaultValue 2000 */
  connectTimeoutMs?: number;
  /** Entries fetched per stream and XREAD. @defaultValue 256 */
  count?: number;
}

/** What the dispatcher reads replies with: a {@link StreamReader}, or one per cluster slot (`slot-stream-readers.ts`). */
export interface ReplyStreamReader {
  /** Reads in progress. */
  readonly size: number;
  read(key: string, deadline: () => number, signal?: AbortSignal): AsyncGenerator<StreamEntry>;
  close(): Promise<void>;
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

/** One `read()` in progress. */
interface Subscription {
  key: string;
  /** Id of the last entry handed to this subscription. */
  lastId: string;
  buffer: StreamEntry[];
  /** Set while the read waits for entries. */
  wake: (() => void) | undefined;
  failure: Error | undefined;
}

/**
 * Reads reply streams for every request of this process through one blocking
 * connection: a single XREAD BLOCK names every stream someone waits on, and
 * its reply is fanned out to the readers. A reply stream per request used to
 * cost a connection, a write and a blocked client per request; here the
 * writes and Redis' wake-ups are shared by everything that arrived in the
 * same round trip. A read that starts while the XREAD is blocked interrupts
 * it (`CLIENT UNBLOCK`) so its stream is included at once.
 */
export class StreamReader implements ReplyStreamReader {
  private readonly byKey = new Map<string, Set<Subscription>>();
  private readonly blockSliceMs: number;
  private readonly fallbackSliceMs: number;
  private readonly connectTimeoutMs: number;
  private readonly count: number;
  private conn: Redis | undefined;
  private waker: Redis | undefined;
  /** Client id of the blocking connection; undefined until asked, null when the server will not unblock it. */
  private clientId: number | null | undefined;
  private looping = false;
  /** Increments with every XREAD sent; tells a wake-up which XREAD it targets. */
  private cycle = 0;
  private blockedCycle = -1;
  private wakeCycle = -1;
  private closed = false;

  private readonly options: StreamReaderOptions;

  constructor(options: StreamReaderOptions) {
    this.options = options;
    this.blockSliceMs = options.blockSliceMs ?? 2_000;
    this.fallbackSliceMs = options.fallbackSliceMs ?? 5;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 2_000;
    this.count = options.count ?? 256;
  }

  /** Reads in progress. */
  get size(): number {
    let n = 0;
    for (const subs of this.byKey.values()) n += subs.size;
    return n;
  }

  /**
   * Yields entries of `key` from its start until a terminal one (`result`,
   * `end`, `error`), inclusive. `deadline()` is re-read whenever the read
   * waits, so a caller can extend it (idle timeout between chunks).
   */
  async *read(key: string, deadline: () => number, signal?: AbortSignal): AsyncGenerator<StreamEntry> {
    await this.ready();
    const sub: Subscription = { key, lastId: '0-0', buffer: [], wake: undefined, failure: undefined };
    this.subscribe(sub);
    try {
      for (;;) {
        while (sub.buffer.length === 0) {
          if (sub.failure) throw sub.failure;
          if (signal?.aborted) throw new StreamAbortedError();
          if (deadline() <= Date.now()) throw new StreamDeadlineError();
          await this.waitFor(sub, deadline, signal);
        }
        if (signal?.aborted) throw new StreamAbortedError();
        const entry = sub.buffer.shift() as StreamEntry;
        yield entry;
        if (isTerminal(entry.t)) return;
      }
    } finally {
      this.unsubscribe(sub);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.failAll(new ServiceUnavailableError('The gateway is shutting down.'));
    this.conn?.disconnect();
    if (!this.options.waker) this.waker?.disconnect();
    this.conn = undefined;
    this.waker = undefined;
  }

  /** Opens the blocking connection if needed and waits until it is ready; 503 when Redis cannot be reached in time. */
  private async ready(): Promise<void> {
    if (this.closed) throw new ServiceUnavailableError('The gateway is shutting down.');
    if (!this.conn) {
      const conn = this.options.connect();
      conn.on('error', () => {});
      // A new connection has a new client id; it is asked for again before the next XREAD.
      conn.on('ready', () => (this.clientId = undefined));
      this.conn = conn;
    }
    if (!(await waitForReady(this.conn, this.connectTimeoutMs))) {
      throw new ServiceUnavailableError('The gateway cannot reach its Redis store; try again shortly.');
    }
  }

  private subscribe(sub: Subscription): void {
    let subs = this.byKey.get(sub.key);
    if (!subs) this.byKey.set(sub.key, (subs = new Set()));
    subs.add(sub);
    if (!this.looping) void this.loop();
    else if (this.blockedCycle === this.cycle) this.wake(this.cycle);
  }

  private unsubscribe(sub: Subscription): void {
    const subs = this.byKey.get(sub.key);
    if (!subs?.delete(sub)) return;
    if (subs.size === 0) this.byKey.delete(sub.key);
  }

  /** Interrupts XREAD number `cycle` if Redis has not answered it yet; once per XREAD. */
  private wake(cycle: number): void {
    if (this.wakeCycle === cycle || this.clientId === undefined || this.clientId === null) return;
    this.wakeCycle = cycle;
    const id = this.clientId;
    if (!this.waker) {
      this.waker = this.options.waker ?? this.options.connect();
      this.waker.on('error', () => {});
    }
    this.waker.client('UNBLOCK', id).then(
      (unblocked) => {
        // 0: the XREAD had not reached Redis yet (it travels on another connection); try again while it is still out.
        if (Number(unblocked) === 0 && this.blockedCycle === cycle && this.clientId === id) {
          this.wakeCycle = -1;
          setImmediate(() => {
            if (this.blockedCycle === cycle) this.wake(cycle);
          });
        }
      },
      (err: unknown) => {
        // Refused (e.g. an ACL without CLIENT): fall back to short blocks. Other trouble fails the XREAD too.
        if (err instanceof ReplyError && this.clientId === id) this.clientId = null;
      },
    );
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      while (this.byKey.size > 0 && !this.closed) {
        const conn = this.conn;
        if (!conn) break;
        if (this.clientId === undefined) this.clientId = await clientIdOf(conn);
        const block = this.clientId === null ? this.fallbackSliceMs : this.blockSliceMs;
        const args: (string | number)[] = ['COUNT', this.count, 'BLOCK', block, 'STREAMS'];
        const ids: string[] = [];
        const starts = new Map<string, string>();
        for (const [key, subs] of this.byKey) {
          const start = lowestId(subs);
          args.push(key);
          ids.push(start);
          starts.set(key, start);
        }
        const cycle = ++this.cycle;
        this.blockedCycle = cycle;
        let reply: [string, [string, string[]][]][] | null;
        try {
          reply = (await conn.call('XREAD', ...args, ...ids)) as typeof reply;
        } finally {
          this.blockedCycle = -1;
        }
        if (reply) this.deliver(reply, starts);
      }
    } catch (err) {
      this.failAll(
        new ServiceUnavailableError('Lost the connection to Redis while waiting for the reply.', { cause: err }),
      );
    } finally {
      this.looping = false;
    }
    // A read that subscribed while the loop was finishing must not wait for nobody.
    if (this.byKey.size > 0 && !this.closed) void this.loop();
  }

  /** Hands each reader the entries it has not seen; `starts` holds the id each stream was read after. */
  private deliver(reply: [string, [string, string[]][]][], starts: Map<string, string>): void {
    for (const [key, raw] of reply) {
      const subs = this.byKey.get(key);
      const start = starts.get(key) ?? '0-0';
      if (!subs || raw.length === 0) continue;
      // A reader that joined after this XREAD was sent may lack entries before `start`: it waits for the next one.
      const readers = [...subs].filter((sub) => sub.lastId === start || compareIds(start, sub.lastId) <= 0);
      const shared = readers.length > 1;
      for (const [id, fields] of raw) {
        const entries = parseEntries(id, fields);
        for (const sub of readers) {
          // Readers of one stream may have started at different times; each gets what it has not seen.
          if (shared && compareIds(id, sub.lastId) <= 0) continue;
          sub.lastId = id;
          for (const entry of entries) {
            sub.buffer.push(entry);
            // A finished read stops naming its stream at once, before its consumer gets to it.
            if (isTerminal(entry.t)) subs.delete(sub);
          }
        }
      }
      if (subs.size === 0) this.byKey.delete(key);
      for (const sub of readers) sub.wake?.();
    }
  }

  private failAll(failure: Error): void {
    for (const subs of this.byKey.values()) {
      for (const sub of subs) {
        sub.failure = failure;
        sub.wake?.();
      }
    }
    this.byKey.clear();
  }

  /** Resolves when `sub` has entries or fails, or the deadline passes, or `signal` aborts (the caller re-checks which). */
  private waitFor(sub: Subscription, deadline: () => number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        sub.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, deadline() - Date.now()));
      signal?.addEventListener('abort', done, { once: true });
      sub.wake = done;
    });
  }
}

/** The connection's client id, or null when the server refuses to tell (no CLIENT rights). */
async function clientIdOf(conn: Redis): Promise<number | null> {
  try {
    return Number(await conn.client('ID'));
  } catch (err) {
    if (err instanceof ReplyError) return null;
    throw err;
  }
}

/** The id every subscription of a stream has read past: the XREAD starting point for that stream. */
function lowestId(subs: Set<Subscription>): string {
  let lowest: string | undefined;
  for (const sub of subs) if (lowest === undefined || compareIds(sub.lastId, lowest) < 0) lowest = sub.lastId;
  return lowest ?? '0-0';
}

/** Orders Redis stream ids (`<ms>-<seq>`). */
export function compareIds(a: string, b: string): number {
  const dashA = a.indexOf('-');
  const dashB = b.indexOf('-');
  const msA = Number(a.slice(0, dashA));
  const msB = Number(b.slice(0, dashB));
  if (msA !== msB) return msA < msB ? -1 : 1;
  const seqA = Number(a.slice(dashA + 1));
  const seqB = Number(b.slice(dashB + 1));
  return seqA === seqB ? 0 : seqA < seqB ? -1 : 1;
}
