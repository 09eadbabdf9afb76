import { z } from 'zod';
import type { ToolCallDelta } from '../../chat/types.ts';
import {
  UpstreamProtocolError,
  type SseEvent,
  type StreamDecoder,
  type StreamDelta,
  type StreamEvent,
} from '../types.ts';
import {
  mapOpenAiFinishReason,
  openAiErrorMessage,
  openAiErrorSchema,
  openAiUsage,
  openAiUsageSchema,
  toolCallDeltaSchema,
} from './wire.ts';
import { hasMember, isOptionalString, parseEventJson } from '../stream-event-json.ts';

const chunkSchema = z.object({
  choices: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      delta: z
        .object({
          content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z.array(toolCallDeltaSchema).nullish(),
          reasoning_content: z.string().nullish(),
        })
        .nullish(),
      finish_reason: z.string().nullish(),
      logprobs: z.unknown().optional(),
    }),
  ),
  // With `include_usage`, every chunk carries `usage: null` but the last one.
  usage: openAiUsageSchema.nullish(),
});

type Chunk = z.infer<typeof chunkSchema>;

function parseChunk(json: unknown): Chunk {
  const parsed = chunkSchema.safeParse(json);
  if (!parsed.success)
    throw new UpstreamProtocolError(`Unexpected chunk in the OpenAI upstream stream: ${parsed.error.message}`);
  return parsed.data;
}

/**
 * A chunk of text, refusal or reasoning without usage, checked by hand: what
 * the schema would accept as it is. Most chunks of a stream are these, and the
 * schema's parse of each was a tenth of a worker's CPU on a long reply.
 */
function isPlainTextChunk(json: unknown): json is Chunk {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return false;
  const { choices, usage } = json as { choices?: unknown; usage?: unknown };
  if (usage != null || !Array.isArray(choices)) return false;
  for (const choice of choices as unknown[]) {
    if (typeof choice !== 'object' || choice === null || Array.isArray(choice)) return false;
    const { index, delta, finish_reason: finish } = choice as Record<string, unknown>;
    if (!Number.isInteger(index) || (index as number) < 0 || !isOptionalString(finish)) return false;
    if (delta == null) continue;
    if (typeof delta !== 'object' || Array.isArray(delta)) return false;
    const { content, refusal, tool_calls: toolCalls, reasoning_content: reasoning } = delta as Record<string, unknown>;
    if (toolCalls != null || !isOptionalString(content) || !isOptionalString(refusal) || !isOptionalString(reasoning))
      return false;
  }
  return true;
}

function toToolCallDelta(piece: z.infer<typeof toolCallDeltaSchema>): ToolCallDelta {
  const out: ToolCallDelta = { index: piece.index };
  if (piece.id != null) out.id = piece.id;
  if (piece.type != null) out.type = piece.type;
  if (piece.function != null) {
    out.function = {};
    if (piece.function.name != null) out.function.name = piece.function.name;
    if (piece.function.arguments != null) out.function.arguments = piece.function.arguments;
  }
  return out;
}

/**
 * Decodes an OpenAI `chat.completion.chunk` stream: one delta per choice per
 * chunk (`reasoning_content`, which OpenAI-compatible reasoning servers send,
 * as an unsigned reasoning block), usage from the final chunk (whose `choices` is empty), and a clean end
 * on `data: [DONE]`.
 */
export class OpenAiStreamDecoder implements StreamDecoder {
  #finished = false;
  /** Events pushed so far: a protocol error names the event by number, never by its bytes. */
  #events = 0;

  get finished(): boolean {
    return this.#finished;
  }

  push(event: SseEvent): StreamEvent[] {
    this.#events++;
    const data = event.data.trim();
    if (data === '[DONE]') {
      this.#finished = true;
      return [];
    }
    const json = parseEventJson(data, this.#events, 'OpenAI');
    // The upstream reports failures after the 200 as an `{error}` data line.
    if (hasMember(json, 'error')) {
      const error = openAiErrorSchema.safeParse(json);
      if (error.success) return [{ kind: 'error', message: openAiErrorMessage(error.data.error) }];
    }
    const chunk = isPlainTextChunk(json) ? json : parseChunk(json);
    const out: StreamEvent[] = [];
    for (const choice of chunk.choices) {
      const delta: StreamDelta = { kind: 'delta', choice: choice.index };
      const content = choice.delta?.content;
      if (typeof content === 'string' && content.length > 0) delta.content = content;
      const refusal = choice.delta?.refusal;
      if (typeof refusal === 'string' && refusal.length > 0) delta.refusal = refusal;
      const toolCalls = choice.delta?.tool_calls;
      if (toolCalls != null && toolCalls.length > 0) delta.tool_calls = toolCalls.map(toToolCallDelta);
      const reasoning = choice.delta?.reasoning_content;
      // One unsigned reasoning block per choice (OpenAI-compatible reasoning servers), before the answer.
      if (typeof reasoning === 'string' && reasoning.length > 0)
        delta.thinking = { index: 0, type: 'thinking', thinking: reasoning };
      if (choice.logprobs != null) delta.logprobs = choice.logprobs;
      if (choice.finish_reason != null) delta.finish_reason = mapOpenAiFinishReason(choice.finish_reason);
      const empty =
        delta.content === undefined &&
        delta.refusal === undefined &&
        delta.tool_calls === undefined &&
        delta.thinking === undefined &&
        delta.finish_reason === undefined;
      if (!empty) out.push(delta);
    }
    const usage = chunk.usage;
    if (usage) {
      out.push({
        kind: 'usage',
        usage: openAiUsage(usage),
      });
    }
    return out;
  }
}
