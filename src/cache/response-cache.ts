import { randomUUID } from 'node:crypto';
import { messageText, type ChatRequest } from '../chat/types.ts';
import type { ProviderConfig } from '../config/gateway-config.ts';
import type { EmbeddingsShape } from '../embeddings/request-schema.ts';
import type { Logger } from '../observability/logger.ts';
import type { Admission } from '../ratelimit/admission.ts';
import { isTerminal, type StreamEntry } from '../streams/protocol.ts';
import { cacheModeOf, type CacheMode, type SemanticControl } from './cache-control.ts';
import {
  embeddingsKeyOf,
  exactKeyOf,
  inflightKeyOf,
  lastUserIndex,
  responsesKeyOf,
  responsesPartitionOf,
  semanticPartitionOf,
  type ResponsesKeying,
} from './cache-key.ts';
import type { CacheStats, CacheType } from './cache-stats.ts';
import type { CachedReply } from './cached-reply.ts';
import type { EmbeddingBatcher } from './embedders/embedding-batcher.ts';
import type { Embedder } from './embedders/embedder.ts';
import type { StaticEmbedder } from './embedders/static-embedder.ts';
import type { ExactCache } from './exact-cache.ts';
import { canonicalPrompt, type CanonicalPrompt } from './prompt-canonical.ts';
import { guardSignatureOf } from './prompt-guards.ts';
import { MAX_DIFFERING_WORDS, promptSize, verifyCandidate, type VerifyReason } from './prompt-verifier.ts';
import type { IndexMatch } from './vector-index.ts';
import { ReplyAssembler, ResponsesReplyAssembler } from './reply-assembler.ts';
import type { RequestCoalescer } from './request-coalescer.ts';
import type { SemanticCache, SemanticCandidate } from './semantic-cache.ts';

/** How many of the most similar entries the verifier may look at before the lookup counts as a miss. */
const CANDIDATES = 4;

/** What became of one semantic candidate: `dissimilar` when the second-stage embedding found it below the threshold. */
export type VerifyOutcome = 'verified' | VerifyReason | 'dissimilar';

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
  /** @defaultValue `owner` */
  scope?: CacheScope;
  embedder?: Embedder;
  batcher?: EmbeddingBatcher;
  /**
   * First-stage retriever: when set, the index holds its vectors, and
   * `embedder` runs only to confirm a candidate that passed the verifier.
   * Without it (or when its table cannot load), `embedder` embeds every lookup.
   */
  retriever?: StaticEmbedder;
  /** Least first-stage similarity of a candidate (`SEMANTIC_CACHE_RETRIEVER_THRESHOLD`). @defaultValue 0.7 */
  retrieverThreshold?: number;
  /**
   * Longest last user message, in characters, that the semantic cache looks up and stores
   * (`SEMANTIC_CACHE_MAX_PROMPT_CHARS`); a longer one is cached exactly only.
   * @defaultValue 8000
   */
  maxPromptChars?: number;
  /** Coalesces identical concurrent misses; none when undefined. */
  coalescer?: RequestCoalescer;
  /** Called on every lookup, hit or miss (the `gateway_cache_hits_total` metric). */
  onLookup?: (cacheType: CacheType, hit: boolean) => void;
  /** Called for every semantic candidate verified: `verified`, or the reason it was rejected (a metric). */
  onVerify?: (outcome: VerifyOutcome) => void;
}

interface LookupContext {
  request: ChatRequest;
  mode: CacheMode;
  exactKey: string;
  /** A native Responses request: its stored reply is the upstream's `response` object, and it is never coalesced. */
  responses?: true;
  semanticPartition?: string;
  guard?: string;
  /** The last user message in canonical form: what is embedded, stored and verified. */
  prompt?: CanonicalPrompt;
  /** Its index vector (the retriever's when there is one). */
  vector?: Float32Array;
  /** Its second-stage embedding, when a candidate needed it. */
  confirmation?: Float32Array;
}

/**
 * The response caches as the chat route sees them. {@link lookup} answers
 * from the exact cache, then the semantic one, or declines; on a miss, the
 * returned {@link CacheLookup} tells whether an identical request is in
 * flight and stores the reply once it is complete.
 */
export class ResponseCache {
  private semanticState: SemanticState;
  private semanticProblem: string | undefined;
  /** The first-stage retriever, once loaded. */
  private retriever: StaticEmbedder | undefined;
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
    const started = Date.now();
    try {
      await Promise.all([semantic.start(), embedder.ready(), this.startRetriever()]);
      this.semanticState = 'ready';
      logger.info(
        { embedder: embedder.id, retriever: this.retriever?.id ?? 'none', load_ms: Date.now() - started },
        'semantic cache ready (SEMANTIC_CACHE_ENABLED=false turns it off)',
      );
    } catch (err) {
      this.semanticState = 'unavailable';
      this.semanticProblem = (err as Error).message;
      logger.warn(
        { embedder: embedder.id, reason: this.semanticProblem },
        'semantic cache unavailable: only the exact cache answers',
      );
    }
  }

  /** Loads the retriever; one that cannot load leaves the embedder doing every lookup (slower, same answers). */
  private async startRetriever(): Promise<void> {
    const retriever = this.options.retriever;
    if (!retriever) return;
    try {
      await retriever.ready();
      this.retriever = retriever;
    } catch (err) {
      this.options.logger.warn(
        { reason: (err as Error).message },
        'semantic cache first-stage retriever unavailable: every lookup runs the full embedding model',
      );
    }
  }

  /** The first-stage retriever's id once loaded. */
  get retrieverId(): string | undefined {
    return this.retriever?.id;
  }

  /** The names of the models whose vectors the index holds and that confirm them (part of the partition). */
  private get modelIds(): string {
    const embedder = (this.options.embedder as Embedder).id;
    return this.retriever ? `${this.retriever.id}>${embedder}` : embedder;
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
   * lookup, and nothing is counted. `control` turns the semantic cache off
   * for this request or asks it for a higher similarity
   * (`X-Semantic-Cache`, or the provider's `semantic_cache: false`).
   * `embeddings` (the vectors' shape) keys an embeddings request, which only
   * the exact cache answers. `responses` keys a native Responses request on
   * its body instead of `request` (whose messages are only its texts).
   */
  async lookup(
    request: ChatRequest,
    owner: string,
    cacheControl: string | string[] | undefined,
    gate: Promise<Admission>,
    control: SemanticControl = { semantic: 'on' },
    embeddings?: EmbeddingsShape,
    responses?: ResponsesKeying,
  ): Promise<CacheLookup> {
    const mode = cacheModeOf(cacheControl);
    const semanticOn = this.semanticState === 'ready' && control.semantic === 'on' && !embeddings;
    if (mode === 'bypass' || (!this.options.exactEnabled && !semanticOn)) {
      return new CacheLookup(this, await gate, 'BYPASS');
    }
    const partition = this.partitionOf(owner);
    const userIndex = responses ? -1 : lastUserIndex(request);
    const text = responses ? responses.prompt?.text : userIndex >= 0 ? promptText(request, userIndex) : undefined;
    // The canonical form is the semantic cache's folding: not computed when that cache is off for this request.
    const prompt =
      text === undefined || !semanticOn || text.length > (this.options.maxPromptChars ?? 8000)
        ? undefined
        : canonicalPrompt(text);
    const exactKey = responses
      ? responsesKeyOf(partition, responses.body)
      : embeddings
        ? embeddingsKeyOf(partition, request, embeddings)
        : exactKeyOf(partition, request);
    const context: LookupContext = { request, mode, exactKey };
    if (responses) context.responses = true;
    if (prompt && this.options.embedder) {
      context.semanticPartition = responses?.prompt
        ? responsesPartitionOf(partition, this.modelIds, responses.body, responses.prompt.path)
        : semanticPartitionOf(partition, this.modelIds, request);
      context.guard = guardSignatureOf(text as string);
      context.prompt = prompt;
    }
    let admission: Admission;
    if (mode === 'use' && this.options.exactEnabled) {
      const [admitted, hit] = await Promise.all([
        gate,
        this.options.exact.get(context.exactKey).catch((err: Error) => this.lookupFailed('exact', err)),
      ]);
      admission = admitted;
      this.counted('exact', hit !== undefined);
      if (hit) return new CacheLookup(this, admission, 'HIT', context, hit);
    } else {
      admission = await gate;
    }
    if (mode === 'use' && context.semanticPartition) {
      const threshold = Math.max(this.options.threshold, control.semantic === 'on' ? (control.minSimilarity ?? 0) : 1);
      const hit = await this.semanticLookup(context, threshold);
      if (hit) return new CacheLookup(this, admission, 'SEMANTIC_HIT', context, hit);
    }
    return new CacheLookup(this, admission, 'MISS', context);
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
      this.options.logger.debug({ err }, message);
      return;
    }
    this.lastWarned.set(kind, now);
    this.options.logger.warn({ err }, message);
  }

  private async semanticLookup(context: LookupContext, threshold: number): Promise<CachedReply | undefined> {
    const prompt = context.prompt as CanonicalPrompt;
    const retriever = this.retriever;
    try {
      // The retriever is a table sum (microseconds per token, see static-embedder.ts); the embedder runs off the event loop.
      context.vector = retriever
        ? retriever.embed(prompt.text)
        : await (this.options.batcher as EmbeddingBatcher).embed(prompt.text);
    } catch (err) {
      return this.lookupFailed('semantic', err as Error);
    }
    const { semantic } = this.options;
    const firstStage = retriever ? (this.options.retrieverThreshold ?? 0.7) : threshold;
    const result = semantic.search(
      context.semanticPartition as string,
      context.vector,
      firstStage,
      context.guard as string,
      {
        limit: CANDIDATES,
        size: promptSize(prompt.tokens),
        sizeTolerance: MAX_DIFFERING_WORDS,
      },
    );
    let hit: CachedReply | undefined;
    if (result.matches.length > 0) {
      const candidates = await semantic
        .fetchTokens(result.matches.map((m) => m.id))
        .catch((err: Error) => this.lookupFailed('semantic', err));
      // The most similar candidate whose prompt verifiably asks the same thing answers; the others say why not.
      for (const [i, tokens] of (candidates ?? []).entries()) {
        if (!tokens) continue;
        const match = result.matches[i] as IndexMatch;
        const verdict = verifyCandidate(tokens, prompt.tokens);
        if (!verdict.ok) {
          this.rejected(verdict.reason, match.similarity);
          continue;
        }
        const reply = await semantic.fetchReply(match.id).catch((err: Error) => this.lookupFailed('semantic', err));
        if (!reply) continue;
        const candidate: SemanticCandidate = { ...reply, tokens };
        const similarity = Math.min(
          1,
          retriever ? await this.confirm(context, match.id, candidate, verdict.corrected) : match.similarity,
        );
        if (Number.isNaN(similarity)) break;
        if (similarity < threshold) {
          this.rejected('dissimilar', similarity);
          continue;
        }
        this.options.onVerify?.('verified');
        this.options.logger.debug({ similarity }, 'semantic candidate verified');
        hit = { completion: candidate.completion, storedAt: candidate.storedAt, similarity };
        break;
      }
    }
    this.counted('semantic', hit !== undefined, hit?.similarity);
    return hit;
  }

  private rejected(reason: VerifyReason | 'dissimilar', similarity: number): void {
    this.options.onVerify?.(reason);
    this.options.logger.debug({ similarity, reason }, 'semantic candidate rejected');
  }

  /**
   * The second stage: the embedder's similarity of a verified first-stage
   * candidate and the prompt (NaN when the embedder fails: a miss). The
   * prompt's embedding is computed once per lookup, the candidate's once per
   * entry (kept in Redis after). When the verifier `corrected` typos or
   * acronyms, the corrected prompt is compared instead (and not kept: the
   * entry this request stores is its own prompt).
   */
  private async confirm(
    context: LookupContext,
    id: string,
    candidate: SemanticCandidate,
    corrected?: string[],
  ): Promise<number> {
    const batcher = this.options.batcher as EmbeddingBatcher;
    try {
      const [query, stored] = await Promise.all([
        // The canonical text is the canonical tokens joined by single spaces (prompt-canonical.ts).
        corrected
          ? batcher.embed(corrected.join(' '))
          : (context.confirmation ?? batcher.embed((context.prompt as CanonicalPrompt).text)),
        candidate.confirmation ?? batcher.embed(candidate.tokens.join(' ')),
      ]);
      if (!corrected) context.confirmation = query;
      if (!candidate.confirmation) {
        this.options.semantic
          .keepConfirmation(id, stored)
          .catch((err: Error) => this.warnRarely('store', err, 'semantic cache store failed'));
      }
      return dot(query, stored);
    } catch (err) {
      this.lookupFailed('semantic', err as Error);
      return NaN;
    }
  }

  /** The exact entry of a request that missed, if one was stored since its lookup ({@link CacheLookup.claim}); never throws. */
  storedSince(context: LookupContext): Promise<CachedReply | undefined> {
    if (!this.options.exactEnabled) return Promise.resolve(undefined);
    return this.options.exact.get(context.exactKey).catch(() => undefined);
  }

  /** Stores a complete reply in both caches; never throws. Resolves once the writes are done. */
  async store(context: LookupContext, completion: string): Promise<void> {
    const writes: Promise<unknown>[] = [];
    if (this.options.exactEnabled) writes.push(this.options.exact.set(context.exactKey, completion));
    if (context.semanticPartition && this.semanticState === 'ready') {
      if (context.vector) writes.push(this.storeSemantic(context, context.vector, completion));
      else if (this.retriever) {
        writes.push(
          this.storeSemantic(context, this.retriever.embed((context.prompt as CanonicalPrompt).text), completion),
        );
      } else {
        // Refresh requests skipped the lookup, so no embedding yet: store in the background, the reply does not wait.
        (this.options.batcher as EmbeddingBatcher)
          .embed((context.prompt as CanonicalPrompt).text)
          .then((vector) => this.storeSemantic(context, vector, completion))
          .catch((err: Error) => this.warnRarely('store', err, 'semantic cache store failed'));
      }
    }
    for (const outcome of await Promise.allSettled(writes)) {
      if (outcome.status === 'rejected') this.warnRarely('store', outcome.reason as Error, 'cache store failed');
    }
  }

  private storeSemantic(context: LookupContext, vector: Float32Array, completion: string): Promise<string> {
    const prompt = context.prompt as CanonicalPrompt;
    return this.options.semantic.store({
      partition: context.semanticPartition as string,
      text: prompt.text,
      tokens: prompt.tokens,
      guard: context.guard as string,
      size: promptSize(prompt.tokens),
      vector,
      ...(context.confirmation ? { confirmation: context.confirmation } : {}),
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

/**
 * Who answers a miss: this request enqueues the job (`leader`, or `alone` when nothing coalesces), it reads another's
 * (`follower`), or an identical request stored its reply since this one's lookup (`stored`: nothing to enqueue).
 */
export type MissClaim =
  | {
      role: 'alone' | 'leader';
      /** The job to enqueue. */
      jobId: string;
    }
  | {
      role: 'follower';
      /** The job to follow. */
      jobId: string;
    }
  | {
      role: 'stored';
      jobId: string;
      /** The reply stored since the lookup. */
      stored: CachedReply;
    };

/**
 * The outcome of one lookup: the cache answers ({@link hit}) or declines. On
 * a miss the route asks {@link claim} whether an identical request is
 * already in flight (then it follows that job's reply) or whether it enqueues
 * the job itself, and passes the leader's reply through {@link track}, which
 * stores it once complete. {@link admission} is the rate limiter's decision,
 * settled together with the first cache read.
 */
export class CacheLookup {
  readonly status: CacheStatus;
  readonly hit: CachedReply | undefined;
  readonly admission: Admission;
  private role: 'alone' | 'leader' | 'follower' = 'alone';
  private inflightKey: string | undefined;
  private jobId: string | undefined;
  private released: Promise<number> | undefined;

  private readonly cache: ResponseCache;
  private readonly context: LookupContext | undefined;

  constructor(
    cache: ResponseCache,
    admission: Admission,
    status: CacheStatus,
    context?: LookupContext,
    hit?: CachedReply,
  ) {
    this.cache = cache;
    this.admission = admission;
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
   * On a miss, claims the request across every API replica (same partition,
   * request and reply shape): the first one leads, the others follow its job.
   * A coalescer that cannot be reached leaves the request alone, never stuck.
   * `jobId` is the job this request would enqueue.
   */
  async claim(provider: ProviderConfig, jobId: string = randomUUID()): Promise<MissClaim> {
    this.jobId = jobId;
    const coalescer = this.cache.coalescer;
    const context = this.context;
    // A native Responses reply carries the upstream's ids: each request gets its own call (or a replay with fresh ids).
    if (!coalescer || !context || this.status !== 'MISS' || context.mode !== 'use' || context.responses)
      return { role: 'alone', jobId };
    const inflightKey = inflightKeyOf(context.exactKey, context.request);
    // An identical request may have stored its reply and released its claim between this lookup and this claim. The
    // entry is read in the same round trip, after the claim: a reply stored before that release is found.
    const [role, stored] = await Promise.all([
      coalescer.joinOrLead(inflightKey, provider, jobId).catch(() => undefined),
      this.cache.storedSince(context),
    ]);
    if (role === undefined) return { role: 'alone', jobId };
    this.role = role.role;
    if (role.role === 'follower') return { role: 'follower', jobId: role.jobId };
    this.inflightKey = inflightKey;
    // Answered from it unless someone joined this claim meanwhile: they wait for this request's job, which then runs.
    if (stored && (await this.release()) === 0) {
      this.role = 'alone';
      return { role: 'stored', jobId, stored };
    }
    return { role: 'leader', jobId };
  }

  /** The leader could not enqueue its job: its followers get the same error on the stream they read. */
  async leaderFailed(err: unknown): Promise<void> {
    const followers = await this.release();
    if (followers > 0 && this.jobId) await this.cache.coalescer?.fail(this.jobId, err).catch(() => {});
  }

  /** Passes the reply entries of this request's own job through, storing a complete reply before its terminal entry reaches the client. */
  async *track(entries: AsyncGenerator<StreamEntry>): AsyncGenerator<StreamEntry> {
    const context = this.context;
    if (!context || this.status !== 'MISS') return yield* entries;
    const assembler = context.responses ? new ResponsesReplyAssembler() : new ReplyAssembler(context.request.n);
    try {
      for await (const entry of entries) {
        assembler.push(entry);
        if (isTerminal(entry.t)) {
          const completion = assembler.completion();
          // Stored before the claim is released and before the client sees the end, so a request arriving after it hits.
          if (completion !== undefined) await this.cache.store(context, completion);
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
    const coalescer = this.cache.coalescer;
    // -1 when the claim was lost or could not be released: the number of followers is unknown then.
    this.released ??=
      this.role === 'leader' && coalescer && this.inflightKey && this.jobId
        ? coalescer.release(this.inflightKey, this.jobId).catch(() => -1)
        : Promise.resolve(0);
    return this.released;
  }

  /**
   * How many followers read this request's job besides it (0 when it led
   * nobody), once its claim is released; undefined when that is unknown.
   * A follower's reader is not counted here: it is one of its leader's.
   */
  async otherReaders(): Promise<number | undefined> {
    const followers = await this.release();
    return followers < 0 ? undefined : followers;
  }

  /** Whether the job may be cancelled now that this client left: never for a follower, and not for a leader others follow. */
  async mayCancel(): Promise<boolean> {
    if (this.role === 'follower') return false;
    return (await this.release()) <= 0;
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** The text the semantic cache embeds: the last user message's. */
function promptText(request: ChatRequest, userIndex: number): string {
  const message = request.messages[userIndex];
  return message ? messageText(message) : '';
}
