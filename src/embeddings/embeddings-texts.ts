import type { ChatRequest } from '../chat/types.ts';
import type { EmbeddingsRequest, EmbeddingsShape } from './request-schema.ts';

/**
 * An embeddings request as the pipeline carries it: each input one user
 * message, so DLP screens it and the governor estimates it as it would a
 * prompt. It asks for no output tokens (an embedding has none), so a key's
 * token limit is charged the inputs only.
 */
export function embeddingsAsChat(request: EmbeddingsRequest): ChatRequest {
  return {
    model: request.model,
    messages: request.input.map((text) => ({ role: 'user', content: text })),
    n: 1,
    stream: false,
    include_usage: false,
    max_completion_tokens: 0,
  };
}

/** The embeddings job of a request the pipeline carried (screened: its texts as DLP left them). */
export function embeddingsOfChat(request: ChatRequest, shape: EmbeddingsShape): EmbeddingsRequest {
  const job: EmbeddingsRequest = {
    model: request.model,
    input: request.messages.map((m) => m.content as string),
    encoding_format: shape.encoding_format,
  };
  if (shape.dimensions !== undefined) job.dimensions = shape.dimensions;
  return job;
}
