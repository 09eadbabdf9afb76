import { createHash } from 'node:crypto';
import type { ChatMessage, ChatRequest } from '../chat/types.ts';

/**
 * Cache keys are SHA-256 hashes of a canonical form of the request, so Redis
 * never holds prompts in its key names. Everything that changes the reply is
 * in the key: the model, every generation parameter and all messages. `stream`
 * and `include_usage` are not: a stored reply is served as JSON or replayed as
 * SSE alike. `service_tier` only changes scheduling, so it is left out too.
 *
 * The partition comes first: the key owner's id by default, or a constant
 * when the cache is shared across keys.
 */

/** Generation parameters in a fixed order; absent ones are `null`, never dropped, so `{}` and `{temperature: 1}` differ. */
function parameters(request: ChatRequest): unknown[] {
  return [
    request.max_tokens ?? null,
    request.temperature ?? null,
    request.top_p ?? null,
    request.n,
    request.stop ?? null,
    request.seed ?? null,
    request.presence_penalty ?? null,
    request.frequency_penalty ?? null,
  ];
}

function messageTuple(message: ChatMessage): unknown[] {
  return [message.role, message.name ?? null, message.content];
}

function sha256(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

/** Key of the exact cache: partition, model, parameters, all messages. */
export function exactKeyOf(partition: string, request: ChatRequest): string {
  return sha256(['x1', partition, request.model, parameters(request), request.messages.map(messageTuple)]);
}

/**
 * Key of an in-flight request, for coalescing. Followers read the leader's
 * reply stream as it is, so the reply's shape (streamed or not, usage chunk)
 * must match too.
 */
export function inflightKeyOf(exactKey: string, request: ChatRequest): string {
  return sha256(['c1', exactKey, request.stream, request.include_usage]);
}

/** Index of the last message when it is a user message (the text the semantic cache compares), else -1. */
export function lastUserIndex(request: ChatRequest): number {
  const last = request.messages.length - 1;
  return request.messages[last]?.role === 'user' ? last : -1;
}

/**
 * Partition of the semantic cache: everything but the last user message must
 * be identical for two requests to be compared at all (key owner, embedder,
 * model, parameters, system prompt and earlier turns).
 */
export function semanticPartitionOf(partition: string, embedderId: string, request: ChatRequest): string {
  const earlier = request.messages.slice(0, -1).map(messageTuple);
  const last = request.messages.at(-1);
  return sha256(['s1', partition, embedderId, request.model, parameters(request), earlier, last?.name ?? null]);
}
