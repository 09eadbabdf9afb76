import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import {
  MINILM,
  SHARED_MODELS,
  realModelPresent,
  tokenizerPresent,
  writeTinyModel,
} from '../support/tiny-onnx-model.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The semantic cache with the local ONNX embedder (the default backend)
 * through a running gateway: with a tiny ONNX model written by the test (the
 * real transformers.js + onnxruntime path, always run), with the weights
 * missing (the gateway degrades to the exact cache and says why), and with
 * the real all-MiniLM-L6-v2 when its weights are in shared/models.
 */

const KEY = 'gw_onnx_e2e_key_0123456789abc';
const ADMIN_KEY = 'gw_onnx_e2e_admin_0123456789a';
const redis = testRedis();
const started: { gateway: Gateway; upstream: FakeUpstream; prefix: string }[] = [];
const modelDirs: (() => void)[] = [];

async function start(
  name: string,
  env: Record<string, string>,
): Promise<{ gateway: Gateway; client: OpenAI; upstream: FakeUpstream }> {
  const prefix = uniquePrefix(name);
  const upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a-secret' });
  const gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      ADMIN_API_KEYS: ADMIN_KEY,
      PROVIDER_A_API_KEY: 'up-a-secret',
      DLP_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
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
  return {
    gateway,
    upstream,
    client: new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 30_000 }),
  };
}

async function stats(gateway: Gateway): Promise<Untyped> {
  return (await fetch(`${gateway.baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN_KEY } })).json();
}

async function ask(client: OpenAI, content: string) {
  const { data, response } = await client.chat.completions
    .create({ model: 'a-4o', messages: [{ role: 'user', content }] })
    .withResponse();
  return {
    data,
    xCache: response.headers.get('x-cache'),
    similarity: Number(response.headers.get('x-cache-similarity')),
  };
}

afterAll(async () => {
  for (const { gateway, upstream, prefix } of started) {
    await gateway.stop();
    await upstream.close();
    await deletePrefix(redis, prefix);
  }
  for (const remove of modelDirs) remove();
  redis.disconnect();
});

describe('semantic cache with the ONNX embedder', () => {
  it.runIf(tokenizerPresent())(
    'serves a reordered prompt from a tiny ONNX model run by transformers.js in the API',
    async () => {
      const tiny = writeTinyModel(32);
      modelDirs.push(tiny.remove);
      const { gateway, client } = await start('onnx-tiny', {
        EMBEDDING_BACKEND: 'onnx',
        EMBEDDING_MODEL_PATH: tiny.modelsPath,
        EMBEDDING_MODEL: tiny.model,
        SEMANTIC_CACHE_THRESHOLD: '0.99',
      });
      await waitFor(
        async () => (await stats(gateway)).semantic_cache.status === 'ready',
        20_000,
        'the ONNX model to load',
      );
      expect((await stats(gateway)).semantic_cache.embedder).toBe('onnx:test/tiny-bow:q8');
      expect((await ask(client, 'what is the capital of france?')).xCache).toBe('MISS');
      // Same tokens in another order: the tiny bag-of-tokens model embeds them identically.
      const reordered = await ask(client, 'the capital of france is what?');
      expect(reordered.xCache).toBe('SEMANTIC_HIT');
      expect(reordered.similarity).toBeGreaterThan(0.99);
      expect(reordered.data.choices[0]?.message.content).toBe('Echo: what is the capital of france?');
      expect((await ask(client, 'how do I bake sourdough bread?')).xCache).toBe('MISS');
    },
  );

  it.runIf(tokenizerPresent())(
    'keeps serving from the exact cache and says why when the model weights are missing',
    async () => {
      // The tiny model folder has only onnx/model_quantized.onnx: asking for fp32 weights (onnx/model.onnx) finds none.
      const tiny = writeTinyModel(8);
      modelDirs.push(tiny.remove);
      const { gateway, client, upstream } = await start('onnx-missing', {
        EMBEDDING_BACKEND: 'onnx',
        EMBEDDING_MODEL_PATH: tiny.modelsPath,
        EMBEDDING_MODEL: tiny.model,
        EMBEDDING_DTYPE: 'fp32',
      });
      await waitFor(
        async () => (await stats(gateway)).semantic_cache.status === 'unavailable',
        20_000,
        'the model load to fail',
      );
      const body = await stats(gateway);
      expect(body.semantic_cache.error).toMatch(/onnx\/model\.onnx/);
      expect((await ask(client, 'Weights missing probe.')).xCache).toBe('MISS');
      expect((await ask(client, 'Weights missing probe.')).xCache).toBe('HIT');
      expect(upstream.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
      expect(gateway.api.output()).toMatch(/semantic cache unavailable/);
    },
  );

  const present = realModelPresent();
  if (!present) {
    process.stderr.write(
      `\n${'!'.repeat(100)}\n!! SKIPPED: the paraphrase test with the real all-MiniLM-L6-v2 through the gateway.\n` +
        `!! ${SHARED_MODELS}/${MINILM}/onnx/model_quantized.onnx is absent; add it to run this test.\n${'!'.repeat(100)}\n\n`,
    );
  }
  it.runIf(present)(
    'answers a paraphrase with the real all-MiniLM-L6-v2; unrelated and near-miss prompts miss',
    async () => {
      const { gateway, client } = await start('onnx-real', {
        EMBEDDING_BACKEND: 'onnx',
        EMBEDDING_MODEL_PATH: SHARED_MODELS,
        SEMANTIC_CACHE_THRESHOLD: '0.9',
      });
      await waitFor(
        async () => (await stats(gateway)).semantic_cache.status === 'ready',
        60_000,
        'the real model to load',
      );
      expect((await ask(client, 'What is the capital of France?')).xCache).toBe('MISS');
      // A trivial variant shares the canonical form; the exact cache answers only the request as sent, so the semantic one does.
      expect((await ask(client, "what's the capital of France")).xCache).toBe('SEMANTIC_HIT');
      // A prompt without capitals may match one with them, through the verifier.
      expect((await ask(client, 'what is the capital of france')).xCache).toBe('SEMANTIC_HIT');
      const paraphrase = await ask(client, 'The capital of France, what is it?');
      expect(paraphrase.xCache).toBe('SEMANTIC_HIT');
      expect(paraphrase.similarity).toBeGreaterThanOrEqual(0.9);
      // The same words in the other direction embed almost identically; the verifier refuses them.
      expect((await ask(client, 'Convert 100 USD to EUR')).xCache).toBe('MISS');
      expect((await ask(client, 'Convert 100 EUR to USD')).xCache).toBe('MISS');
      expect((await ask(client, 'How do I bake sourdough bread?')).xCache).toBe('MISS');
      expect((await ask(client, 'What is the capital of Germany?')).xCache).toBe('MISS');
      expect((await ask(client, 'What is not the capital of France?')).xCache).toBe('MISS');
      // Pairs the model scores near 1.0 that need another answer: a name against the common word it
      // spells, opposites one letter apart, a command's arguments swapped.
      for (const [first, second] of [
        ['How expensive is Turkey in July?', 'How expensive is turkey in July?'],
        ['What rights does an employer have during a strike?', 'What rights does an employee have during a strike?'],
        ['what does git diff main feature show', 'what does git diff feature main show'],
      ]) {
        expect((await ask(client, first as string)).xCache).toBe('MISS');
        expect((await ask(client, second as string)).xCache).toBe('MISS');
      }
      // Their look-alikes still hit: a month written in lower case, an adverb moved.
      expect((await ask(client, 'What should I plant in early March?')).xCache).toBe('MISS');
      expect((await ask(client, 'what should I plant in early march')).xCache).toBe('SEMANTIC_HIT');
      expect((await ask(client, 'How do I quickly reset a home router?')).xCache).toBe('MISS');
      expect((await ask(client, 'How do I reset a home router quickly?')).xCache).toBe('SEMANTIC_HIT');
    },
    120_000,
  );
});
