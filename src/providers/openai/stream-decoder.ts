import { z } from 'zod';
import { UpstreamProtocolError, type SseEvent, type StreamDecoder, type StreamEvent } from '../types.ts';
import { mapOpenAiFinishReason, openAiErrorMessage, openAiErrorSchema, openAiUsageSchema } from './wire.ts';

const chunkSchema = z.object({
  choices: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      delta: z.object({ content: z.string().nullish() }).nullish(),
      finish_reason: z.string().nullish(),
    }),
  ),
  // With `include_usage`, every chunk carries `usage: null` but the last one.
  usage: openAiUsageSchema.nullish(),
});

/**
 * Decodes an OpenAI `chat.completion.chunk` stream: one delta per choice per
 * chunk, usage from the final chunk (whose `choices` is empty), and a clean end
 * on `data: [DONE]`.
 */
export class OpenAiStreamDecoder implements StreamDecoder {
  #finished = false;

  get finished(): boolean {
    return this.#finished;
  }

  push(event: SseEvent): StreamEvent[] {
    const data = event.data.trim();
    if (data === '[DONE]') {
      this.#finished = true;
      return [];
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new UpstreamProtocolError(`Malformed JSON in the OpenAI upstream stream: ${data.slice(0, 200)}`);
    }
    // The upstream reports failures after the 200 as an `{error}` data line.
    const error = openAiErrorSchema.safeParse(json);
    if (error.success) return [{ kind: 'error', message: openAiErrorMessage(error.data.error) }];

    const parsed = chunkSchema.safeParse(json);
    if (!parsed.success) {
      throw new UpstreamProtocolError(`Unexpected chunk in the OpenAI upstream stream: ${parsed.error.message}`);
    }
    const out: StreamEvent[] = [];
    for (const choice of parsed.data.choices) {
      const content = choice.delta?.content;
      const hasContent = typeof content === 'string' && content.length > 0;
      if (!hasContent && choice.finish_reason == null) continue;
      const delta: StreamEvent = { kind: 'delta', choice: choice.index };
      if (hasContent) delta.content = content;
      if (choice.finish_reason != null) delta.finish_reason = mapOpenAiFinishReason(choice.finish_reason);
      out.push(delta);
    }
    const usage = parsed.data.usage;
    if (usage) {
      out.push({
        kind: 'usage',
        usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
      });
    }
    return out;
  }
}
