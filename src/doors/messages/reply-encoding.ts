import type {
  ChatCompletion,
  FinishReason,
  GatewayCacheMark,
  PromptTokensDetails,
  ReplyMessage,
  ThinkingBlock,
  Usage,
} from '../../chat/types.ts';

/**
 * The pipeline's OpenAI-shaped reply as Anthropic's `Message`: content blocks
 * in the order Anthropic returns them (thinking, text, tool calls), the stop
 * reason, and usage. Shapes follow the `Message`, `Usage` and `StopReason`
 * types of the official TypeScript SDK.
 */

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export function stopReasonOf(finish: FinishReason | null | undefined, stopSequence?: string): StopReason {
  if (stopSequence !== undefined) return 'stop_sequence';
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      // OpenAI and Gemini say `stop` both for the end of a turn and for a stop sequence; only Anthropic names the sequence.
      return 'end_turn';
  }
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The cache writes by retention, when the upstream wrote any. */
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /** Present when the gateway's own cache served the reply (nothing was charged for it). */
  gateway_cache?: GatewayCacheMark;
}

/**
 * Anthropic's `input_tokens` leaves out cached tokens, OpenAI's
 * `prompt_tokens` counts them: the tokens an upstream reports as read from
 * its prompt cache (`prompt_tokens_details.cached_tokens`) or written to it
 * (`cache_write_tokens`, of which `cache_write_1h_tokens` for an hour) are
 * moved to `cache_read_input_tokens` and `cache_creation_input_tokens`.
 */
export function usageOf(
  usage:
    | (Usage & { prompt_tokens_details?: Partial<PromptTokensDetails> | null; gateway_cache?: GatewayCacheMark })
    | null
    | undefined,
): AnthropicUsage {
  const details = usage?.prompt_tokens_details;
  const cached = details?.cached_tokens ?? 0;
  const written = details?.cache_write_tokens ?? 0;
  const prompt = usage?.prompt_tokens ?? 0;
  const out: AnthropicUsage = {
    input_tokens: Math.max(0, prompt - cached - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
  if (written > 0) {
    const hour = details?.cache_write_1h_tokens ?? 0;
    out.cache_creation = { ephemeral_5m_input_tokens: written - hour, ephemeral_1h_input_tokens: hour };
  }
  if (usage?.gateway_cache) out.gateway_cache = usage.gateway_cache;
  return out;
}

/** `msg_` and the completion's own id, so a reply can be traced across doors. */
export function messageIdOf(completionId: string): string {
  const tail = completionId.replace(/^chatcmpl-/, '').replace(/[^A-Za-z0-9_-]/g, '');
  return `msg_${tail === '' ? 'gateway' : tail}`;
}

/** A tool call's JSON text as the object `tool_use.input` must be; anything else is kept under `_raw` so nothing is lost. */
function toolInputOf(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(args);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return { _raw: args };
}

export type ReplyBlock =
  | ThinkingBlock
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/**
 * An Anthropic-format upstream's own blocks (server-tool blocks, citations),
 * when its texts and tool calls are still what the reply says: a reply whose
 * text was changed on the way (DLP redaction or restoring, JSON mode's tool
 * input as text) is rebuilt from the changed fields instead.
 */
function upstreamBlocksOf(message: ReplyMessage): Array<Record<string, unknown>> | undefined {
  const raw = message.anthropic_content;
  if (raw === undefined) return undefined;
  let text = '';
  const inputs: string[] = [];
  for (const block of raw) {
    if (block.type === 'text') text += typeof block.text === 'string' ? block.text : '';
    else if (block.type === 'tool_use') inputs.push(JSON.stringify(block.input ?? {}));
  }
  const calls = message.tool_calls ?? [];
  const same =
    text === (message.content ?? '') + (message.refusal ?? '') &&
    calls.length === inputs.length &&
    calls.every((call, i) => call.function.arguments === inputs[i]);
  return same ? raw : undefined;
}

/** The `Message` object of a `chat.completion` (its first choice: the door always asks for one). */
export function messageOf(completion: ChatCompletion, requestedModel: string | undefined): Record<string, unknown> {
  const choice = completion.choices[0];
  const message = choice?.message;
  const content = (message === undefined ? undefined : upstreamBlocksOf(message)) ?? blocksOf(message);
  return {
    id: messageIdOf(completion.id),
    type: 'message',
    role: 'assistant',
    model: requestedModel ?? completion.model,
    content,
    stop_reason: stopReasonOf(choice?.finish_reason, choice?.stop_sequence),
    stop_sequence: choice?.stop_sequence ?? null,
    usage: usageOf(completion.usage),
  };
}

/** The reply's blocks from its canonical fields: thinking, text, tool calls. */
function blocksOf(message: ReplyMessage | undefined): ReplyBlock[] {
  const content: ReplyBlock[] = [];
  for (const block of message?.thinking ?? []) content.push(block);
  const text = (message?.content ?? '') + (message?.refusal ?? '');
  if (text !== '') content.push({ type: 'text', text });
  for (const call of message?.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInputOf(call.function.arguments),
    });
  }
  return content;
}
