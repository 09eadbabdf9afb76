import { z } from 'zod';
import { usageOf } from '../../chat/token-usage.ts';
import type { FinishReason, ToolCall, Usage } from '../../chat/types.ts';

/**
 * The parts of the OpenAI chat-completions wire format that both the
 * non-streamed parser and the stream decoder read. Schemas check only the
 * fields the gateway relies on; unknown fields are ignored.
 */

/** Maps an upstream `finish_reason`; `null` means "not finished yet" in streams. */
export function mapOpenAiFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    default:
      return 'stop';
  }
}

export const openAiUsageSchema = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  // Compatible servers send these as null, or not at all.
  prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
  completion_tokens_details: z.object({ reasoning_tokens: z.number().nullish() }).nullish(),
});

/**
 * The gateway's usage from OpenAI's: the same counts, with the cached and
 * reasoning details when the upstream reported them (both are already
 * included in `prompt_tokens` and `completion_tokens`).
 */
export function openAiUsage(usage: z.infer<typeof openAiUsageSchema>): Usage {
  const parsed = usageOf({
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    cachedRead: usage.prompt_tokens_details?.cached_tokens ?? undefined,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? undefined,
  });
  // The upstream's own total is kept, as before (it may count tokens of kinds the gateway does not model).
  parsed.total_tokens = usage.total_tokens;
  return parsed;
}

/** `{error: {message}}`; some compatible servers send a bare string. */
export const openAiErrorSchema = z.object({
  error: z.union([z.string(), z.object({ message: z.string() })]),
});

export function openAiErrorMessage(error: z.infer<typeof openAiErrorSchema>['error']): string {
  return typeof error === 'string' ? error : error.message;
}

/** A complete tool call of a non-streamed reply. */
export const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

export function toToolCall(call: z.infer<typeof toolCallSchema>): ToolCall {
  return { id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } };
}

/** A piece of a tool call in a stream: only `index` is always there. */
export const toolCallDeltaSchema = z.object({
  index: z.number().int().nonnegative(),
  id: z.string().nullish(),
  type: z.literal('function').nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});
