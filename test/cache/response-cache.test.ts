import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CacheStats, type CacheType } from '../../src/cache/cache-stats.ts';
import { EmbeddingBatcher } from '../../src/cache/embedders/embedding-batcher.ts';
import type { Embedder } from '../../src/cache/embedders/embedder.ts';
import { cachedReplyEntries } from '../../src/cache/cached-reply.ts';
import { ExactCache } from '../../src/cache/exact-cache.ts';
import { cacheKeys } from '../../src/cache/redis-keys.ts';
import { completionChunks } from '../../src/chat/completion-accumulator.ts';
import { RequestCoalescer } from '../../src/cache/request-coalescer.ts';
import { ResponseCache, type CacheLookup, type ResponseCacheOptions } from '../../src/cache/response-cache.ts';
import { SemanticCache } from '../../src/cache/semantic-cache.ts';
import { normalizeChatRequest } from '../../src/chat/request-schema.ts';
import type { ChatCompletion, ChatRequest } from '../../src/chat/types.ts';
import type { ProviderConfig } from '../../src/config/gateway-config.ts';
import { ServiceUnavailableError } from '../../src/errors/catalog.ts';
import type { Dispatch } from '../../src/queue/chat-dispatcher.ts';
import { admit } from '../../src/ratelimit/admission.ts';
import { entryFields, responseStreamKey, type StreamEntry } from '../../src/streams/protocol.ts';
import { StreamReader } from '../../src/streams/stream-reader.ts';
import { fakeEmbedding } from '../support/fake-embeddings.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { replyFollower } from '../support/reply-follower.ts';

/**
 * ResponseCache, the route's view of the caches, with real Redis: lookups,
 * what is stored from a reply stream, Cache-Control, the enable switches,
 * the onLookup hook, and coalescing (who may cancel a job). Replies are
 * written to the job's Redis stream here as a worker would write them.
 */

const prefix = uniquePrefix('response-cache');
const keys = cacheKeys(prefix);
const redis = testRedis();
const reader = new StreamReader({ connect: testRedis });
const logger = pino({ level: 'silent' });
const open: ResponseCache[] = [];

const provider = {
  name: 'provider_a',
  timeout_ms: 2_000,
  stream_idle_timeout_ms: 1_000,
  queue_timeout_ms: 1_000,
} as unknown as ProviderConfig;

/** Deterministic bag-of-words vectors (see test/support/fake-embeddings.ts). */
class BagOfWordsEmbedder implements Embedder {
  readonly id = 'test:bag-of-words';
  async ready(): Promise<void> {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => Float32Array.from(fakeEmbedding(t)));
  }
  async close(): Promise<void> {}
}

async function build(overrides: Partial<ResponseCacheOptions> = {}) {
  const events: [CacheType, boolean][] = [];
  const embedder = new BagOfWordsEmbedder();
  const cache = new ResponseCache({
    exact: new ExactCache({ redis, keys, ttlSeconds: 60 }),
    semantic: new SemanticCache({ redis, subscriber: testRedis, keys, ttlSeconds: 60, logger }),
    stats: new CacheStats(redis, keys),
    logger,
    exactEnabled: true,
    semanticEnabled: true,
    threshold: 0.9,
    embedder,
    batcher: new EmbeddingBatcher(embedder),
    coalescer: new RequestCoalescer({ redis, keys, prefix, graceMs: 200 }),
    onLookup: (type, hit) => events.push([type, hit]),
    ...overrides,
  });
  open.push(cache);
  await cache.start();
  return { cache, events };
}

function request(content: string, extra: Record<string, unknown> = {}): ChatRequest {
  return normalizeChatRequest({ model: 'a-4o', messages: [{ role: 'user', content }], ...extra } as never);
}

function completion(text: string): ChatCompletion {
  return {
    id: `chatcmpl-${text.length}`,
    object: 'chat.completion',
    created: 1700000000,
    model: 'a-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  };
}

/** Writes entries to a job's reply stream, as a worker does. */
async function writeReply(jobId: string, entries: [StreamEntry['t'], string][]): Promise<void> {
  for (const [t, d] of entries) {
    await redis.xadd(
      responseStreamKey(prefix, jobId),
      '*',
      ...entryFields(
        t,
        d,
        undefined,
        t === 'end' || t === 'result' ? { prompt_tokens: 3, completion_tokens: 2 } : undefined,
      ),
    );
  }
}

/** Reads reply streams as the API does; only `follow` is used, so no queue is needed. */
const replies = replyFollower({ reader, redis, prefix, graceMs: 200 });

function look(cache: ResponseCache, req: ChatRequest, owner: string, cacheControl?: string): Promise<CacheLookup> {
  return cache.lookup(req, owner, cacheControl, Promise.resolve(admit()));
}

/**
 * The chat route's miss path (claim, then follow or enqueue, then track),
 * where enqueuing means the "worker" answers with `entries` at once, or
 * `enqueue` runs instead; records the job ids enqueued.
 */
async function dispatchMiss(
  lookup: CacheLookup,
  entries: [StreamEntry['t'], string][] | undefined,
  jobIds: string[] = [],
  enqueue?: () => Promise<void>,
): Promise<Dispatch> {
  const claim = await lookup.claim(provider);
  const signal = new AbortController().signal;
  if (claim.role === 'follower') return replies.follow(claim.jobId, provider, signal);
  try {
    await enqueue?.();
  } catch (err) {
    await lookup.leaderFailed(err);
    throw err;
  }
  jobIds.push(claim.jobId);
  if (entries) await writeReply(claim.jobId, entries);
  const dispatch = replies.follow(claim.jobId, provider, signal);
  return { ...dispatch, entries: lookup.track(dispatch.entries) };
}

async function drain(dispatch: Dispatch): Promise<StreamEntry[]> {
  const seen: StreamEntry[] = [];
  for await (const entry of dispatch.entries) seen.push(entry);
  return seen;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await deletePrefix(redis, prefix);
});

afterAll(async () => {
  await reader.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('ResponseCache', () => {
  it('misses, stores the complete reply, then hits exactly and semantically, reporting every lookup', async () => {
    const { cache, events } = await build();
    const miss = await look(cache, request('What is the capital of France?'), 'alice');
    expect(miss.status).toBe('MISS');
    const reply = JSON.stringify(completion('Paris.'));
    const seen = await drain(await dispatchMiss(miss, [['result', reply]]));
    expect(seen.map((e) => e.t)).toEqual(['result']);

    const exact = await look(cache, request('What is the capital of France?'), 'alice');
    expect(exact.status).toBe('HIT');
    expect(exact.hit?.completion).toBe(reply);
    expect(exact.ageSeconds).toBe(0);
    const semantic = await look(cache, request('France: its capital?'), 'alice');
    expect(semantic.status).toBe('SEMANTIC_HIT');
    expect(semantic.hit?.similarity).toBeCloseTo(1, 5);
    // Another owner has its own partition.
    expect((await look(cache, request('What is the capital of France?'), 'bob')).status).toBe('MISS');
    expect(events).toEqual([
      ['exact', false],
      ['semantic', false],
      ['exact', true],
      ['exact', false],
      ['semantic', true],
      ['exact', false],
      ['semantic', false],
    ]);
  });

  it('caches a prompt longer than maxPromptChars exactly only: no semantic lookup, store or hit', async () => {
    const { cache, events } = await build({ maxPromptChars: 40 });
    const long = 'What is the capital city of France, the country in Europe?';
    const miss = await look(cache, request(long), 'alice');
    expect(miss.status).toBe('MISS');
    await drain(await dispatchMiss(miss, [['result', JSON.stringify(completion('Paris.'))]]));
    expect((await look(cache, request(long), 'alice')).status).toBe('HIT');
    // The same words in another case: a semantic hit under the limit, a miss above it.
    expect((await look(cache, request(long.toUpperCase()), 'alice')).status).toBe('MISS');
    expect(events).toEqual([
      ['exact', false],
      ['exact', true],
      ['exact', false],
    ]);
    const short = await build({ maxPromptChars: 1000 });
    const first = await look(short.cache, request(long), 'bob');
    await drain(await dispatchMiss(first, [['result', JSON.stringify(completion('Paris.'))]]));
    expect((await look(short.cache, request(long.toUpperCase()), 'bob')).status).toBe('SEMANTIC_HIT');
  });

  it('stores a streamed reply rebuilt from its chunks, and never a failed one', async () => {
    const { cache } = await build();
    const chunks = completionChunks(completion('Streamed answer.'), false)
      .map((c) => JSON.stringify(c))
      .map((d): ['chunk', string] => ['chunk', d]);
    const streamed = request('Stream me something.', { stream: true });
    const first = await look(cache, streamed, 'alice');
    await drain(await dispatchMiss(first, [...chunks, ['end', '{}']]));
    const hit = await look(cache, request('Stream me something.'), 'alice');
    expect(JSON.parse(hit.hit?.completion ?? '{}').choices[0].message.content).toBe('Streamed answer.');

    const failing = await look(cache, request('This one fails.', { stream: true }), 'alice');
    await drain(
      await dispatchMiss(failing, [...chunks.slice(0, 2), ['error', '{"code":"provider_error","message":"x"}']]),
    );
    expect((await look(cache, request('This one fails.'), 'alice')).status).toBe('MISS');
  });

  it('honours Cache-Control: no-store bypasses both ways, no-cache skips the lookup and stores', async () => {
    const { cache, events } = await build();
    const bypass = await look(cache, request('Controlled.'), 'alice', 'no-store');
    expect(bypass.status).toBe('BYPASS');
    const jobIds: string[] = [];
    await drain(await dispatchMiss(bypass, [['result', JSON.stringify(completion('A'))]], jobIds));
    expect(jobIds).toHaveLength(1);
    expect(events).toEqual([]);
    expect((await look(cache, request('Controlled.'), 'alice')).status).toBe('MISS');

    const refresh = await look(cache, request('Controlled.'), 'alice', 'no-cache');
    expect(refresh.status).toBe('MISS');
    expect(events).toHaveLength(2);
    await drain(await dispatchMiss(refresh, [['result', JSON.stringify(completion('B'))]]));
    const hit = await look(cache, request('Controlled.'), 'alice');
    expect(JSON.parse(hit.hit?.completion ?? '{}').choices[0].message.content).toBe('B');
  });

  it('runs semantic-only with CACHE_ENABLED=false, and bypasses when both caches are off', async () => {
    const semanticOnly = await build({ exactEnabled: false });
    const miss = await look(semanticOnly.cache, request('Semantic only probe.'), 'alice');
    await drain(await dispatchMiss(miss, [['result', JSON.stringify(completion('S'))]]));
    expect(await redis.exists(keys.exact('any'))).toBe(0);
    const again = await look(semanticOnly.cache, request('Semantic only probe.'), 'alice');
    expect(again.status).toBe('SEMANTIC_HIT');
    expect(semanticOnly.events.every(([type]) => type === 'semantic')).toBe(true);

    const off = await build({ exactEnabled: false, semanticEnabled: false });
    expect(off.cache.semanticStatus).toBe('disabled');
    expect((await look(off.cache, request('Semantic only probe.'), 'alice')).status).toBe('BYPASS');
    expect(off.events).toEqual([]);
  });

  it('coalesces identical misses: one dispatch, followers read it, and a followed job is not cancelled', async () => {
    const { cache } = await build();
    const leader = await look(cache, request('Coalesce me.'), 'alice');
    const follower = await look(cache, request('Coalesce me.'), 'alice');
    const jobIds: string[] = [];
    const leaderDispatch = await dispatchMiss(leader, undefined, jobIds);
    const followerDispatch = await dispatchMiss(follower, undefined, jobIds);
    expect(jobIds).toHaveLength(1);
    expect(follower.coalesced).toBe(true);
    expect(followerDispatch.jobId).toBe(leaderDispatch.jobId);
    const followed = drain(followerDispatch);

    // The leader's client leaves: someone follows, so the job must go on.
    expect(await leader.mayCancel()).toBe(false);
    expect(await follower.mayCancel()).toBe(false);
    await writeReply(jobIds[0] as string, [['result', JSON.stringify(completion('Shared.'))]]);
    expect((await followed).map((e) => e.t)).toEqual(['result']);

    // Alone, a leader may cancel its job.
    const alone = await look(cache, request('Nobody follows me.'), 'alice');
    await dispatchMiss(alone, undefined);
    expect(await alone.mayCancel()).toBe(true);
    // Its claim is gone: the next identical request leads again.
    const next = await look(cache, request('Nobody follows me.'), 'alice');
    const nextIds: string[] = [];
    await dispatchMiss(next, undefined, nextIds);
    expect(nextIds).toHaveLength(1);
    expect(next.coalesced).toBe(false);
  });

  it('answers a new leader from the reply an identical request stored after its lookup, unless someone joined it', async () => {
    const { cache } = await build();
    const first = await look(cache, request('Stored meanwhile.'), 'alice');
    const late = await look(cache, request('Stored meanwhile.'), 'alice');
    const [both, joining] = [
      await look(cache, request('Stored meanwhile.'), 'alice'),
      await look(cache, request('Stored meanwhile.'), 'alice'),
    ];
    expect([first, late, both, joining].map((lookup) => lookup.status)).toEqual(['MISS', 'MISS', 'MISS', 'MISS']);
    // The first request's reply is stored and its claim released before the others claim.
    const jobIds: string[] = [];
    await drain(await dispatchMiss(first, [['result', JSON.stringify(completion('Stored meanwhile.'))]], jobIds));
    expect(jobIds).toHaveLength(1);
    const claim = await late.claim(provider);
    expect(claim.role).toBe('stored');
    const stored = claim.role === 'stored' ? claim.stored.completion : '{}';
    expect(JSON.parse(stored).choices[0].message.content).toBe('Stored meanwhile.');
    // Nothing of it is left to cancel or to follow, and the next identical request hits at its lookup.
    expect(late.coalesced).toBe(false);
    expect(await redis.keys(keys.inflight('*'))).toEqual([]);
    expect((await look(cache, request('Stored meanwhile.'), 'alice')).status).toBe('HIT');

    // Two claim at once: the first one's claim has a follower before it could give it up, so it leads.
    const [leading, following] = await Promise.all([both.claim(provider), joining.claim(provider)]);
    expect([leading.role, following.role]).toEqual(['leader', 'follower']);
    expect(following.jobId).toBe(leading.jobId);
  });

  it('replays a stored reply as the entries of a reply stream, whole or as chunks', async () => {
    const stored = JSON.stringify(completion('Replayed.'));
    const whole: StreamEntry[] = [];
    for await (const entry of cachedReplyEntries(stored, false, false)) whole.push(entry);
    expect(whole.map((e) => [e.t, e.d])).toEqual([['result', stored]]);
    const streamed: StreamEntry[] = [];
    for await (const entry of cachedReplyEntries(stored, true, true)) streamed.push(entry);
    expect(streamed.map((e) => e.t)).toEqual(['chunk', 'chunk', 'chunk', 'chunk', 'end']);
    expect(streamed.map((e) => e.d)).toEqual([
      ...completionChunks(JSON.parse(stored) as ChatCompletion, true).map((chunk) => JSON.stringify(chunk)),
      '{}',
    ]);
    // No token counts: nothing was produced upstream for the request that reads them.
    expect(streamed.some((e) => e.pt !== undefined || e.ct !== undefined)).toBe(false);
  });

  it('hands the enqueue error of the leader to its followers instead of leaving them waiting', async () => {
    const { cache } = await build();
    const leader = await look(cache, request('Queue is full.'), 'alice');
    const follower = await look(cache, request('Queue is full.'), 'alice');
    let followerDispatch: Promise<Dispatch> | undefined;
    const failing = async (): Promise<void> => {
      // The follower joins while the leader is still enqueuing.
      followerDispatch = dispatchMiss(follower, undefined);
      await followerDispatch;
      throw new ServiceUnavailableError('The provider_a queue is full (9 waiting jobs); retry shortly.');
    };
    await expect(dispatchMiss(leader, undefined, [], failing)).rejects.toThrow(/queue is full/);
    const entries = await drain(await (followerDispatch as Promise<Dispatch>));
    expect(entries.map((e) => [e.t, JSON.parse(e.d).code])).toEqual([['error', 'service_unavailable']]);
  });

  it('reports a semantic cache whose embedder cannot start as unavailable, with the reason', async () => {
    const broken: Embedder = {
      id: 'test:broken',
      ready: () => Promise.reject(new Error('weights missing at /models/x.onnx')),
      embed: () => Promise.reject(new Error('no')),
      close: async () => {},
    };
    const { cache } = await build({ embedder: broken, batcher: new EmbeddingBatcher(broken) });
    expect(cache.semanticStatus).toBe('unavailable');
    expect(cache.semanticError).toMatch(/x\.onnx/);
    expect((await look(cache, request('Still works.'), 'alice')).status).toBe('MISS');
  });
});
