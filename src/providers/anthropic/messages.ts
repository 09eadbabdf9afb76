import type { CacheControl, DocumentPart, ThinkingBlock, ToolCall } from '../../chat/types.ts';
import {
  toolResultProblem,
  type AlternatingConversation,
  type ImageSource,
  type Turn,
  type TurnPart,
} from '../conversation-turns.ts';

/**
 * Conversation turns as Anthropic Messages API `messages`. Block shapes are the
 * API's `*BlockParam` types as generated into Anthropic's TypeScript SDK
 * (`src/resources/messages/messages.ts`): `text`; `image` with a `base64`
 * (`media_type`, `data`) or `url` source; `tool_use` (`id`, `name`, `input`
 * object) in assistant turns; `tool_result` (`tool_use_id`, optional `content`)
 * in user turns. The tool-use guide's rules, enforced by the API with a 400:
 * each `tool_use` needs its `tool_result` in the very next user message, each
 * `tool_result` must answer a `tool_use` of the message just before, and the
 * results come first in their message.
 */

/**
 * A text block may end a cacheable prefix (`cache_control`, the
 * `TextBlockParam` field of the prompt-caching guide).
 */
export type AnthropicBlock =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string } }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | {
      type: 'tool_result';
      tool_use_id: string;
      content?: string | AnthropicBlock[];
      is_error?: true;
      cache_control?: CacheControl;
    }
  | { type: 'document'; source: DocumentPart['source']; title?: string; context?: string; cache_control?: CacheControl }
  | ThinkingBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  /** A plain string for a turn that is one text, as the API allows; blocks otherwise. */
  content: string | AnthropicBlock[];
}

/** The image types the API takes inline (`Base64ImageSource.media_type`). */
const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** The parsed arguments of a call, or a message when they are not a JSON object (`tool_use.input` must be one). */
function callInput(call: ToolCall): Record<string, unknown> | string {
  const text = call.function.arguments;
  // OpenAI clients send '' for a call without arguments now and then.
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return `the arguments of tool call '${call.id.slice(0, 64)}' (function '${call.function.name}') are not a JSON object, which provider_c needs.`;
}

function imageBlock(source: ImageSource): AnthropicBlock {
  if (source.type === 'url') return { type: 'image', source: { type: 'url', url: source.url } };
  return { type: 'image', source: { type: 'base64', media_type: source.mediaType, data: source.data } };
}

/** A Messages client's unmodelled fields go onto the block they came with, after the ones the gateway writes. */
function toBlock(part: TurnPart): AnthropicBlock {
  const block = modelledBlock(part);
  const extra =
    part.kind === 'tool_call'
      ? part.call.anthropic
      : part.kind === 'document'
        ? part.document.anthropic
        : part.kind === 'anthropic_block' || part.kind === 'thinking'
          ? undefined
          : part.extra;
  return extra === undefined ? block : { ...block, ...extra };
}

function modelledBlock(part: TurnPart): AnthropicBlock {
  switch (part.kind) {
    case 'text':
      return part.cacheControl
        ? { type: 'text', text: part.text, cache_control: part.cacheControl }
        : { type: 'text', text: part.text };
    case 'image':
      return imageBlock(part.source);
    case 'tool_call': {
      const input = callInput(part.call);
      // validate() reports this first; reaching it here means it was skipped.
      if (typeof input === 'string') throw new Error(input);
      return { type: 'tool_use', id: part.call.id, name: part.call.function.name, input };
    }
    case 'tool_result': {
      // `content` is optional in the API and an empty text is not accepted, so an empty result has none.
      const block: AnthropicBlock =
        part.blocks !== undefined && part.blocks.length > 0
          ? { type: 'tool_result', tool_use_id: part.toolCallId, content: part.blocks.map(toBlock) }
          : part.content === ''
            ? { type: 'tool_result', tool_use_id: part.toolCallId }
            : { type: 'tool_result', tool_use_id: part.toolCallId, content: part.content };
      if (part.isError === true) block.is_error = true;
      if (part.cacheControl !== undefined) block.cache_control = part.cacheControl;
      return block;
    }
    case 'document': {
      const { source, title, context, cache_control: cacheControl } = part.document;
      const block: Extract<AnthropicBlock, { type: 'document' }> = { type: 'document', source };
      if (title !== undefined) block.title = title;
      if (context !== undefined) block.context = context;
      if (cacheControl !== undefined) block.cache_control = cacheControl;
      return block;
    }
    case 'thinking':
      // Sent back verbatim: the API checks the signature against the text.
      return part.block;
    case 'anthropic_block':
      // A block of a type the gateway does not model, or of an assistant turn sent verbatim: the client's, as sent.
      return { ...part.block } as AnthropicBlock;
  }
}

/**
 * One message per turn. Tool results move to the front of their user turn
 * (a client may put a user message between the calls and their results); the
 * rest keeps its order. A trailing assistant turn is a prefill, and the API
 * rejects a prefill that ends in whitespace, so its last text is trimmed.
 */
export function toAnthropicMessages(turns: readonly Turn[]): AnthropicMessage[] {
  const messages = turns.map((turn): AnthropicMessage => {
    const results = turn.parts.filter((part) => part.kind === 'tool_result');
    const rest = turn.parts.filter((part) => part.kind !== 'tool_result');
    const parts = [...results, ...rest];
    const only = parts[0];
    // A string has nowhere to carry a breakpoint.
    if (parts.length === 1 && only?.kind === 'text' && only.cacheControl === undefined && only.extra === undefined)
      return { role: turn.role, content: only.text };
    return { role: turn.role, content: parts.map(toBlock) };
  });
  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    if (typeof last.content === 'string') last.content = last.content.trimEnd();
    else {
      const block = last.content.at(-1);
      if (block?.type === 'text') block.text = block.text.trimEnd();
    }
  }
  return messages;
}

/** Explicit breakpoints the API accepts in one request (the prompt-caching guide's limit). */
const MAX_CACHE_BREAKPOINTS = 4;

/**
 * The `system` field: the joined string as before, or text blocks when the
 * client marked a breakpoint in the system instruction.
 */
export function toAnthropicSystem(conversation: AlternatingConversation): string | AnthropicBlock[] | undefined {
  if (!conversation.systemBlocks.some((block) => block.cacheControl || block.extra)) return conversation.system;
  return conversation.systemBlocks.map((block): AnthropicBlock => {
    const text: AnthropicBlock = block.cacheControl
      ? { type: 'text', text: block.text, cache_control: block.cacheControl }
      : { type: 'text', text: block.text };
    return block.extra === undefined ? text : { ...text, ...block.extra };
  });
}

/** A part and, for a tool result made of blocks, the blocks inside it. */
function withInner(parts: readonly TurnPart[]): TurnPart[] {
  return parts.flatMap((part) => (part.kind === 'tool_result' && part.blocks ? [part, ...part.blocks] : [part]));
}

/** A `validate()` message when the request marks more breakpoints than the API takes. */
export function breakpointProblem(conversation: AlternatingConversation, toolMarks = 0): string | undefined {
  let count = toolMarks + conversation.systemBlocks.filter((block) => block.cacheControl).length;
  for (const turn of conversation.turns) {
    for (const part of withInner(turn.parts))
      if (
        (part.kind === 'text' && part.cacheControl) ||
        (part.kind === 'document' && part.document.cache_control) ||
        (part.kind === 'tool_result' && part.cacheControl) ||
        (part.kind === 'image' && part.extra?.cache_control != null) ||
        (part.kind === 'tool_call' && part.call.anthropic?.cache_control != null) ||
        (part.kind === 'anthropic_block' && part.block.cache_control != null)
      )
        count++;
  }
  if (count <= MAX_CACHE_BREAKPOINTS) return undefined;
  return `${count} parts and tools carry 'cache_control'; provider_c takes at most ${MAX_CACHE_BREAKPOINTS} prompt-cache breakpoints in one request.`;
}

/**
 * A `validate()` message when the conversation breaks a rule the API enforces:
 * a result must answer a call of the assistant turn just before, every call
 * needs its result in the next turn, call arguments must be JSON objects, and
 * inline images must be of a type the API reads.
 */
export function conversationProblem(conversation: AlternatingConversation): string | undefined {
  const earlier = toolResultProblem(conversation);
  if (earlier !== undefined) return earlier;
  const { turns } = conversation;
  for (const [i, turn] of turns.entries()) {
    const previous = turns[i - 1];
    const next = turns[i + 1];
    for (const part of withInner(turn.parts)) {
      if (part.kind === 'tool_call') {
        const input = callInput(part.call);
        if (typeof input === 'string') return input;
        const answered = next?.parts.some((p) => p.kind === 'tool_result' && p.toolCallId === part.call.id) ?? false;
        if (!answered) {
          return (
            `tool call '${part.call.id.slice(0, 64)}' (function '${part.call.function.name}') has no 'tool' message answering it ` +
            'before the next assistant message; provider_c needs the result of every call right after the assistant message that made it.'
          );
        }
      } else if (part.kind === 'tool_result') {
        const calledJustBefore =
          previous?.parts.some((p) => p.kind === 'tool_call' && p.call.id === part.toolCallId) ?? false;
        if (!calledJustBefore) {
          return (
            `the 'tool' message answering tool_call_id '${part.toolCallId.slice(0, 64)}' must come after the assistant message that made the call ` +
            'and before any later assistant message, for provider_c.'
          );
        }
      } else if (
        part.kind === 'image' &&
        part.source.type === 'base64' &&
        !IMAGE_MEDIA_TYPES.has(part.source.mediaType)
      ) {
        return `image type '${part.source.mediaType}' is not supported by provider_c; send image/jpeg, image/png, image/gif or image/webp.`;
      }
    }
  }
  return undefined;
}
