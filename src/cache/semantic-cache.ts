import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.ts';
import type { CachedReply } from './cached-reply.ts';
import type { CacheKeys } from './redis-keys.ts';
import { scanDelete } from './scan-delete.ts';
import { VectorIndex, type SearchOptions, type SearchResult } from './vector-index.ts';

/** Options of {@link SemanticCache}. */
export interface SemanticCacheOptions {
  /** Command connection. */
  redis: Redis;
  /** Makes the pub/sub connection that keeps the index in sync (only used by {@link SemanticCache.start}). */
  subscriber: () => Redis;
  keys: CacheKeys;
  /** Entry lifetime, seconds (`CACHE_TTL`). */
  ttlSeconds: number;
  /** Most entries kept in Redis; the ones closest to expiry go first beyond it. @defaultValue 10000 */
  maxEntries?: number;
  /** How often expired entries leave the in-memory index, ms. @defaultValue 30000 */
  sweepIntervalMs?: number;
  logger: Logger;
}

/** A stored entry as the verifier needs it. */
export interface SemanticCandidate extends CachedReply {
  /** The canonical tokens of the prompt the reply answered (`prompt-canonical.ts`). */
  tokens: string[];
  /** The entry's second-stage (transformer) embedding, once some lookup computed it. */
  confirmation?: Float32Array;
}

/** A new entry. */
export interface SemanticEntryInput {
  partition: string;
  /** The compared text (the last user message, canonical); its hash is the entry id. */
  text: string;
  /** Its canonical tokens, kept so that a later candidate can be verified against them. */
  tokens: readonly string[];
  guard: string;
  /** The prompt's size for the index's size filter (see {@link SearchOptions.size}). */
  size: number;
  /** Unit-length embedding of `text`: what the index searches (the first stage's, when there are two). */
  vector: Float32Array;
  /** Unit-length second-stage embedding of `text`, when this request computed it. */
  confirmation?: Float32Array;
  /** `chat.completion` JSON. */
  completion: string;
}

/** Index changes, published on the events channel. `o` is the publishing instance. */
type IndexEvent =
  | { o: string; op: 'add'; id: string; p: string; g: string; x: number; n: number; v: string }
  | { o: string; op: 'del'; ids: string[] }
  | { o: string; op: 'clear' };

const LOAD_BATCH = 256;

/**
 * Stores an entry: the hash with its TTL, its place in the expiry-sorted
 * index, the `add` event; then, beyond the most entries, removes those
 * closest to expiry and announces their removal. Returns the removed ids.
 * KEYS: entry, index. ARGV: id, ttl s, expiry ms, now ms, most entries, entry
 * key prefix, events channel, add event, del event template (`%s` = the ids), hash fields.
 */
const STORE = `
redis.call('hset', KEYS[1], unpack(ARGV, 10))
redis.call('expire', KEYS[1], ARGV[2])
redis.call('zadd', KEYS[2], ARGV[3], ARGV[1])
redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[4])
redis.call('publish', ARGV[7], ARGV[8])
local over = redis.call('zcard', KEYS[2]) - tonumber(ARGV[5])
if over <= 0 then return {} end
local popped = redis.call('zpopmin', KEYS[2], over)
local ids = {}
for i = 1, #popped, 2 do
  ids[#ids + 1] = popped[i]
  redis.call('unlink', ARGV[6] .. popped[i])
end
redis.call('publish', ARGV[7], string.format(ARGV[9], cjson.encode(ids)))
return ids
`;

interface StoreScript {
  gatewaySemanticStore(...args: Array<string | Buffer>): Promise<unknown>;
}

/** Sets a field of an entry only while the entry exists, so a late write never revives one without its TTL. */
const SET_IF_EXISTS =
  "if redis.call('exists', KEYS[1]) == 1 then return redis.call('hset', KEYS[1], ARGV[1], ARGV[2]) end return 0";

function toBuffer(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

function toVector(buffer: Buffer): Float32Array {
  // Copy: a Buffer may sit at an offset that is not a multiple of 4 in a shared pool.
  const copy = new Uint8Array(buffer);
  return new Float32Array(copy.buffer, 0, copy.byteLength / 4);
}

/**
 * The semantic cache's storage. Redis is the system of record: each entry is
 * a hash with a TTL (partition, guard signature, vector, reply), listed in a
 * sorted set scored by expiry. Each API process keeps a {@link VectorIndex}
 * mirroring Redis: it loads every live entry at start, applies the changes
 * other replicas publish (add, delete, clear), reloads after a lost pub/sub
 * connection, and drops expired entries on a timer. A hit always reads the
 * reply from Redis, so an entry that expired or was cleared elsewhere is
 * never served even before its event arrives.
 */
export class SemanticCache {
  private index = new VectorIndex();
  private readonly instance = randomUUID();
  /** How this instance's events start (`JSON.stringify` writes `o` first). */
  private readonly ownEvents = `{"o":${JSON.stringify(this.instance)},`;
  private readonly maxEntries: number;
  private readonly sweepIntervalMs: number;
  private subscriber: Redis | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Events received while a (re)load runs, applied once it is done. */
  private pending: IndexEvent[] | undefined;
  private loads = 0;

  private readonly options: SemanticCacheOptions;

  constructor(options: SemanticCacheOptions) {
    this.options = options;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
    // defineCommand sends EVALSHA and falls back to EVAL once per connection.
    if (!('gatewaySemanticStore' in options.redis))
      options.redis.defineCommand('gatewaySemanticStore', { numberOfKeys: 2, lua: STORE });
  }

  /** Entries in this process's index. */
  get size(): number {
    return this.index.size;
  }

  /** Bytes held by this process's index. */
  get byteSize(): number {
    return this.index.byteSize;
  }

  /** Completed loads of the index from Redis (1 after start, +1 per resync after a reconnect). */
  get loadCount(): number {
    return this.loads;
  }

  /** Subscribes to index changes, then loads every live entry. Resolves once the first load is done. */
  async start(): Promise<void> {
    const subscriber = this.options.subscriber();
    this.subscriber = subscriber;
    subscriber.on('error', (err) => this.options.logger.debug({ err }, 'semantic cache subscriber error'));
    subscriber.on('message', (channel: string, message: string) => {
      if (channel === this.options.keys.semanticEvents) this.onEvent(message);
    });
    // ioredis resubscribes by itself after a reconnect; events published meanwhile are lost, so reload.
    let readyOnce = false;
    subscriber.on('ready', () => {
      if (!readyOnce) return;
      this.reload().catch((err: Error) => this.options.logger.warn({ err }, 'semantic index resync failed'));
    });
    await subscriber.subscribe(this.options.keys.semanticEvents);
    readyOnce = true;
    await this.reload();
    this.sweepTimer = setInterval(() => this.index.removeExpired(), this.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  private reloading: Promise<void> = Promise.resolve();

  /** Rebuilds the index from Redis; events arriving meanwhile are applied after. Reloads run one at a time. */
  reload(): Promise<void> {
    const next = this.reloading.catch(() => {}).then(() => this.loadFromRedis());
    this.reloading = next;
    return next;
  }

  private async loadFromRedis(): Promise<void> {
    this.pending = [];
    try {
      const fresh = new VectorIndex();
      const { redis, keys } = this.options;
      const now = Date.now();
      const ids = await redis.zrangebyscore(keys.semanticIndex, now, '+inf');
      for (let i = 0; i < ids.length; i += LOAD_BATCH) {
        const batch = ids.slice(i, i + LOAD_BATCH);
        const rows = await Promise.all(
          batch.map((id) => redis.hmgetBuffer(keys.semanticEntry(id), 'p', 'g', 'x', 'v', 'n')),
        );
        rows.forEach((row, j) => {
          const [p, g, x, v, n] = row;
          if (!p || !g || !x || !v) return;
          fresh.add({
            id: batch[j] as string,
            partition: p.toString(),
            guard: g.toString(),
            expiresAt: Number(x.toString()),
            vector: toVector(v),
            size: n ? Number(n.toString()) : -1,
          });
        });
      }
      this.index = fresh;
      this.loads += 1;
    } finally {
      const queued = this.pending ?? [];
      this.pending = undefined;
      for (const event of queued) this.apply(event);
    }
  }

  private onEvent(message: string): void {
    // This process's own events come back too; every event starts with its publisher, so skip them unparsed.
    if (message.startsWith(this.ownEvents)) return;
    let event: IndexEvent;
    try {
      event = JSON.parse(message) as IndexEvent;
    } catch {
      return;
    }
    if (event.o === this.instance) return;
    if (this.pending) this.pending.push(event);
    else this.apply(event);
  }

  private apply(event: IndexEvent): void {
    switch (event.op) {
      case 'add':
        this.index.add({
          id: event.id,
          partition: event.p,
          guard: event.g,
          expiresAt: event.x,
          size: event.n ?? -1,
          vector: toVector(Buffer.from(event.v, 'base64')),
        });
        return;
      case 'del':
        for (const id of event.ids) this.index.remove(id);
        return;
      case 'clear':
        this.index.clear();
        return;
    }
  }

  private publish(event: IndexEvent): Promise<unknown> {
    return this.options.redis.publish(this.options.keys.semanticEvents, JSON.stringify(event));
  }

  search(
    partition: string,
    vector: Float32Array,
    threshold: number,
    guard: string,
    options: SearchOptions = {},
  ): SearchResult {
    return this.index.search(partition, vector, threshold, guard, options);
  }

  /**
   * The prompt tokens of entries, in one round trip; an entry gone from Redis
   * is undefined (and leaves the index). Only the tokens: most candidates are
   * refused by the verifier, and their replies need not cross the wire.
   */
  async fetchTokens(ids: readonly string[]): Promise<Array<string[] | undefined>> {
    const pipeline = this.options.redis.pipeline();
    for (const id of ids) pipeline.hget(this.options.keys.semanticEntry(id), 'q');
    const rows = (await pipeline.exec()) ?? [];
    return rows.map(([err, tokens], i) => {
      if (err || typeof tokens !== 'string') {
        if (!err) this.index.remove(ids[i] as string);
        return undefined;
      }
      return JSON.parse(tokens) as string[];
    });
  }

  /** The reply of a verified entry and its second-stage embedding when known; undefined when the entry is gone. */
  async fetchReply(id: string): Promise<Omit<SemanticCandidate, 'tokens'> | undefined> {
    const [completion, storedAt, confirmation] = await this.options.redis.hmgetBuffer(
      this.options.keys.semanticEntry(id),
      'c',
      't',
      'f',
    );
    if (!completion) {
      this.index.remove(id);
      return undefined;
    }
    const reply: Omit<SemanticCandidate, 'tokens'> = {
      completion: completion.toString(),
      storedAt: Number(storedAt?.toString()),
    };
    if (confirmation && confirmation.byteLength > 0) reply.confirmation = toVector(confirmation);
    return reply;
  }

  /** Keeps an entry's second-stage embedding, computed by a lookup, for the next lookups that meet it. */
  async keepConfirmation(id: string, vector: Float32Array): Promise<void> {
    await this.options.redis.eval(SET_IF_EXISTS, 1, this.options.keys.semanticEntry(id), 'f', toBuffer(vector));
  }

  /**
   * Stores an entry (replacing one for the same partition and text), indexes
   * it here and announces it to the other replicas. Beyond `maxEntries`, the
   * entries closest to expiry are removed everywhere. One script does it all:
   * one round trip, and no ioredis transaction object built per miss.
   */
  async store(input: SemanticEntryInput): Promise<string> {
    const { redis, keys, ttlSeconds } = this.options;
    const id = createHash('sha256')
      .update(JSON.stringify([input.partition, input.text]))
      .digest('hex')
      .slice(0, 40);
    const now = Date.now();
    const expiresAt = now + ttlSeconds * 1000;
    const vector = toBuffer(input.vector);
    const event: IndexEvent = {
      o: this.instance,
      op: 'add',
      id,
      p: input.partition,
      g: input.guard,
      x: expiresAt,
      n: input.size,
      v: vector.toString('base64'),
    };
    const evicted = (await (redis as unknown as StoreScript).gatewaySemanticStore(
      keys.semanticEntry(id),
      keys.semanticIndex,
      id,
      String(ttlSeconds),
      String(expiresAt),
      String(now),
      String(this.maxEntries),
      keys.semanticEntry(''),
      keys.semanticEvents,
      JSON.stringify(event),
      JSON.stringify({ o: this.instance, op: 'del', ids: [] }).replace('[]', '%s'),
      // The hash: partition, guard, expiry, stored at, size, vector, reply, canonical tokens, and the
      // second-stage embedding, empty when unknown (a replaced entry must not keep an old one).
      'p',
      input.partition,
      'g',
      input.guard,
      'x',
      String(expiresAt),
      't',
      String(now),
      'n',
      String(input.size),
      'v',
      vector,
      'c',
      input.completion,
      'q',
      JSON.stringify(input.tokens),
      'f',
      input.confirmation ? toBuffer(input.confirmation) : '',
    )) as string[];
    this.index.add({
      id,
      partition: input.partition,
      guard: input.guard,
      expiresAt,
      size: input.size,
      vector: input.vector,
    });
    for (const gone of evicted) this.index.remove(gone);
    return id;
  }

  /** Removes every entry from Redis and from every replica's index; returns how many entries Redis held. */
  async clear(): Promise<number> {
    const { redis, keys } = this.options;
    const ids = await redis.zrange(keys.semanticIndex, 0, -1);
    let removed = 0;
    for (let i = 0; i < ids.length; i += 500) {
      removed += await redis.unlink(...ids.slice(i, i + 500).map((id) => keys.semanticEntry(id)));
    }
    await redis.unlink(keys.semanticIndex);
    // Entries missing from the sorted set (written by a process that died between commands) go too.
    removed += await scanDelete(redis, keys.semanticEntryPattern);
    this.index.clear();
    await this.publish({ o: this.instance, op: 'clear' });
    return removed;
  }

  async close(): Promise<void> {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
