import { randomUUID } from 'node:crypto';
import type { ChatRequest } from '../chat/types.ts';
import type { ProviderConfig } from '../config/gateway-config.ts';
import type { Logger } from '../observability/logger.ts';
import type { Dispatch } from '../queue/chat-dispatcher.ts';
import type { StreamEntry } from '../streams/protocol.ts';
import { cacheModeOf, type CacheMode } from './cache-control.ts';
import { exactKeyOf, inflightKeyOf, lastUserIndex, semanticPartitionOf } from './cache-key.ts';
import type { CacheStats, CacheType } from './cache-stats.ts';
import type { CachedReply } from './cached-reply.ts';
import type { EmbeddingBatcher } from './embedders/embedding-batcher.ts';
import type { Embedder } from './embedders/embedder.ts';
import type { ExactCache } from './exact-cache.ts';
import { guardSignatureOf } from './prompt-guards.ts';
import { ReplyAssembler } from './reply-assembler.ts';
import type { RequestCoalescer } from './request-coalescer.ts';
import type { SemanticCache } from './semantic-cache.ts';

/** The `X-Cache` value of a reply (also `res.locals.cacheStatus`). */
export type CacheStatus = 'HIT' | 'SEMANTIC_HIT' | 'MISS' | 'BYPASS';

/** Who shares entries: each key owner has its own (default), or every key shares one cache. */
export type CacheScope = 'owner' | 'shared';

/** State of the semantic cache, as `/admin/cache/stats` reports it. */
export type SemanticState = 'disabled' | 'starting' | 'ready' | 'unavailable';

/** Options of {@link ResponseCache}. */
export interface ResponseCacheOptions {
  exact: ExactCache;
  /** Storage of the semantic cache; also needed to clear it when it is disabled. */
  semantic: SemanticCache;
  stats: CacheStats;
  logger: Logger;
  /** Exact cache on (`CACHE_ENABLED`). */
  exactEnabled: boolean;
  /** Semantic cache on (`SEMANTIC_CACHE_ENABLED`); needs `embedder` and `batcher`. */
  semanticEnabled: boolean;
  /** Least cosine similarity of a semantic hit (`SEMANTIC_CACHE_THRESHOLD`). */
  threshold: number;
  /** Default `owner`. */
  scope?: CacheScope;
  embedder?: Embedder;
  batcher?: EmbeddingBatcher;
  /** Coalesces identical concurrent misses; none when undefined. */
  coalescer?: RequestCoalescer;
  /** Called on every lookup, hit or miss (the `gateway_cache_hits_total` metric). */
  onLookup?: (cacheType: CacheType, hit: boolean) => void;
}

/** What the miss path needs to dispatch: the job id to use. */
export type DispatchFn = (jobId: string) => Promise<Dispatch>;

interface LookupContext {
  request: ChatRequest;
  mode: CacheMode;
  exactKey: string;
  /** Index of the last user message, -1 when the last message is not the user's. */
  userIndex: number;
  semanticPartition?: string;
  guard?: string;
  vector?: Float32Array;
}

/**
 * The response caches as the chat route sees them. {@link lookup} answers
 * from the exact cache, then the semantic one; on a miss, the returned
 * {@link CacheLookup} dispatches (or follows an identical request in
 * flight) and stores the reply once it is complete.
 */
export class ResponseCache {
  private semanticState: SemanticState;
  private semanticProblem: string | undefined;
  private readonly scope: CacheScope;

  readonly options: ResponseCacheOptions;

  constructor(options: ResponseCacheOptions) {
    this.options = options;
    this.scope = options.scope ?? 'owner';
    this.semanticState = options.semanticEnabled && options.embedder && options.batcher ? 'starting' : 'disabled';
  }

  /** `disabled`, `starting` (index or model loading), `ready`, or `unavailable` (see {@link semanticError}). */
  get semanticStatus(): SemanticState {
    return this.semanticState;
  }

  /** Why the semantic cache is unavailable. */
  get semanticError(): string | undefined {
    return this.semanticProblem;
  }

  get semantic(): SemanticCache {
    return this.options.semantic;
  }

  get stats(): CacheStats {
    return this.options.stats;
  }

  /**
   * Loads the semantic index and the embedding model. Never rejects: a model
   * that cannot load leaves the semantic cache `unavailable` (logged once) and
   * the exact cache working.
   */
  async start(): Promise<void> {
    const { embedder, semantic, logger } = this.options;
    if (this.semanticState !== 'starting' || !embedder) return;
    try {
      await Promise.all([semantic.start(), embedder.ready()]);
      this.semanticState = 'ready';
      logger.info({ embedder: embedder.id }, 'semantic cache ready');
    } catch (err) {
      this.semanticState = 'unavailable';
      this.semanticProblem = (err as Error).message;
      logger.warn({ embedder: embedder.id, reason: this.semanticProblem }, 'semantic cache unavailable: only the exact cache answers');
    }
  }

  async close(): Promise<void> {
    await this.stats.close();
    await this.options.semantic.close();
    await this.options.embedder?.close();
  }

  private partitionOf(owner: string): string {
    return this.scope === 'shared' ? 'shared' : `owner:${owner}`;
  }

  private counted(type: CacheType, hit: boolean, similarity?: number): void {
    this.options.stats.record(type, hit, similarity);
    this.options.onLookup?.(type, hit);
  }

  /**
   * Looks `request` up for the key owner `owner`; `cacheControl` is the
   * request's `Cache-Control` header. `gate` (the rate-limit decision) is
   * awaited together with the first cache read: when it rejects, so does the
   * lookup, and nothing is counted.
   */
  async lookup(request: ChatRequest, owner: string, cacheControl?: string | string[], gate?: Promise<void>): Promise<CacheLookup> {
    const mode = cacheModeOf(cacheControl);
    const semanticOn = this.semanticState === 'ready';
    if (mode === 'bypass' || (!this.options.exactEnabled && !semanticOn)) {
      await gate;
      return new CacheLookup(this, 'BYPASS');
    }
    const partition = this.partitionOf(owner);
    const exactKey = exactKeyOf(partition, request);
    const context: LookupContext = { request, mode, exactKey, userIndex: lastUserIndex(request) };
    if (semanticOn && context.userIndex >= 0 && this.options.embedder) {
      context.semanticPartition = semanticPartitionOf(partition, this.options.embedder.id, request);
      context.guard = guardSignatureOf(request.messages[context.userIndex]?.content ?? '');
    }
    if (mode === 'use' && this.options.exactEnabled) {
      const [, hit] = await Promise.all([gate, this.options.exact.get(exactKey).catch((err: Error) => this.lookupFailed('exact', err))]);
      this.counted('exact', hit !== undefined);
      if (hit) return new CacheLookup(this, 'HIT', context, hit);
    } else {
      await gate;
    }
    if (mode === 'use') {
      if (context.semanticPartition) {
        const hit = await this.semanticLookup(context);
        if (hit) return new CacheLookup(this, 'SEMANTIC_HIT', context, hit);
      }
    }
    return new CacheLookup(this, 'MISS', context);
  }

  private lookupFailed(what: string, err: Error): undefined {
    this.warnRarely(what, err, `${what} cache lookup failed: answering as a miss`);
    return undefined;
  }

  private readonly lastWarned = new Map<string, number>();

  /** Logs a failure at most once a minute per kind, so an outage (Redis, embedder) does not flood the logs. */
  private warnRarely(kind: string, err: Error, message: string): void {
    const now = Date.now();
    if (now - (this.lastWarned.get(kind) ?? 0) < 60_000) {
      this.options.logger.debug({ err: err.message }, message);
      return;
    }
    this.lastWarned.set(kind, now);
    this.options.logger.warn({ err: err.message }, message);
  }

  private async semanticLookup(context: LookupContext): Promise<CachedReply | undefined> {
    const text = context.request.messages[context.userIndex]?.content ?? '';
    try {
      context.vector = await (this.options.batcher as EmbeddingBatcher).embed(text);
    } catch (err) {
      return this.lookupFailed('semantic', err as Error);
    }
    const { semantic, threshold } = this.options;
    const result = semantic.search(context.semanticPartition as string, context.vector, threshold, context.guard as string);
    let hit: CachedReply | undefined;
    if (result.match) {
      hit = await semantic.fetch(result.match.id).catch((err: Error) => this.lookupFailed('semantic', err));
      if (hit) hit.similarity = Math.min(1, result.match.similarity);
    }
    this.counted('semantic', hit !== undefined, hit?.similarity);
    return hit;
  }

  /** Stores a complete reply in both caches; never throws. Resolves once the writes are done. */
  async store(context: LookupContext, completion: string): Promise<void> {
    const writes: Promise<unknown>[] = [];
    if (this.options.exactEnabled) writes.push(this.options.exact.set(context.exactKey, completion));
    if (context.semanticPartition && this.semanticState === 'ready') {
      if (context.vector) writes.push(this.storeSemantic(context, context.vector, completion));
      else {
        // Refresh requests skipped the lookup, so no embedding yet: store in the background, the reply does not wait.
        const text = context.request.messages[context.userIndex]?.content ?? '';
        (this.options.batcher as EmbeddingBatcher)
          .embed(text)
          .then((vector) => this.storeSemantic(context, vector, completion))
          .catch((err: Error) => this.warnRarely('store', err, 'semantic cache store failed'));
      }
    }
    for (const outcome of await Promise.allSettled(writes)) {
      if (outcome.status === 'rejected') this.warnRarely('store', outcome.reason as Error, 'cache store failed');
    }
  }

  private storeSemantic(context: LookupContext, vector: Float32Array, completion: string): Promise<string> {
    return this.options.semantic.store({
      partition: context.semanticPartition as string,
      text: context.request.messages[context.userIndex]?.content ?? '',
      guard: context.guard as string,
      vector,
      completion,
    });
  }

  /** Clears the exact cache, the semantic cache, or both; returns the entries removed from each. */
  async clear(which: 'exact' | 'semantic' | 'all'): Promise<{ exact_cache: number; semantic_cache: number }> {
    const [exact, semantic] = await Promise.all([
      which === 'semantic' ? 0 : this.options.exact.clear(),
      which === 'exact' ? 0 : this.options.semantic.clear(),
    ]);
    return { exact_cache: exact, semantic_cache: semantic };
  }

  /** The coalescer of identical misses, if on (used by {@link CacheLookup}). */
  get coalescer(): RequestCoalescer | undefined {
    return this.options.coalescer;
  }
}

const TERMINAL = new Set(['result', 'end', 'error']);

/**
 * The outcome of one lookup. On a hit, {@link hit} holds the reply. On a
 * miss, {@link dispatch} gets the reply: it follows an identical request
 * already in flight or dispatches a new job, and stores the reply when it
 * completes. {@link mayCancel} tells whether the job may be cancelled when
 * this client goes away (not when others read its reply).
 */
export class CacheLookup {
  readonly status: CacheStatus;
  readonly hit: CachedReply | undefined;
  private role: 'none' | 'leader' | 'follower' = 'none';
  private inflightKey: string | undefined;
  private jobId: string | undefined;
  private released: Promise<number> | undefined;

  private readonly cache: ResponseCache | undefined;
  private readonly context: LookupContext | undefined;

  constructor(cache: ResponseCache | undefined, status: CacheStatus, context?: LookupContext, hit?: CachedReply) {
    this.cache = cache;
    this.status = status;
    this.context = context;
    this.hit = hit;
  }

  /** Whole seconds since the hit was stored (the `Age` header). */
  get ageSeconds(): number {
    return this.hit ? Math.max(0, Math.floor((Date.now() - this.hit.storedAt) / 1000)) : 0;
  }

  /** True when this request reads another request's reply instead of calling the provider. */
  get coalesced(): boolean {
    return this.role === 'follower';
  }

  /**
   * Gets the reply of a miss: follows an identical in-flight request (same
   * partition, request and reply shape) or calls `dispatch` with the job id
   * to use, then stores the reply if it completes.
   */
  async dispatch(provider: ProviderConfig, signal: AbortSignal, dispatch: DispatchFn): Promise<Dispatch> {
    const context = this.context;
    const cache = this.cache;
    if (!context || !cache || this.status !== 'MISS') return dispatch(randomUUID());
    const coalescer = cache.coalescer;
    let jobId: string = randomUUID();
    if (coalescer && context.mode === 'use') {
      const inflightKey = inflightKeyOf(context.exactKey, context.request);
      const role = await coalescer.joinOrLead(inflightKey, provider, jobId).catch(() => undefined);
      if (role?.role === 'follower') {
        this.role = 'follower';
        return coalescer.follow(role.jobId, provider, signal);
      }
      if (role?.role === 'leader') {
        this.role = 'leader';
        this.inflightKey = inflightKey;
        jobId = role.jobId;
      }
    }
    this.jobId = jobId;
    let leaderDispatch: Dispatch;
    try {
      leaderDispatch = await dispatch(jobId);
    } catch (err) {
      const followers = await this.release();
      if (followers > 0) await coalescer?.fail(jobId, err).catch(() => {});
      throw err;
    }
    return { ...leaderDispatch, entries: this.track(leaderDispatch.entries) };
  }

  private async *track(entries: AsyncGenerator<StreamEntry>): AsyncGenerator<StreamEntry> {
    const assembler = new ReplyAssembler((this.context as LookupContext).request.n);
    try {
      for await (const entry of entries) {
        assembler.push(entry);
        if (TERMINAL.has(entry.t)) {
          const completion = assembler.completion();
          // Stored before the claim is released and before the client sees the end, so a request arriving after it hits.
          if (completion !== undefined) await (this.cache as ResponseCache).store(this.context as LookupContext, completion);
          void this.release();
          yield entry;
          return;
        }
        yield entry;
      }
    } finally {
      void this.release();
    }
  }

  private release(): Promise<number> {
    this.released ??=
      this.role === 'leader' && this.inflightKey && this.jobId
        ? (this.cache as ResponseCache).coalescer!.release(this.inflightKey, this.jobId).catch(() => 0)
        : Promise.resolve(0);
    return this.released;
  }

  /** Whether the job may be cancelled now that this client left: never for a follower, and not for a leader others follow. */
  async mayCancel(): Promise<boolean> {
    if (this.role === 'follower') return false;
    return (await this.release()) <= 0;
  }
}
