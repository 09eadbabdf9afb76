import {
  UpstreamProtocolError,
  type ProviderEndpoint,
  type UpstreamHttpRequest,
  type WireFormat,
} from '../providers/types.ts';
import type { EmbeddingsRequest } from './request-schema.ts';

/**
 * Embeddings in the two upstream formats that serve them: OpenAI's
 * `POST /embeddings`, Gemini's `models/{model}:embedContent` (one input) and
 * `:batchEmbedContents` (several). Anthropic's API has no embeddings.
 * Upstreams are always asked for floats; the client's `encoding_format` is
 * applied to the reply (src/embeddings/embeddings-reply.ts).
 */

/** Formats with an embeddings API. */
export function servesEmbeddings(format: WireFormat): format is 'openai' | 'gemini' {
  return format === 'openai' || format === 'gemini';
}

/** The upstream call; `upstreamModel` is the provider's id of the model. */
export function embeddingsHttpRequest(
  format: 'openai' | 'gemini',
  request: EmbeddingsRequest,
  upstreamModel: string,
  endpoint: ProviderEndpoint,
): UpstreamHttpRequest {
  if (format === 'openai') {
    const body: Record<string, unknown> = { model: upstreamModel, input: request.input, encoding_format: 'float' };
    if (request.dimensions !== undefined) body.dimensions = request.dimensions;
    return {
      url: `${endpoint.baseUrl}/embeddings`,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${endpoint.apiKey}`,
        accept: 'application/json',
      },
      body: JSON.stringify(body),
    };
  }
  const model = encodeURIComponent(upstreamModel);
  const one = (text: string) => {
    const entry: Record<string, unknown> = { content: { parts: [{ text }] } };
    if (request.dimensions !== undefined) entry.outputDimensionality = request.dimensions;
    return entry;
  };
  const single = request.input.length === 1;
  return {
    url: `${endpoint.baseUrl}/models/${model}:${single ? 'embedContent' : 'batchEmbedContents'}`,
    // The key goes in a header, never in the URL, so it cannot leak into logs of URLs.
    headers: { 'content-type': 'application/json', 'x-goog-api-key': endpoint.apiKey, accept: 'application/json' },
    body: JSON.stringify(
      single
        ? one(request.input[0]!)
        : { requests: request.input.map((text) => ({ model: `models/${upstreamModel}`, ...one(text) })) },
    ),
  };
}

/** Vectors in input order and the prompt tokens the upstream counted (undefined when it counts none: Gemini). */
export interface EmbeddingsResult {
  vectors: number[][];
  promptTokens: number | undefined;
}

function vector(value: unknown, where: string): number[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every((x) => typeof x === 'number'))
    throw new UpstreamProtocolError(`${where} is not a list of numbers`);
  return value as number[];
}

export function parseEmbeddingsReply(format: 'openai' | 'gemini', body: unknown, count: number): EmbeddingsResult {
  const b = body as Record<string, unknown> | null;
  let vectors: number[][];
  let promptTokens: number | undefined;
  if (format === 'openai') {
    if (!b || !Array.isArray(b.data)) throw new UpstreamProtocolError('the embeddings reply has no data list');
    vectors = new Array<number[]>(count);
    for (const item of b.data as Array<{ index?: unknown; embedding?: unknown }>) {
      const index = typeof item.index === 'number' ? item.index : -1;
      if (index < 0 || index >= count)
        throw new UpstreamProtocolError('the embeddings reply has an index out of range');
      vectors[index] = vector(item.embedding, `data.${index}.embedding`);
    }
    const usage = b.usage as { prompt_tokens?: unknown } | undefined;
    promptTokens = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : undefined;
  } else if (count === 1) {
    vectors = [vector((b?.embedding as { values?: unknown } | undefined)?.values, 'embedding.values')];
  } else {
    if (!b || !Array.isArray(b.embeddings))
      throw new UpstreamProtocolError('the batch embeddings reply has no embeddings list');
    vectors = (b.embeddings as Array<{ values?: unknown }>).map((e, i) => vector(e?.values, `embeddings.${i}.values`));
  }
  // A loop, not some(): some() skips the holes a missing index leaves.
  let found = 0;
  for (let i = 0; i < vectors.length; i++) if (vectors[i] !== undefined) found++;
  if (vectors.length !== count || found !== count)
    throw new UpstreamProtocolError(`the reply has ${found} vectors for ${count} inputs`);
  return { vectors, promptTokens };
}
