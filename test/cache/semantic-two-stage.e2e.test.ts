import { existsSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { OnnxEmbedder } from '../../src/cache/embedders/onnx-embedder.ts';
import { canonicalPrompt } from '../../src/cache/prompt-canonical.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { MINILM, SHARED_MODELS } from '../support/tiny-onnx-model.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The two-stage semantic lookup through a running gateway with the real
 * all-MiniLM-L6-v2 and its distilled static table: the table finds the
 * candidate, the verifier checks it, and the model's similarity decides
 * (and is what X-Cache-Similarity reports); a candidate the model finds
 * below the threshold is counted as `dissimilar`.
 */

const KEY = 'gw_two_stage_key_0123456789abc';
const ADMIN_KEY = 'gw_two_stage_admin_0123456789a';
const present =
  existsSync(join(SHARED_MODELS, MINILM, 'static', 'embeddings.f32')) &&
  existsSync(join(SHARED_MODELS, MINILM, 'onnx', 'model_quantized.onnx'));
if (!present) {
  process.stderr.write(
    `\n!! SKIPPED: the two-stage semantic lookup test: no static table in ${SHARED_MODELS}/${MINILM} (bash scripts/export-minilm-onnx.sh)\n\n`,
  );
}
const redis = testRedis();
const started: { gateway: Gateway; upstream: FakeUpstream; prefix: string }[] = [];
const embedder = new OnnxEmbedder({ localModelPath: SHARED_MODELS });

async function start(name: string, env: Record<string, string>) {
  const prefix = uniquePrefix(name);
  const upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a-secret' });
  const gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      ADMIN_API_KEYS: ADMIN_KEY,
      PROVIDER_A_API_KEY: 'up-a-secret',
      DLP_ENABLED: 'false',
      EMBEDDING_MODEL_PATH: SHARED_MODELS,
      ...env,
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          max_retries: 0,
        },
      ],
    },
    providers: ['provider_a'],
  });
  started.push({ gateway, upstream, prefix });
  const stats = async () =>
    (await (
      await fetch(`${gateway.baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN_KEY } })
    ).json()) as Untyped;
  await waitFor(async () => (await stats()).semantic_cache.status === 'ready', 60_000, 'the real model to load');
  const client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 30_000 });
  const ask = async (content: string) => {
    const { response } = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content }] })
      .withResponse();
    return { xCache: response.headers.get('x-cache'), similarity: Number(response.headers.get('x-cache-similarity')) };
  };
  const candidates = async (outcome: string) => {
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': ADMIN_KEY } })).text();
    return Number(
      new RegExp(`gateway_semantic_candidates_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0,
    );
  };
  return { gateway, ask, stats, candidates };
}

async function modelSimilarity(a: string, b: string): Promise<number> {
  const [x, y] = await embedder.embed([canonicalPrompt(a).text, canonicalPrompt(b).text]);
  return (x as Float32Array).reduce((sum, v, i) => sum + v * ((y as Float32Array)[i] as number), 0);
}

afterAll(async () => {
  await embedder.close();
  for (const { gateway, upstream, prefix } of started) {
    await gateway.stop();
    await upstream.close();
    await deletePrefix(redis, prefix);
  }
  redis.disconnect();
});

describe.runIf(present)('two-stage semantic lookup with the real model', () => {
  const cached = 'What is the capital of France?';
  const paraphrase = 'The capital of France, what is it?';

  it('retrieves with the static table and serves on the model similarity', async () => {
    const { ask, stats, candidates } = await start('two-stage', {});
    expect((await stats()).semantic_cache.retriever).toBe(`static:${MINILM}`);
    expect((await ask(cached)).xCache).toBe('MISS');
    const hit = await ask(paraphrase);
    expect(hit.xCache).toBe('SEMANTIC_HIT');
    // The reported similarity is the transformer's, not the static table's.
    expect(hit.similarity).toBeCloseTo(await modelSimilarity(cached, paraphrase), 3);
    expect(await candidates('verified')).toBe(1);
    // Unrelated prompts never reach the model: no candidate at all.
    expect((await ask('How do I bake sourdough bread at home?')).xCache).toBe('MISS');
    expect(await candidates('dissimilar')).toBe(0);
    // WordPiece splits a typo into unrelated pieces; the first stage reads it as the vocabulary word one edit away.
    expect((await ask('How do solar panels generate electricity?')).xCache).toBe('MISS');
    expect((await ask('How do solar pannels generate electrcity?')).xCache).toBe('SEMANTIC_HIT');
    expect(await candidates('verified')).toBe(2);
    // Han characters the vocabulary lacks still give a Chinese prompt a first-stage vector, its own.
    expect((await ask('怎么煮米饭？')).xCache).toBe('MISS');
    expect((await ask('怎么煮米饭')).xCache).toBe('SEMANTIC_HIT');
    expect((await ask('如何申请签证')).xCache).toBe('MISS');
    expect(await candidates('verified')).toBe(3);
  }, 120_000);

  it('counts a verified candidate the model finds below the threshold as dissimilar, and misses', async () => {
    const { ask, candidates } = await start('two-stage-strict', { SEMANTIC_CACHE_THRESHOLD: '0.995' });
    expect(await modelSimilarity(cached, paraphrase)).toBeLessThan(0.995);
    expect((await ask(cached)).xCache).toBe('MISS');
    expect((await ask(paraphrase)).xCache).toBe('MISS');
    expect(await candidates('dissimilar')).toBe(1);
    expect(await candidates('verified')).toBe(0);
  }, 120_000);

  it('with EMBEDDING_RETRIEVER=none embeds every lookup with the model and serves the same paraphrase', async () => {
    const { ask, stats } = await start('one-stage', { EMBEDDING_RETRIEVER: 'none' });
    expect((await stats()).semantic_cache.retriever).toBeNull();
    expect((await ask(cached)).xCache).toBe('MISS');
    const hit = await ask(paraphrase);
    expect(hit.xCache).toBe('SEMANTIC_HIT');
    expect(hit.similarity).toBeCloseTo(await modelSimilarity(cached, paraphrase), 3);
  }, 120_000);
});
