import { ReplyError, type Cluster, type Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors/catalog.ts';
import { keySlot } from '../redis/key-slot.ts';
import type { StreamEntry } from './protocol.ts';
import { StreamReader, type ReplyStreamReader, type StreamReaderOptions } from './stream-reader.ts';

/** Options of {@link SlotStreamReaders}. */
export interface SlotStreamReadersOptions {
  /** The cluster's command connection: it knows which master serves a slot. */
  cluster: Redis;
  /** Opens a plain connection to one node (blocking reads and their `CLIENT UNBLOCK`). */
  connectNode: (node: { host: string; port: number }) => Redis;
  /** Options of each slot's reader. */
  reader?: Omit<StreamReaderOptions, 'connect' | 'waker'>;
}

/**
 * Reply streams on a Redis Cluster: an XREAD may only name keys of one slot,
 * so there is one {@link StreamReader} (one blocking XREAD) per slot that
 * someone reads, not per request. A process's own jobs share its hash tag
 * (`ChatDispatcherOptions.jobTag`), so its own replies take one slot; a
 * request following another process's job adds that process's slot. Each
 * slot's reader talks to the master that serves the slot, on plain
 * connections, so `CLIENT UNBLOCK` reaches the connection it must wake. A
 * reader that fails (the slot moved, the node died) is dropped and the
 * cluster layout refreshed: a read that failed because its slot moved, before
 * it got any entry, is read again on the slot's new master; other failures
 * are the caller's 503.
 */
export class SlotStreamReaders implements ReplyStreamReader {
  private readonly bySlot = new Map<number, StreamReader>();
  private readonly options: SlotStreamReadersOptions;

  constructor(options: SlotStreamReadersOptions) {
    this.options = options;
  }

  get size(): number {
    let n = 0;
    for (const reader of this.bySlot.values()) n += reader.size;
    return n;
  }

  /** Slots with a reader (and so a blocking connection). */
  get slots(): number {
    return this.bySlot.size;
  }

  async *read(key: string, deadline: () => number, signal?: AbortSignal): AsyncGenerator<StreamEntry> {
    const slot = keySlot(key);
    for (let attempt = 0; ; attempt++) {
      const reader = this.readerFor(slot);
      let yielded = false;
      try {
        for await (const entry of reader.read(key, deadline, signal)) {
          yielded = true;
          yield entry;
        }
        return;
      } catch (err) {
        if (!(err instanceof ServiceUnavailableError)) throw err;
        this.forget(slot, reader);
        // The slot moved (MOVED/ASK): read again from the start on its new master, unless entries went out already.
        if (yielded || attempt > 0 || !movedSlot(err)) throw err;
      }
    }
  }

  async close(): Promise<void> {
    const readers = [...this.bySlot.values()];
    this.bySlot.clear();
    await Promise.all(readers.map((reader) => reader.close()));
  }

  private readerFor(slot: number): StreamReader {
    let reader = this.bySlot.get(slot);
    if (!reader) {
      reader = new StreamReader({
        ...this.options.reader,
        connect: () => this.options.connectNode(this.masterOf(slot)),
      });
      this.bySlot.set(slot, reader);
    }
    return reader;
  }

  private masterOf(slot: number): { host: string; port: number } {
    const node = (this.options.cluster as unknown as Cluster).slots[slot]?.[0];
    if (!node)
      throw new ServiceUnavailableError('The gateway does not know the Redis Cluster layout yet; try again shortly.');
    const colon = node.lastIndexOf(':');
    return { host: node.slice(0, colon), port: Number(node.slice(colon + 1)) };
  }

  private forget(slot: number, reader: StreamReader): void {
    if (this.bySlot.get(slot) !== reader) return;
    this.bySlot.delete(slot);
    void reader.close();
    (this.options.cluster as unknown as Cluster).refreshSlotsCache();
  }
}

/** True when a read failed because Redis said the slot is served elsewhere now. */
function movedSlot(err: ServiceUnavailableError): boolean {
  const cause: unknown = err.cause;
  return cause instanceof ReplyError && /^(MOVED|ASK) /.test((cause as Error).message);
}
