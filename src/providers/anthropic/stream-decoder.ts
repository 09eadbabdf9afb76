import { z } from 'zod';
import { UpstreamProtocolError, type SseEvent, type StreamDecoder, type StreamEvent } from '../types.ts';
import {
  anthropicErrorSchema,
  anthropicUsageSchema,
  contentBlockSchema,
  mapAnthropicStopReason,
  promptTokensOf,
  toUsage,
} from './wire.ts';

const typedSchema = z.object({ type: z.string() });
const messageStartSchema = z.object({ message: z.object({ usage: anthropicUsageSchema }) });
const blockStartSchema = z.object({ content_block: contentBlockSchema });
const blockDeltaSchema = z.object({ delta: z.object({ type: z.string(), text: z.string().nullish() }) });
const messageDeltaSchema = z.object({
  delta: z.object({ stop_reason: z.string().nullish() }),
  usage: anthropicUsageSchema.nullish(),
});

function parseAs<T>(schema: z.ZodType<T>, json: unknown, type: string): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamProtocolError(`Unexpected '${type}' event in the Anthropic upstream stream: ${parsed.error.message}`);
  }
  return parsed.data;
}

/**
 * Decodes an Anthropic Messages stream of named events: `message_start`
 * (input tokens), `content_block_*` (text deltas), `message_delta` (stop reason
 * and cumulative output tokens), `message_stop` (clean end), `ping`, `error`.
 * One message is one choice, index 0. Unknown event types and non-text deltas
 * (thinking, tool input) are skipped.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  #finished = false;
  #promptTokens = 0;
  #completionTokens = 0;

  get finished(): boolean {
    return this.#finished;
  }

  push(event: SseEvent): StreamEvent[] {
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      throw new UpstreamProtocolError(`Malformed JSON in the Anthropic upstream stream: ${event.data.slice(0, 200)}`);
    }
    // The data repeats the event name in `type`; it is the one relied on, so
    // a proxy that drops `event:` lines does not break decoding.
    const typed = typedSchema.safeParse(json);
    const type = typed.success ? typed.data.type : event.event;
    switch (type) {
      case 'message_start': {
        const { usage } = parseAs(messageStartSchema, json, type).message;
        return this.#updateUsage(usage);
      }
      case 'content_block_start': {
        const block = parseAs(blockStartSchema, json, type).content_block;
        return block.type === 'text' && block.text ? [{ kind: 'delta', choice: 0, content: block.text }] : [];
      }
      case 'content_block_delta': {
        const { delta } = parseAs(blockDeltaSchema, json, type);
        return delta.type === 'text_delta' && delta.text ? [{ kind: 'delta', choice: 0, content: delta.text }] : [];
      }
      case 'message_delta': {
        const data = parseAs(messageDeltaSchema, json, type);
        const out: StreamEvent[] = [];
        if (data.delta.stop_reason != null) {
          out.push({ kind: 'delta', choice: 0, finish_reason: mapAnthropicStopReason(data.delta.stop_reason) });
        }
        if (data.usage) out.push(...this.#updateUsage(data.usage));
        return out;
      }
      case 'message_stop':
        this.#finished = true;
        return [];
      case 'error': {
        const { error } = parseAs(anthropicErrorSchema, json, type);
        return [{ kind: 'error', message: error.type ? `${error.type}: ${error.message}` : error.message }];
      }
      default:
        // ping, content_block_stop, and event types added after this was written.
        return [];
    }
  }

  /** Counts in `message_delta` are cumulative, so they replace, not add. */
  #updateUsage(usage: z.infer<typeof anthropicUsageSchema>): StreamEvent[] {
    const prompt = promptTokensOf(usage);
    if (prompt !== undefined) this.#promptTokens = prompt;
    if (usage.output_tokens != null) this.#completionTokens = usage.output_tokens;
    return [{ kind: 'usage', usage: toUsage(this.#promptTokens, this.#completionTokens) }];
  }
}
