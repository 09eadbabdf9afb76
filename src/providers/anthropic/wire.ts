import { z } from 'zod';
import { usageOf } from '../../chat/token-usage.ts';
import type { FinishReason, Usage } from '../../chat/types.ts';
import { UpstreamProtocolError } from '../types.ts';

/**
 * The parts of the Anthropic Messages API wire format that both the
 * non-streamed parser and the stream decoder read. Only the fields the gateway
 * relies on are checked. Shapes follow the API reference as generated into
 * Anthropic's TypeScript SDK (`src/resources/messages/messages.ts`: ContentBlock,
 * ToolUseBlock, InputJSONDelta, RawContentBlockStartEvent, StopReason).
 */

/**
 * Maps a `stop_reason`. `pause_turn` (a server-tool loop paused) is a stop
 * from the client's point of view; `model_context_window_exceeded` is a
 * truncation like `max_tokens`.
 */
export function mapAnthropicStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'content_filter';
    case 'tool_use':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

/** Token counts; every field is optional because `message_delta` sends only what changed. */
export const anthropicUsageSchema = z.object({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  // The split of cache_creation_input_tokens by retention.
  cache_creation: z
    .object({ ephemeral_5m_input_tokens: z.number().nullish(), ephemeral_1h_input_tokens: z.number().nullish() })
    .nullish(),
});

export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

/**
 * Prompt tokens as OpenAI counts them: Anthropic's `input_tokens` leaves out
 * the tokens written to and read from the prompt cache, OpenAI's
 * `prompt_tokens` includes cached tokens. Undefined when the usage has no input
 * counts at all.
 */
export function promptTokensOf(usage: AnthropicUsage): number | undefined {
  if (
    usage.input_tokens == null &&
    usage.cache_creation_input_tokens == null &&
    usage.cache_read_input_tokens == null
  ) {
    return undefined;
  }
  return (usage.input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}

/** The prompt-cache counts of a usage, each undefined when this usage did not report it. */
export interface AnthropicCacheCounts {
  cachedRead?: number | undefined;
  cacheWrite?: number | undefined;
  cacheWrite1h?: number | undefined;
}

export function cacheCountsOf(usage: AnthropicUsage): AnthropicCacheCounts {
  return {
    cachedRead: usage.cache_read_input_tokens ?? undefined,
    cacheWrite: usage.cache_creation_input_tokens ?? undefined,
    cacheWrite1h: usage.cache_creation?.ephemeral_1h_input_tokens ?? undefined,
  };
}

/**
 * OpenAI-shaped usage: `prompt` already includes the cache reads and writes
 * ({@link promptTokensOf}). Thinking is billed as output and counted in
 * `output_tokens`; the API reports no separate count of it, so there is no
 * reasoning detail to give.
 */
export function toUsage(prompt: number, completion: number, cache: AnthropicCacheCounts = {}): Usage {
  return usageOf({ prompt, completion, ...cache });
}

/**
 * A content block. `text` blocks carry the text the client sees; `tool_use`
 * blocks (`id`, `name`, `input` object) are the client's function calls. Other
 * types (thinking, server tools and their results) are skipped by the readers.
 */
export const contentBlockSchema = z.object({
  type: z.string(),
  text: z.string().nullish(),
  id: z.string().nullish(),
  name: z.string().nullish(),
  input: z.unknown().optional(),
  /** `thinking` blocks: the reasoning text and its signature; `redacted_thinking`: the encrypted `data`. */
  thinking: z.string().nullish(),
  signature: z.string().nullish(),
  data: z.string().nullish(),
});

export type ContentBlock = z.infer<typeof contentBlockSchema>;

/** The id and name of a `tool_use` block; throws when the upstream left either out. */
export function toolUseOf(block: ContentBlock): { id: string; name: string; input: unknown } {
  if (typeof block.id !== 'string' || block.id === '' || typeof block.name !== 'string' || block.name === '') {
    throw new UpstreamProtocolError('A tool_use block from the Anthropic upstream has no id or name.');
  }
  return { id: block.id, name: block.name, input: block.input };
}

/** The JSON text of a tool input as OpenAI clients read `arguments`; a missing input is an empty object. */
export function inputJson(input: unknown): string {
  return JSON.stringify(input ?? {});
}

export const messageSchema = z.object({
  content: z.array(contentBlockSchema),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: anthropicUsageSchema.extend({ input_tokens: z.number(), output_tokens: z.number() }),
});

/** `{type: 'error', error: {type, message}}`, both as an HTTP body and as a stream event. */
export const anthropicErrorSchema = z.object({
  error: z.object({ type: z.string().nullish(), message: z.string() }),
});
