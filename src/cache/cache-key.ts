import { createHash } from 'node:crypto';
import { maxOutputTokens, type ChatMessage, type ChatRequest } from '../chat/types.ts';
import type { EmbeddingsShape } from '../embeddings/request-schema.ts';

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
    maxOutputTokens(request) ?? null,
    request.temperature ?? null,
    request.top_p ?? null,
    request.n,
    request.stop ?? null,
    request.seed ?? null,
    request.presence_penalty ?? null,
    request.frequency_penalty ?? null,
    // What the model may call and how it must answer changes the answer as much as the prompt does.
    request.tools ?? null,
    request.tool_choice ?? null,
    request.parallel_tool_calls ?? null,
    request.response_format ?? null,
    request.logprobs ?? null,
    request.top_logprobs ?? null,
    request.reasoning_effort ?? null,
    // Only present from the Messages door; appended only then, so the keys of every other request stay as they were.
    ...(request.top_k !== undefined || request.thinking !== undefined || request.effort !== undefined
      ? [request.top_k ?? null, request.thinking ?? null, request.effort ?? null]
      : []),
    // What passes to an Anthropic-format upstream unmodelled may change its answer; appended only when present, likewise.
    ...(request.context_management !== undefined ||
    request.extra_body !== undefined ||
    request.anthropic_beta !== undefined
      ? [request.context_management ?? null, request.extra_body ?? null, request.anthropic_beta ?? null]
      : []),
    ...(request.anthropic_server_tools !== undefined ? [request.anthropic_server_tools] : []),
  ];
}

/** Everything a message says: role, name, content (image parts included), tool calls, the call a tool result answers. */
function messageTuple(message: ChatMessage): unknown[] {
  switch (message.role) {
    case 'tool': {
      const tuple: unknown[] =
        message.is_error === true
          ? [message.role, message.tool_call_id, message.content, true]
          : [message.role, message.tool_call_id, message.content];
      // A Messages block's unmodelled fields, appended only when present (other keys stay as they were).
      if (message.anthropic !== undefined) tuple.push(message.anthropic);
      return tuple;
    }
    case 'assistant': {
      const tuple: unknown[] = [
        message.role,
        message.name ?? null,
        message.content,
        message.tool_calls ?? null,
        message.refusal ?? null,
      ];
      if (message.thinking !== undefined) tuple.push(message.thinking);
      if (message.anthropic_blocks !== undefined) tuple.push(message.anthropic_blocks);
      return tuple;
    }
    default: {
      const tuple: unknown[] = [message.role, message.name ?? null, message.content];
      // A Messages system block's unmodelled fields, appended only when present (other keys stay as they were).
      if (message.role !== 'user' && message.anthropic !== undefined) tuple.push(message.anthropic);
      return tuple;
    }
  }
}

function sha256(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

/**
 * Key of the exact cache: partition, model, parameters, all messages, as
 * sent. Only the leading and trailing whitespace of the last user message's
 * text is trimmed. Every other folding (case, punctuation, typos, courtesy) is
 * a similarity decision and belongs to the semantic cache, which honours
 * `X-Semantic-Cache: off` and the per-key and per-model switches; the exact
 * cache must not answer for it. `x3`: entries keyed by the canonical form
 * (`x2`) are never read.
 */
export function exactKeyOf(partition: string, request: ChatRequest): string {
  const messages = request.messages.map(messageTuple);
  const index = lastUserIndex(request);
  if (index >= 0) {
    const last = request.messages[index] as ChatMessage & { content: string };
    messages[index] = ['user', last.role === 'user' ? (last.name ?? null) : null, last.content.trim()];
  }
  return sha256(['x3', partition, request.model, parameters(request), messages]);
}

/**
 * Key of an embeddings request: partition, model, every input exactly as
 * sent (a trimmed space changes a vector), dimensions and encoding. `e1`
 * keeps it apart from every chat key.
 */
export function embeddingsKeyOf(partition: string, request: ChatRequest, shape: EmbeddingsShape): string {
  return sha256([
    'e1',
    partition,
    request.model,
    request.messages.map((m) => m.content),
    shape.dimensions ?? null,
    shape.encoding_format,
  ]);
}

/**
 * Key of an in-flight request, for coalescing. Followers read the leader's
 * reply stream as it is, so the reply's shape (streamed or not, usage chunk)
 * must match too, and so must whether it may carry an Anthropic-format
 * upstream's own blocks (the Messages door's; appended only then, so other
 * keys stay as they were).
 */
export function inflightKeyOf(exactKey: string, request: ChatRequest): string {
  const shape: unknown[] = ['c1', exactKey, request.stream, request.include_usage];
  if (request.anthropic_reply_blocks === true) shape.push(true);
  return sha256(shape);
}

/**
 * Index of the last message when it is a text-only user message (the text the
 * semantic cache compares), else -1: a tool result or an image cannot be
 * judged "similar" by comparing text embeddings.
 */
export function lastUserIndex(request: ChatRequest): number {
  const last = request.messages.length - 1;
  const message = request.messages[last];
  return message?.role === 'user' && typeof message.content === 'string' ? last : -1;
}

/**
 * Partition of the semantic cache: everything but the last user message must
 * be identical for two requests to be compared at all (key owner, embedder,
 * model, parameters, system prompt and earlier turns).
 */
export function semanticPartitionOf(partition: string, embedderId: string, request: ChatRequest): string {
  const earlier = request.messages.slice(0, -1).map(messageTuple);
  const last = request.messages.at(-1);
  return sha256([
    's2',
    partition,
    embedderId,
    request.model,
    parameters(request),
    earlier,
    last?.role === 'user' ? (last.name ?? null) : null,
  ]);
}

/** How a native Responses request is keyed: its body as DLP left it, and its prompt for the semantic cache. */
export interface ResponsesKeying {
  /** The Responses body as forwarded (texts redacted). */
  body: Record<string, unknown>;
  /**
   * The text the semantic cache compares: the last input item's, when it is a
   * user message of one text (or `input` is a string), with where it sits.
   * @defaultValue none: only the exact cache answers
   */
  prompt?: { text: string; path: readonly (string | number)[] };
}

/** Fields of a Responses body that change how the reply travels, not what it says. */
const RESPONSES_TRANSPORT = new Set(['stream', 'stream_options']);

/** `value` with object keys sorted, so the same body sent with its fields in another order has the same key. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys((value as Record<string, unknown>)[key]);
  return out;
}

function responsesFields(body: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) if (!RESPONSES_TRANSPORT.has(key)) fields[key] = value;
  return sortedKeys(fields) as Record<string, unknown>;
}

/**
 * Key of a native Responses request: partition and the whole body but for
 * `stream` (every field may change the upstream's answer or the `response`
 * object that echoes it: tools, `include`, reasoning, metadata). `r1` keeps
 * it apart from the chat keys, whose stored replies have another shape.
 */
export function responsesKeyOf(partition: string, body: Record<string, unknown>): string {
  return sha256(['r1', partition, responsesFields(body)]);
}

/** Partition of the semantic cache for a native Responses request: the whole body but for its prompt text. */
export function responsesPartitionOf(
  partition: string,
  embedderId: string,
  body: Record<string, unknown>,
  promptPath: readonly (string | number)[],
): string {
  const fields = responsesFields(body);
  let node: unknown = fields;
  for (const key of promptPath.slice(0, -1)) node = (node as Record<string | number, unknown>)[key];
  (node as Record<string | number, unknown>)[promptPath.at(-1) as string | number] = null;
  return sha256(['rs1', partition, embedderId, fields]);
}

/**
 * The prompt of a Responses body for the semantic cache: `input` as a string,
 * or the last input item when it is a user message of exactly one text
 * (string content or one `input_text` part); undefined otherwise (a tool
 * result, an image, several parts), as for a chat request whose last message
 * is not a text-only user message.
 */
export function responsesPromptOf(body: Record<string, unknown>): ResponsesKeying['prompt'] {
  const input = body.input;
  if (typeof input === 'string') return { text: input, path: ['input'] };
  if (!Array.isArray(input) || input.length === 0) return undefined;
  const last = input.length - 1;
  const item = input[last] as Record<string, unknown> | null;
  if (typeof item !== 'object' || item === null || item.role !== 'user') return undefined;
  if (item.type !== undefined && item.type !== null && item.type !== 'message') return undefined;
  if (typeof item.content === 'string') return { text: item.content, path: ['input', last, 'content'] };
  const parts = item.content;
  if (!Array.isArray(parts) || parts.length !== 1) return undefined;
  const part = parts[0] as Record<string, unknown> | null;
  if (part?.type !== 'input_text' || typeof part.text !== 'string') return undefined;
  return { text: part.text, path: ['input', last, 'content', 0, 'text'] };
}
