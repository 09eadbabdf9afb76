import { describe, expect, it } from 'vitest';
import { embeddingsReply } from '../../src/embeddings/embeddings-reply.ts';
import { embeddingsHttpRequest, parseEmbeddingsReply } from '../../src/embeddings/embeddings-wire.ts';
import { parseEmbeddingsRequest } from '../../src/embeddings/request-schema.ts';

/** The embeddings translation without a server: requests per format, replies read back, base64 as OpenAI encodes it. */

const endpoint = { baseUrl: 'https://up.example/v1', apiKey: 'sk-up' };

describe('embeddings wire', () => {
  it('builds one OpenAI call and one Gemini call per input count', () => {
    const request = parseEmbeddingsRequest({ model: 'm', input: ['a', 'b'], dimensions: 8 });
    const openai = embeddingsHttpRequest('openai', request, 'text-embedding-3-small', endpoint);
    expect(openai.url).toBe('https://up.example/v1/embeddings');
    expect(openai.headers.authorization).toBe('Bearer sk-up');
    expect(JSON.parse(openai.body)).toEqual({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
      dimensions: 8,
    });
    const batch = embeddingsHttpRequest('gemini', request, 'gemini-embedding-001', endpoint);
    expect(batch.url).toBe('https://up.example/v1/models/gemini-embedding-001:batchEmbedContents');
    expect(batch.headers['x-goog-api-key']).toBe('sk-up');
    expect(batch.url).not.toContain('sk-up');
    const single = embeddingsHttpRequest('gemini', parseEmbeddingsRequest({ model: 'm', input: 'a' }), 'g', endpoint);
    expect(single.url).toBe('https://up.example/v1/models/g:embedContent');
    expect(JSON.parse(single.body)).toEqual({ content: { parts: [{ text: 'a' }] } });
  });

  it('reads replies in input order, and refuses a reply that does not match the inputs', () => {
    const out = parseEmbeddingsReply(
      'openai',
      {
        data: [
          { index: 1, embedding: [2] },
          { index: 0, embedding: [1] },
        ],
        usage: { prompt_tokens: 3 },
      },
      2,
    );
    expect(out).toEqual({ vectors: [[1], [2]], promptTokens: 3 });
    expect(parseEmbeddingsReply('gemini', { embeddings: [{ values: [1] }, { values: [2] }] }, 2)).toEqual({
      vectors: [[1], [2]],
      promptTokens: undefined,
    });
    expect(() => parseEmbeddingsReply('openai', { data: [{ index: 0, embedding: [1] }] }, 2)).toThrow(
      /1 vectors for 2 inputs|vectors/,
    );
    expect(() => parseEmbeddingsReply('gemini', { embedding: { values: ['x'] } }, 1)).toThrow(/not a list of numbers/);
    expect(() => parseEmbeddingsReply('openai', { data: [{ index: 5, embedding: [1] }] }, 1)).toThrow(/out of range/);
  });

  it('encodes base64 as little-endian float32, and estimates tokens when the upstream counts none', () => {
    const { json, promptTokens } = embeddingsReply(
      { vectors: [[1.5, -2]], promptTokens: undefined },
      ['12345678'],
      'm',
      'base64',
    );
    expect(promptTokens).toBe(2);
    const body = JSON.parse(json) as { data: Array<{ embedding: string }>; usage: { prompt_tokens: number } };
    const bytes = Buffer.from(body.data[0]!.embedding, 'base64');
    expect([bytes.readFloatLE(0), bytes.readFloatLE(4)]).toEqual([1.5, -2]);
    expect(body.usage.prompt_tokens).toBe(2);
  });

  it.each([
    [{ model: 'm', input: [[1, 2]] }, /token ids/],
    [{ model: 'm', input: [] }, /input/],
    [{ model: 'm', input: 'x', dimensions: 0 }, /dimensions/],
    [{ model: 'm', input: 'x', extra: 1 }, /unrecognized field/],
    ['text', /JSON object/],
  ])('refuses %j with a clear 400', (body, message) => {
    expect(() => parseEmbeddingsRequest(body)).toThrow(message);
  });
});
