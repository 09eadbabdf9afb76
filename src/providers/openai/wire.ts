import { z } from 'zod';
import type { FinishReason } from '../../chat/types.ts';

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
});

/** `{error: {message}}`; some compatible servers send a bare string. */
export const openAiErrorSchema = z.object({
  error: z.union([z.string(), z.object({ message: z.string() })]),
});

export function openAiErrorMessage(error: z.infer<typeof openAiErrorSchema>['error']): string {
  return typeof error === 'string' ? error : error.message;
}
