import { z } from 'zod';
import type { ThinkingDelta } from '../../chat/types.ts';
import { UpstreamProtocolError, type SseEvent, type StreamDecoder, type StreamEvent } from '../types.ts';
import { JSON_MODE_TOOL } from './structured-output.ts';
import {
  anthropicErrorSchema,
  anthropicUsageSchema,
  cacheCountsOf,
  contentBlockSchema,
  type AnthropicCacheCounts,
  inputJson,
  mapAnthropicStopReason,
  promptTokensOf,
  toolUseOf,
  toUsage,
} from './wire.ts';
import { isOptionalString, parseEventJson } from '../stream-event-json.ts';

const messageStartSchema = z.object({ message: z.object({ usage: anthropicUsageSchema }) });
const blockIndexSchema = z.number().int().nonnegative();
const blockStartSchema = z.object({ index: blockIndexSchema.optional(), content_block: contentBlockSchema });
const blockDeltaSchema = z.object({
  index: blockIndexSchema.optional(),
  delta: z.object({
    type: z.string(),
    text: z.string().nullish(),
    partial_json: z.string().nullish(),
    thinking: z.string().nullish(),
    signature: z.string().nullish(),
  }),
});
const messageDeltaSchema = z.object({
  delta: z.object({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }),
  usage: anthropicUsageSchema.nullish(),
});

/** The type an event names in its data (`{"type": ...}`), if it names one. */
function typeOf(json: unknown): string | undefined {
  const type = typeof json === 'object' && json !== null ? (json as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

/**
 * The text of a `text_delta` event, checked by hand: what the schema would
 * accept as it is. Most events of a stream are these; undefined sends the
 * event through the schema.
 */
function plainTextDelta(json: unknown): string | undefined {
  const { index, delta } = json as { index?: unknown; delta?: unknown };
  if (index !== undefined && !(Number.isInteger(index) && (index as number) >= 0)) return undefined;
  if (typeof delta !== 'object' || delta === null || Array.isArray(delta)) return undefined;
  const { type, text, partial_json: partial, thinking, signature } = delta as Record<string, unknown>;
  if (type !== 'text_delta' || typeof text !== 'string') return undefined;
  return isOptionalString(partial) && isOptionalString(thinking) && isOptionalString(signature) ? text : undefined;
}

function parseAs<T>(schema: z.ZodType<T>, json: unknown, type: string): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamProtocolError(
      `Unexpected '${type}' event in the Anthropic upstream stream: ${parsed.error.message}`,
    );
  }
  return parsed.data;
}

/** What a content block of the message is to the client: one of its tool calls, or the JSON-mode answer. */
type BlockRole =
  | { kind: 'tool_call'; index: number }
  | { kind: 'json_answer' }
  | { kind: 'thinking'; index: number }
  | { kind: 'text' }
  | { kind: 'carried' };

/**
 * Decodes an Anthropic Messages stream of named events: `message_start`
 * (input tokens), `content_block_*` (text deltas, tool calls), `message_delta`
 * (stop reason and cumulative output tokens), `message_stop` (clean end),
 * `ping`, `error`. One message is one choice, index 0.
 *
 * A `tool_use` block opens a tool call numbered by its place among the
 * message's tool calls (0, 1, ...), and each `input_json_delta` of that block
 * (matched by the event's content block `index`, since blocks may interleave)
 * adds argument text, in OpenAI's streaming shape. The JSON-mode tool's input
 * is the answer itself: its fragments are content (see structured-output.ts).
 * Unknown event types are skipped, and so are blocks of other types
 * (server tools and their results) and other deltas (citations, server-tool
 * input) unless the decoder carries them (`carry`, for the Messages door):
 * then they come as `anthropic_block` pieces, unchanged.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  #finished = false;
  /** Events pushed so far: a protocol error names the event by number, never by its bytes. */
  #events = 0;
  #promptTokens = 0;
  #completionTokens = 0;
  /** Cache counts as last reported (`message_start`, and again in `message_delta` by newer API versions). */
  #cache: AnthropicCacheCounts = {};
  /** By content block index. */
  readonly #blocks = new Map<number, BlockRole>();
  #toolCalls = 0;
  #thinkingBlocks = 0;
  readonly #carry: boolean;

  constructor(carry = false) {
    this.#carry = carry;
  }

  get finished(): boolean {
    return this.#finished;
  }

  push(event: SseEvent): StreamEvent[] {
    this.#events++;
    const json = parseEventJson(event.data, this.#events, 'Anthropic');
    // The data repeats the event name in `type`; it is the one relied on, so
    // a proxy that drops `event:` lines does not break decoding.
    const type = typeOf(json) ?? event.event;
    switch (type) {
      case 'message_start': {
        const { usage } = parseAs(messageStartSchema, json, type).message;
        return this.#updateUsage(usage);
      }
      case 'content_block_start': {
        const { index, content_block: block } = parseAs(blockStartSchema, json, type);
        if (block.type === 'text') {
          if (index !== undefined) this.#blocks.set(index, { kind: 'text' });
          return block.text ? [{ kind: 'delta', choice: 0, content: block.text }] : [];
        }
        if (block.type === 'tool_use') return this.#startToolUse(index, block);
        if (block.type === 'thinking' || block.type === 'redacted_thinking') return this.#startThinking(index, block);
        if (!this.#carry || index === undefined) return [];
        this.#blocks.set(index, { kind: 'carried' });
        // The parsed block keeps only the modelled fields; the client gets the block as the upstream sent it.
        const start = (json as { content_block: Record<string, unknown> }).content_block;
        return [{ kind: 'delta', choice: 0, anthropic_block: { start } }];
      }
      case 'content_block_delta': {
        const text = plainTextDelta(json);
        if (text !== undefined) return text ? [{ kind: 'delta', choice: 0, content: text }] : [];
        const { index, delta } = parseAs(blockDeltaSchema, json, type);
        if (delta.type === 'text_delta') return delta.text ? [{ kind: 'delta', choice: 0, content: delta.text }] : [];
        if (delta.type === 'input_json_delta') return this.#inputDelta(index, delta.partial_json ?? '');
        if (delta.type === 'thinking_delta' && delta.thinking)
          return this.#thinkingDelta(index, { thinking: delta.thinking });
        if (delta.type === 'signature_delta' && delta.signature)
          return this.#thinkingDelta(index, { signature: delta.signature });
        return this.#carriedDelta(index, (json as { delta: Record<string, unknown> }).delta);
      }
      case 'message_delta': {
        const data = parseAs(messageDeltaSchema, json, type);
        const out: StreamEvent[] = [];
        if (data.delta.stop_reason != null) {
          let finish = mapAnthropicStopReason(data.delta.stop_reason);
          // Only the JSON-mode tool was called: for the client that is a finished answer.
          if (finish === 'tool_calls' && this.#toolCalls === 0) finish = 'stop';
          const stop = data.delta.stop_reason === 'stop_sequence' ? data.delta.stop_sequence : undefined;
          out.push(
            stop != null
              ? { kind: 'delta', choice: 0, finish_reason: finish, stop_sequence: stop }
              : { kind: 'delta', choice: 0, finish_reason: finish },
          );
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

  #startToolUse(index: number | undefined, block: z.infer<typeof contentBlockSchema>): StreamEvent[] {
    if (index === undefined)
      throw new UpstreamProtocolError("A tool_use 'content_block_start' event of the Anthropic upstream has no index.");
    const call = toolUseOf(block);
    // The start event carries `input: {}` and the input follows as fragments; a non-empty one is kept all the same.
    const hasInput = typeof call.input === 'object' && call.input !== null && Object.keys(call.input).length > 0;
    if (call.name === JSON_MODE_TOOL) {
      this.#blocks.set(index, { kind: 'json_answer' });
      return hasInput ? [{ kind: 'delta', choice: 0, content: inputJson(call.input) }] : [];
    }
    const toolIndex = this.#toolCalls++;
    this.#blocks.set(index, { kind: 'tool_call', index: toolIndex });
    return [
      {
        kind: 'delta',
        choice: 0,
        tool_calls: [
          {
            index: toolIndex,
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: hasInput ? inputJson(call.input) : '' },
          },
        ],
      },
    ];
  }

  /** Reasoning blocks are numbered among the message's reasoning blocks, as tool calls are among its calls. */
  #startThinking(index: number | undefined, block: z.infer<typeof contentBlockSchema>): StreamEvent[] {
    if (index === undefined) return [];
    const ordinal = this.#thinkingBlocks++;
    this.#blocks.set(index, { kind: 'thinking', index: ordinal });
    if (block.type === 'redacted_thinking')
      return [
        { kind: 'delta', choice: 0, thinking: { index: ordinal, type: 'redacted_thinking', data: block.data ?? '' } },
      ];
    const start: ThinkingDelta = { index: ordinal, type: 'thinking' };
    if (block.thinking) start.thinking = block.thinking;
    if (block.signature) start.signature = block.signature;
    return [{ kind: 'delta', choice: 0, thinking: start }];
  }

  #thinkingDelta(index: number | undefined, piece: { thinking?: string; signature?: string }): StreamEvent[] {
    const role = index === undefined ? undefined : this.#blocks.get(index);
    if (role?.kind !== 'thinking') return [];
    return [{ kind: 'delta', choice: 0, thinking: { index: role.index, ...piece } }];
  }

  /** A delta of a text block or a carried block that the canonical chunk has no place for (`citations_delta`). */
  #carriedDelta(index: number | undefined, delta: Record<string, unknown>): StreamEvent[] {
    const role = index === undefined ? undefined : this.#blocks.get(index);
    if (!this.#carry) return [];
    if (role?.kind === 'text') return [{ kind: 'delta', choice: 0, anthropic_block: { delta, text: true } }];
    if (role?.kind === 'carried') return [{ kind: 'delta', choice: 0, anthropic_block: { delta } }];
    return [];
  }

  #inputDelta(index: number | undefined, fragment: string): StreamEvent[] {
    const role = index === undefined ? undefined : this.#blocks.get(index);
    // Server-tool blocks stream their input too; they are not the client's calls (the Messages door gets them carried).
    if (role?.kind === 'carried')
      return this.#carriedDelta(index, { type: 'input_json_delta', partial_json: fragment });
    if (role === undefined || role.kind === 'thinking' || role.kind === 'text' || fragment === '') return [];
    if (role.kind === 'json_answer') return [{ kind: 'delta', choice: 0, content: fragment }];
    return [{ kind: 'delta', choice: 0, tool_calls: [{ index: role.index, function: { arguments: fragment } }] }];
  }

  /** Counts in `message_delta` are cumulative, so they replace, not add. */
  #updateUsage(usage: z.infer<typeof anthropicUsageSchema>): StreamEvent[] {
    const prompt = promptTokensOf(usage);
    if (prompt !== undefined) this.#promptTokens = prompt;
    if (usage.output_tokens != null) this.#completionTokens = usage.output_tokens;
    const cache = cacheCountsOf(usage);
    for (const key of Object.keys(cache) as Array<keyof AnthropicCacheCounts>)
      if (cache[key] !== undefined) this.#cache[key] = cache[key];
    return [{ kind: 'usage', usage: toUsage(this.#promptTokens, this.#completionTokens, this.#cache) }];
  }
}
