import { AutoTokenizer, env } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddingBatcher } from '../../src/cache/embedders/embedding-batcher.ts';
import { EmbeddingError, type Embedder } from '../../src/cache/embedders/embedder.ts';
import { EndpointEmbedder } from '../../src/cache/embedders/endpoint-embedder.ts';
import { OnnxEmbedder } from '../../src/cache/embedders/onnx-embedder.ts';
import { normalize } from '../../src/cache/vector-index.ts';
import { fakeEmbedding } from '../support/fake-embeddings.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import {
  MINILM,
  SHARED_MODELS,
  realModelPresent,
  tinyEmbeddingTable,
  tokenizerPresent,
  writeTinyModel,
} from '../support/tiny-onnx-model.ts';

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

describe('EndpointEmbedder (OpenAI-compatible /embeddings of a provider)', () => {
  let upstream: FakeUpstream;
  let embedder: EndpointEmbedder;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ format: 'openai', apiKey: 'sk-embed' });
    embedder = new EndpointEmbedder({
      model: 'text-embedding-fake',
      endpoint: () => ({ name: 'provider_a', baseUrl: upstream.url, apiKey: 'sk-embed' }),
      timeoutMs: 500,
    });
  });
  afterAll(() => upstream.close());

  it('posts the texts with the provider key and returns normalized vectors in order', async () => {
    upstream.reset();
    const texts = ['What is the capital of France?', 'How do I bake bread?'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(2);
    vectors.forEach((v, i) => {
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
      expect(cosine(v, Float32Array.from(fakeEmbedding(texts[i] as string)))).toBeCloseTo(1, 5);
    });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]?.path).toBe('/v1/embeddings');
    expect(upstream.requests[0]?.headers.authorization).toBe('Bearer sk-embed');
    expect(upstream.requests[0]?.body).toMatchObject({ model: 'text-embedding-fake', input: texts });
    expect(embedder.id).toBe('endpoint:provider_a:text-embedding-fake');
  });

  it('fails with a clear EmbeddingError on HTTP errors, timeouts and a missing key, never leaking the key', async () => {
    upstream.setBehavior({ failNext: { count: 1, status: 500 } });
    await expect(embedder.embed(['x'])).rejects.toThrow(/answered HTTP 500/);
    upstream.setBehavior({ latencyMs: 2_000 });
    const error = await embedder.embed(['x']).catch((err: Error) => err);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toMatch(/unreachable: TimeoutError/);
    upstream.setBehavior({ latencyMs: 0 });
    const keyless = new EndpointEmbedder({
      model: 'm',
      endpoint: () => ({ name: 'provider_a', baseUrl: upstream.url, apiKey: undefined }),
    });
    await expect(keyless.ready()).rejects.toThrow(/no API key configured/);
    const wrongKey = new EndpointEmbedder({
      model: 'm',
      endpoint: () => ({ name: 'provider_a', baseUrl: upstream.url, apiKey: 'sk-wrong-secret' }),
    });
    const err = await wrongKey.embed(['x']).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/HTTP 401/);
    expect((err as Error).message).not.toContain('sk-wrong-secret');
  });

  it('batches concurrent requests into fewer calls without delaying a lone one', async () => {
    upstream.reset();
    upstream.setBehavior({ latencyMs: 30 });
    const batcher = new EmbeddingBatcher(embedder, { maxBatchSize: 8 });
    const texts = Array.from(
      { length: 20 },
      (_, i) => `question number ${i} about topic ${String.fromCharCode(97 + i)}`,
    );
    const vectors = await Promise.all(texts.map((t) => batcher.embed(t)));
    expect(vectors).toHaveLength(20);
    vectors.forEach((v, i) =>
      expect(cosine(v, Float32Array.from(fakeEmbedding(texts[i] as string)))).toBeCloseTo(1, 5),
    );
    // The first goes alone at once; the 19 that arrive meanwhile leave as batches of at most 8.
    expect(upstream.requests.map((r) => (r.body as { input: string[] }).input.length)).toEqual([1, 8, 8, 3]);
    expect(batcher.batches).toBe(4);
    upstream.setBehavior({ failNext: { count: 1, status: 503 }, latencyMs: 0 });
    await expect(batcher.embed('fails')).rejects.toThrow(EmbeddingError);
    await expect(batcher.embed('works again')).resolves.toHaveLength(256);
  });
});

describe('OnnxEmbedder (transformers.js in a worker thread)', () => {
  const open: Embedder[] = [];
  const modelDirs: (() => void)[] = [];
  afterAll(async () => {
    await Promise.all(open.map((e) => e.close()));
    for (const remove of modelDirs) remove();
  });

  if (!tokenizerPresent())
    process.stderr.write(
      `\n!! SKIPPED: the tiny ONNX model test needs the tokenizer files in ${SHARED_MODELS}/${MINILM}.\n\n`,
    );
  it.runIf(tokenizerPresent())(
    'runs a real ONNX graph off the event loop: mean-pooled, normalized, batched',
    async () => {
      const tiny = writeTinyModel(32);
      const embedder = new OnnxEmbedder({ localModelPath: tiny.modelsPath, model: tiny.model, threads: 1 });
      open.push(embedder);
      modelDirs.push(tiny.remove);
      await embedder.ready();
      expect(embedder.id).toBe('onnx:test/tiny-bow:q8');
      const texts = ['What is the capital of France?', 'hello world', 'What is the capital of France?'];
      const vectors = await embedder.embed(texts);
      expect(vectors.map((v) => v.length)).toEqual([32, 32, 32]);
      expect(cosine(vectors[0] as Float32Array, vectors[2] as Float32Array)).toBeCloseTo(1, 5);
      expect(cosine(vectors[0] as Float32Array, vectors[1] as Float32Array)).toBeLessThan(0.9);

      // Independent check: the normalized mean of the table rows of the token ids.
      env.localModelPath = `${tiny.modelsPath}/`;
      env.allowRemoteModels = false;
      const tokenizer = await AutoTokenizer.from_pretrained(tiny.model);
      const ids = Array.from((tokenizer('hello world').input_ids as { data: BigInt64Array }).data, Number);
      const table = tinyEmbeddingTable(32);
      const expected = new Float32Array(32);
      for (const id of ids)
        for (let d = 0; d < 32; d++)
          expected[d] = (expected[d] as number) + (table[id * 32 + d] as number) / ids.length;
      expect(cosine(vectors[1] as Float32Array, normalize(expected))).toBeCloseTo(1, 4);

      // Concurrent single requests through the batcher share the thread in batches.
      const batcher = new EmbeddingBatcher(embedder, { maxBatchSize: 16 });
      const many = await Promise.all(Array.from({ length: 40 }, (_, i) => batcher.embed(`prompt ${i}`)));
      expect(many).toHaveLength(40);
      expect(batcher.batches).toBeLessThan(40);
      expect(cosine(many[7] as Float32Array, (await embedder.embed(['prompt 7']))[0] as Float32Array)).toBeCloseTo(
        1,
        5,
      );
    },
  );

  it('reports a missing weights file clearly instead of failing later', async () => {
    const embedder = new OnnxEmbedder({ localModelPath: '/nonexistent/models', model: MINILM });
    open.push(embedder);
    const error = await embedder.ready().catch((err: Error) => err);
    expect(error).toBeInstanceOf(EmbeddingError);
    expect((error as Error).message).toMatch(/could not be loaded/);
    await expect(embedder.embed(['x'])).rejects.toThrow(/could not be loaded/);
  });

  const present = realModelPresent();
  if (!present) {
    process.stderr.write(
      `\n${'!'.repeat(100)}\n!! SKIPPED: the real ONNX model test. ${SHARED_MODELS}/${MINILM}/onnx/model_quantized.onnx is absent.\n` +
        `!! Add it (see shared/models/SOURCES.md and the README's cache section) and this test runs.\n${'!'.repeat(100)}\n\n`,
    );
  }
  it.runIf(present)('embeds paraphrases close and unrelated prompts apart with the real all-MiniLM-L6-v2', async () => {
    const embedder = new OnnxEmbedder({ localModelPath: SHARED_MODELS, model: MINILM });
    open.push(embedder);
    await embedder.ready();
    const [a, b, c] = await embedder.embed([
      'What is the capital of France?',
      'What is the capital city of France?',
      'How do I bake sourdough bread?',
    ]);
    expect(a).toHaveLength(384);
    expect(cosine(a as Float32Array, b as Float32Array)).toBeGreaterThan(0.9);
    expect(cosine(a as Float32Array, c as Float32Array)).toBeLessThan(0.5);
  });

  // Needs the shared tokenizer files (beside the checkout, as in CI) but not the weights.
  it.runIf(!present && tokenizerPresent())(
    'explains which file is missing when the real model has no weights',
    async () => {
      const embedder = new OnnxEmbedder({ localModelPath: SHARED_MODELS, model: MINILM });
      open.push(embedder);
      await expect(embedder.ready()).rejects.toThrow(/model_quantized\.onnx/);
    },
  );
});
