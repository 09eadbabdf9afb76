import type { AnthropicFields, AnthropicToolFields, ChatMessage, ChatRequest, ContentPart, TextPart } from './types.ts';

/**
 * Every piece of client-written text in a message list, in a fixed order:
 * message contents and text parts, participant `name`s, refusals, the
 * arguments of the assistant's tool calls (JSON text) and tool results, and
 * every string of what a Messages request carries unmodelled inside its
 * blocks (fields and whole blocks of unmodelled types) for an Anthropic upstream.
 * Image parts are not text and are left as they are; tool-call ids and
 * function names are identifiers the provider needs verbatim. DLP scans and
 * redacts through this, so a new kind of text in the model has one place to
 * be added.
 */
function mapMessageTexts(messages: readonly ChatMessage[], fn: (text: string) => string): ChatMessage[] {
  return messages.map((message): ChatMessage => {
    switch (message.role) {
      case 'system':
      case 'developer':
        return withFields(
          withName(
            {
              ...message,
              content:
                typeof message.content === 'string'
                  ? fn(message.content)
                  : message.content.map((part) => mapTextPart(part, fn)),
            },
            fn,
          ),
          fn,
        );
      case 'tool':
        return withFields({ ...message, content: mapContent(message.content, fn) }, fn);
      case 'user':
        return withName({ ...message, content: mapContent(message.content, fn) }, fn);
      case 'assistant': {
        const out = withName({ ...message, content: message.content === null ? null : fn(message.content) }, fn);
        if (message.refusal !== undefined) out.refusal = fn(message.refusal);
        if (message.tool_calls) {
          out.tool_calls = message.tool_calls.map((call) =>
            withFields({ ...call, function: { ...call.function, arguments: fn(call.function.arguments) } }, fn),
          );
        }
        if (message.anthropic_blocks)
          out.anthropic_blocks = message.anthropic_blocks.map((block) => mapBlock(block, fn));
        return out;
      }
    }
  });
}

/**
 * {@link mapMessageTexts} over a whole request, then the other client text
 * that reaches a provider or a cache key: `stop` sequences, the `user` id
 * (often an e-mail address), OpenAI's `prompt_cache_key` (often a user or
 * session id), `metadata` values, tool descriptions, and every string in the
 * top-level fields a Messages request passes unmodelled to an Anthropic
 * upstream, server tools' included (the gateway cannot tell which of them the
 * model reads, so none is a way around DLP).
 */
export function mapRequestTexts(request: ChatRequest, fn: (text: string) => string): ChatRequest {
  const out: ChatRequest = { ...request, messages: mapMessageTexts(request.messages, fn) };
  if (request.stop) out.stop = request.stop.map(fn);
  if (request.user !== undefined) out.user = fn(request.user);
  if (request.prompt_cache_key !== undefined) out.prompt_cache_key = fn(request.prompt_cache_key);
  if (request.metadata) out.metadata = Object.fromEntries(Object.entries(request.metadata).map(([k, v]) => [k, fn(v)]));
  if (request.tools) {
    out.tools = request.tools.map((tool) => {
      const mapped =
        tool.function.description === undefined
          ? { ...tool }
          : { ...tool, function: { ...tool.function, description: fn(tool.function.description) } };
      if (tool.anthropic !== undefined) mapped.anthropic = mapJsonStrings(tool.anthropic, fn) as AnthropicToolFields;
      return mapped;
    });
  }
  if (request.extra_body) out.extra_body = mapJsonStrings(request.extra_body, fn) as Record<string, unknown>;
  if (request.anthropic_server_tools)
    out.anthropic_server_tools = request.anthropic_server_tools.map(({ at, tool }) => ({
      at,
      tool: mapJsonStrings(tool, fn) as AnthropicFields,
    }));
  return out;
}

/** Every string value of a JSON value (object keys stay as they are). */
function mapJsonStrings(value: unknown, fn: (text: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((item) => mapJsonStrings(item, fn));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapJsonStrings(item, fn)]));
}

/** A changed `name` keeps only identifier characters: providers reject others there (`<EMAIL_ADDRESS_1>` becomes `EMAIL_ADDRESS_1`). */
function withName<T extends { name?: string }>(message: T, fn: (text: string) => string): T {
  if (message.name === undefined) return message;
  const name = fn(message.name);
  return { ...message, name: name === message.name ? name : name.replace(/[^A-Za-z0-9_-]/g, '') };
}

/** A message's content: its one text, or each of its parts. */
function mapContent(content: string | ContentPart[], fn: (text: string) => string): string | ContentPart[] {
  return typeof content === 'string' ? fn(content) : content.map((part) => mapPart(part, fn));
}

function mapPart(part: ContentPart, fn: (text: string) => string): ContentPart {
  if (part.type === 'text') return mapTextPart(part, fn);
  if (part.type === 'anthropic_block') return { type: 'anthropic_block', block: mapBlock(part.block, fn) };
  // A text document is the client's text too; PDFs and images are not scanned.
  if (part.type === 'document' && part.source.type === 'text')
    return withFields({ ...part, source: { ...part.source, data: fn(part.source.data) } }, fn);
  if (part.type === 'document' || part.type === 'image_url') return withFields({ ...part }, fn);
  return part;
}

/** Keeps the part's prompt-cache breakpoint: it marks a position, not text. */
function mapTextPart(part: TextPart, fn: (text: string) => string): TextPart {
  return withFields(
    part.cache_control
      ? { type: 'text', text: fn(part.text), cache_control: part.cache_control, anthropic: part.anthropic }
      : { type: 'text', text: fn(part.text), anthropic: part.anthropic },
    fn,
  );
}

/** A Messages block's unmodelled fields, every string mapped. */
function withFields<T extends { anthropic?: AnthropicFields }>(target: T, fn: (text: string) => string): T {
  if (target.anthropic === undefined) {
    delete target.anthropic;
    return target;
  }
  return { ...target, anthropic: mapJsonStrings(target.anthropic, fn) as AnthropicFields };
}

/** Fields of a reasoning block that are signed, so no more scanned here than on a modelled block. */
const SIGNED_FIELDS = new Set(['type', 'thinking', 'signature', 'data']);

/** A verbatim Messages block: every string but a reasoning block's signed ones. */
function mapBlock(block: AnthropicFields, fn: (text: string) => string): AnthropicFields {
  if (block.type !== 'thinking' && block.type !== 'redacted_thinking')
    return mapJsonStrings(block, fn) as AnthropicFields;
  return Object.fromEntries(
    Object.entries(block).map(([key, value]) => [key, SIGNED_FIELDS.has(key) ? value : mapJsonStrings(value, fn)]),
  );
}

/** The texts {@link mapRequestTexts} visits, in its order. */
export function requestTexts(request: ChatRequest): string[] {
  const texts: string[] = [];
  mapRequestTexts(request, (text) => {
    texts.push(text);
    return text;
  });
  return texts;
}
