import type { EmbeddingsResult } from './embeddings-wire.ts';

/**
 * OpenAI's embeddings list object. `base64` is what OpenAI sends for it: the
 * little-endian float32 bytes of each vector, base64-encoded (the SDKs decode
 * it). Gemini counts no tokens for embeddings; its count is then estimated
 * at one token per four characters, so usage and budgets still see the call.
 */
export function embeddingsReply(
  result: EmbeddingsResult,
  input: readonly string[],
  model: string,
  encoding: 'float' | 'base64',
): { json: string; promptTokens: number } {
  const tokens = result.promptTokens ?? input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
  const data = result.vectors.map((values, index) => ({
    object: 'embedding',
    index,
    embedding: encoding === 'float' ? values : base64Floats(values),
  }));
  return {
    json: JSON.stringify({ object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } }),
    promptTokens: tokens,
  };
}

function base64Floats(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  for (const [i, value] of values.entries()) bytes.writeFloatLE(value, i * 4);
  return bytes.toString('base64');
}
