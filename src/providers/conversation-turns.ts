import {
  toolResultText,
  type AnthropicFields,
  type CacheControl,
  type ChatMessage,
  type ContentPart,
  type DocumentPart,
  type TextPart,
  type ThinkingBlock,
  type ToolCall,
} from '../chat/types.ts';

/**
 * Reshapes an OpenAI-style message list for upstreams that take system
 * instructions out of band and insist on strictly alternating user/assistant
 * turns that start with a user turn (Gemini, Anthropic). Each turn is a list
 * of parts the adapters map one to one onto their own blocks: text, images,
 * the assistant's tool calls, and the results of those calls (which these
 * upstreams carry in a user turn).
 */

/** An image as the upstreams take it: inline bytes, or a URL the provider fetches. */
export type ImageSource = { type: 'base64'; mediaType: string; data: string } | { type: 'url'; url: string };

/**
 * `extra`: a Messages block's unmodelled fields, which only an Anthropic upstream
 * writes back (the other adapters ignore them).
 */
export type TurnPart =
  /** `cacheControl`: the client marked the end of this text as a prompt-cache breakpoint. */
  | { kind: 'text'; text: string; cacheControl?: CacheControl; extra?: AnthropicFields }
  | { kind: 'image'; source: ImageSource; extra?: AnthropicFields }
  /** A Messages block of an unmodelled type, verbatim; only with {@link TurnOptions.anthropicBlocks}. */
  | { kind: 'anthropic_block'; block: AnthropicFields }
  | { kind: 'document'; document: DocumentPart }
  /** A reasoning block of an earlier assistant turn (only an Anthropic upstream reads them). */
  | { kind: 'thinking'; block: ThinkingBlock }
  | { kind: 'tool_call'; call: ToolCall }
  /** `name` is the function's name, found from the call the result answers (Gemini needs it). */
  | {
      kind: 'tool_result';
      toolCallId: string;
      name: string | undefined;
      /** The result's text (its text parts joined). */
      content: string;
      /**
       * A result made of parts (texts, images, documents, blocks only Anthropic reads), in order:
       * an Anthropic upstream gets them as the result's blocks, Gemini the images and documents beside it.
       */
      blocks?: TurnPart[];
      isError?: true;
      cacheControl?: CacheControl;
      extra?: AnthropicFields;
    };

export interface TurnOptions {
  /**
   * Keep a Messages client's blocks of unmodelled types (and an assistant
   * message's verbatim blocks in place of its joined text): for the Anthropic
   * format, the only one that reads them.
   * @defaultValue false
   */
  anthropicBlocks?: boolean;
}

export interface Turn {
  role: 'user' | 'assistant';
  parts: TurnPart[];
}

/** A piece of the system instruction; `cacheControl` as on a text part. */
export interface SystemBlock {
  text: string;
  cacheControl?: CacheControl;
  /** A Messages system block's unmodelled fields, which only an Anthropic upstream writes back. */
  extra?: AnthropicFields;
}

export interface AlternatingConversation {
  /** System and developer messages, in order, joined; undefined when there are none. */
  system: string | undefined;
  /**
   * The same text as blocks, for upstreams that take breakpoints in the
   * system instruction: texts are joined as in {@link system} except after a
   * breakpoint, which ends its block. Empty when there is no system text.
   */
  systemBlocks: SystemBlock[];
  /** Never two consecutive turns of the same role; the first one is a user turn. */
  turns: Turn[];
}

/**
 * Text of the user turn put in front of a conversation that starts with an
 * assistant turn. Both upstreams reject a leading assistant turn and empty
 * text, so the smallest non-empty text it is.
 */
export const LEADING_USER_PLACEHOLDER = '.';

/** Separator between merged texts, so they stay paragraphs apart. */
const MERGE_SEPARATOR = '\n\n';

const DATA_URL = /^data:(image\/[a-z]+);base64,(.*)$/s;

/** Parses an image URL the request schema accepted (`data:image/...;base64,` or `https:`). */
function imageSourceOf(url: string): ImageSource {
  const match = DATA_URL.exec(url);
  if (match) return { type: 'base64', mediaType: match[1] as string, data: (match[2] as string).replace(/\s+/g, '') };
  return { type: 'url', url };
}

function textPart(part: TextPart): TurnPart {
  const out: TurnPart = part.cache_control
    ? { kind: 'text', text: part.text, cacheControl: part.cache_control }
    : { kind: 'text', text: part.text };
  if (part.anthropic !== undefined) out.extra = part.anthropic;
  return out;
}

/** An OpenAI `file` part (a PDF as a `data:` URL, as the request schemas accept it) as the canonical document. */
function documentOfFile(file: { file_data: string; filename?: string }): DocumentPart {
  const data = (/^data:[a-z]+\/[a-z0-9.+-]+;base64,(.*)$/s.exec(file.file_data)?.[1] ?? '').replace(/\s+/g, '');
  return {
    type: 'document',
    source: { type: 'base64', media_type: 'application/pdf', data },
    ...(file.filename !== undefined ? { title: file.filename } : {}),
  };
}

function partsOfContent(content: string | ContentPart[] | null, options: TurnOptions): TurnPart[] {
  if (content === null) return [];
  if (typeof content === 'string') return content.trim() === '' ? [] : [{ kind: 'text', text: content }];
  const parts: TurnPart[] = [];
  for (const part of content) {
    if (part.type === 'anthropic_block') {
      if (options.anthropicBlocks === true) parts.push({ kind: 'anthropic_block', block: part.block });
    } else if (part.type === 'image_url') {
      const image: TurnPart = { kind: 'image', source: imageSourceOf(part.image_url.url) };
      if (part.anthropic !== undefined) image.extra = part.anthropic;
      parts.push(image);
    } else if (part.type === 'document') parts.push({ kind: 'document', document: part });
    else if (part.type === 'file') parts.push({ kind: 'document', document: documentOfFile(part.file) });
    else if (part.text.trim() !== '') parts.push(textPart(part));
  }
  return parts;
}

/**
 * Appends parts to a turn; a text right after a text joins it, as merged
 * messages did before parts existed, unless either marks a prompt-cache
 * breakpoint: those stay the blocks the client wrote, so the breakpoint
 * reaches the upstream at the very position the client put it.
 */
function append(turn: Turn, parts: readonly TurnPart[]): void {
  for (const part of parts) {
    const last = turn.parts.at(-1);
    if (
      part.kind === 'text' &&
      last?.kind === 'text' &&
      last.cacheControl === undefined &&
      part.cacheControl === undefined &&
      last.extra === undefined &&
      part.extra === undefined
    )
      last.text += MERGE_SEPARATOR + part.text;
    else turn.parts.push(part.kind === 'text' ? { ...part } : part);
  }
}

/** Adds a system or developer message's texts to the blocks, joined as {@link append} joins turn texts. */
function appendSystem(blocks: SystemBlock[], content: string | TextPart[]): void {
  const texts = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  for (const part of texts) {
    if (part.text.trim() === '') continue;
    const last = blocks.at(-1);
    const plain = part.cache_control === undefined && part.anthropic === undefined;
    if (last !== undefined && last.cacheControl === undefined && last.extra === undefined && plain)
      last.text += MERGE_SEPARATOR + part.text;
    else {
      const block: SystemBlock = { text: part.text };
      if (part.cache_control) block.cacheControl = part.cache_control;
      if (part.anthropic !== undefined) block.extra = part.anthropic;
      blocks.push(block);
    }
  }
}

/**
 * System and developer messages anywhere in the list become the system
 * instruction (these upstreams have no mid-conversation system turn).
 * Whitespace-only texts are dropped, since both upstreams reject empty text
 * blocks; consecutive same-role messages are merged, and a tool message is a
 * part of the user turn that follows the calls.
 */
export function toAlternatingTurns(
  messages: readonly ChatMessage[],
  options: TurnOptions = {},
): AlternatingConversation {
  const systemBlocks: SystemBlock[] = [];
  const turns: Turn[] = [];
  const callNames = new Map<string, string>();
  for (const message of messages) {
    let role: Turn['role'];
    let parts: TurnPart[];
    switch (message.role) {
      case 'system':
      case 'developer':
        // A mark or unmodelled fields on the whole message (the Messages door's system blocks) are its one text's.
        appendSystem(
          systemBlocks,
          (message.cache_control || message.anthropic) && typeof message.content === 'string'
            ? [
                {
                  type: 'text',
                  text: message.content,
                  cache_control: message.cache_control,
                  anthropic: message.anthropic,
                },
              ]
            : message.content,
        );
        continue;
      case 'user':
        role = 'user';
        parts = partsOfContent(message.content, options);
        break;
      case 'assistant':
        role = 'assistant';
        // Reasoning comes before the text and calls it led to.
        // An unsigned block (an OpenAI-compatible server's reasoning) is one no upstream can check: left out.
        parts = (message.thinking ?? [])
          .filter((block) => block.type !== 'thinking' || block.signature !== '')
          .map((block): TurnPart => ({ kind: 'thinking', block }));
        // Verbatim blocks hold the message's texts too, in the order the client sent them.
        if (options.anthropicBlocks === true && message.anthropic_blocks !== undefined)
          parts.push(...message.anthropic_blocks.map((block): TurnPart => ({ kind: 'anthropic_block', block })));
        else parts.push(...partsOfContent(message.content, options));
        for (const call of message.tool_calls ?? []) {
          callNames.set(call.id, call.function.name);
          parts.push({ kind: 'tool_call', call });
        }
        break;
      case 'tool': {
        role = 'user';
        const result: Extract<TurnPart, { kind: 'tool_result' }> = {
          kind: 'tool_result',
          toolCallId: message.tool_call_id,
          name: callNames.get(message.tool_call_id),
          content: toolResultText(message.content),
        };
        if (typeof message.content !== 'string') result.blocks = partsOfContent(message.content, options);
        if (message.is_error === true) result.isError = true;
        if (message.cache_control !== undefined) result.cacheControl = message.cache_control;
        if (message.anthropic !== undefined) result.extra = message.anthropic;
        parts = [result];
        break;
      }
    }
    if (parts.length === 0) continue;
    const last = turns.at(-1);
    if (last !== undefined && last.role === role) append(last, parts);
    else {
      const turn: Turn = { role, parts: [] };
      append(turn, parts);
      turns.push(turn);
    }
  }
  if (turns[0]?.role === 'assistant')
    turns.unshift({ role: 'user', parts: [{ kind: 'text', text: LEADING_USER_PLACEHOLDER }] });
  const system = systemBlocks.length > 0 ? systemBlocks.map((block) => block.text).join(MERGE_SEPARATOR) : undefined;
  return { system, systemBlocks, turns };
}

/** The `validate()` message shared by the adapters that need at least one turn. */
export const NO_TURNS_MESSAGE =
  "'messages' must contain at least one user or assistant message with non-empty content for this model.";

/**
 * A problem with tool results for these upstreams: each result must answer a
 * call made earlier in the conversation (they match results to calls by id, or
 * by name for Gemini). Undefined when all is well.
 */
export function toolResultProblem(conversation: AlternatingConversation): string | undefined {
  for (const turn of conversation.turns) {
    for (const part of turn.parts) {
      if (part.kind === 'tool_result' && part.name === undefined) {
        return `a 'tool' message answers tool_call_id '${part.toolCallId.slice(0, 64)}', which no earlier assistant message called.`;
      }
    }
  }
  return undefined;
}
