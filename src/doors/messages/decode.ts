import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import { describeIssues } from '../../chat/request-schema.ts';
import type {
  AnthropicFields,
  AnthropicToolFields,
  AssistantMessage,
  ChatMessage,
  ChatRequest,
  ContentPart,
  DocumentPart,
  FunctionTool,
  SystemMessage,
  TextPart,
  ThinkingBlock,
  ThinkingConfig,
  ToolCall,
  ToolChoice,
  ToolMessage,
} from '../../chat/types.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import {
  MESSAGES_FIELDS,
  MODELLED_BLOCK_FIELDS,
  MODELLED_TOOL_FIELDS,
  isServerTool,
  messagesRequestSchema,
  type AssistantBlock,
  type MessagesRequestBody,
  type ToolResultContentBlock,
  type UserBlock,
} from './request-schema.ts';

/**
 * Anthropic Messages request -> the canonical {@link ChatRequest}. Blocks map
 * one to one where the canonical model has them (text, images, documents,
 * tool calls and results, thinking blocks with their signatures); a user
 * message's `tool_result` blocks become `tool` messages ahead of the rest of
 * it, as the OpenAI shape orders them.
 */

type Block = UserBlock | AssistantBlock | ToolResultContentBlock;
type ModelledUserBlock = Extract<UserBlock, { type: 'text' | 'image' | 'document' | 'tool_result' }>;
type ModelledAssistantBlock = Extract<AssistantBlock, { type: 'text' | 'tool_use' | 'thinking' | 'redacted_thinking' }>;
type MediaBlock = Extract<UserBlock, { type: 'text' | 'image' | 'document' }>;

/** A block of a type the gateway does not model: carried whole. */
function isOpaque(block: Block): boolean {
  return !Object.hasOwn(MODELLED_BLOCK_FIELDS, block.type);
}

/** An image or document in Anthropic's Files API, which only an Anthropic-format upstream can read: carried whole. */
function isFileSourced(block: Block): boolean {
  return (
    (block.type === 'image' || block.type === 'document') && (block as MediaBlock as ImageBlock).source.type === 'file'
  );
}

/** A modelled block's fields the gateway does not model, as sent; undefined when there are none. */
function unmodelledFields(block: Block): AnthropicFields | undefined {
  const known = MODELLED_BLOCK_FIELDS[block.type];
  const extra = Object.entries(block).filter(([key]) => !known?.has(key));
  // fromEntries defines each field as its own property, `__proto__` included.
  return extra.length > 0 ? Object.fromEntries(extra) : undefined;
}

/**
 * The block's unmodelled fields onto its canonical counterpart; with them, the
 * cache mark of a block whose canonical counterpart has no field for one (an
 * image, a tool call): Anthropic-format upstreams get it, the others never
 * read cache marks (as on text blocks, it is not named).
 */
function withUnmodelled<T extends { anthropic?: AnthropicFields }>(
  target: T,
  block: Block,
  cacheControl?: CacheControlIn,
): T {
  const extra = unmodelledFields(block);
  const mark = withCacheControl({}, cacheControl);
  if (extra !== undefined || mark.cache_control !== undefined) target.anthropic = { ...extra, ...mark };
  return target;
}

/** The whole block as sent: own properties only, so a `__proto__` key stays a field. */
function opaque(block: Block): AnthropicFields {
  return Object.fromEntries(Object.entries(block));
}

type CacheControlIn = { type: 'ephemeral'; ttl?: '5m' | '1h' | undefined } | null | undefined;

function withCacheControl<T extends object>(
  target: T,
  cacheControl: CacheControlIn,
): T & { cache_control?: { type: 'ephemeral'; ttl?: '5m' | '1h' } } {
  if (cacheControl == null) return target;
  return {
    ...target,
    cache_control:
      cacheControl.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: cacheControl.ttl },
  };
}

function systemMessages(system: MessagesRequestBody['system']): SystemMessage[] {
  if (system == null) return [];
  if (typeof system === 'string') return system === '' ? [] : [{ role: 'system', content: system }];
  // One instruction per block, so a block's cache_control and unmodelled fields keep their place.
  return system.map((block) =>
    withCacheControl(
      withUnmodelled<SystemMessage>({ role: 'system', content: block.text }, block),
      block.cache_control,
    ),
  );
}

type DocumentBlock = Extract<UserBlock, { type: 'document' }>;
type ImageBlock = Extract<UserBlock, { type: 'image' }>;

function documentPart(block: DocumentBlock, source: Exclude<DocumentBlock['source'], { type: 'file' }>): DocumentPart {
  const part: DocumentPart = {
    type: 'document',
    source:
      source.type === 'url'
        ? { type: 'url', url: source.url }
        : source.type === 'text'
          ? { type: 'text', media_type: 'text/plain', data: source.data }
          : { type: 'base64', media_type: 'application/pdf', data: source.data.replace(/\s+/g, '') },
  };
  if (block.title != null) part.title = block.title;
  if (block.context != null) part.context = block.context;
  return withCacheControl(withUnmodelled(part, block), block.cache_control);
}

function imagePart(block: ImageBlock, source: Exclude<ImageBlock['source'], { type: 'file' }>): ContentPart {
  const url =
    source.type === 'url' ? source.url : `data:${source.media_type};base64,${source.data.replace(/\s+/g, '')}`;
  return withUnmodelled<ContentPart & { type: 'image_url' }>(
    { type: 'image_url', image_url: { url } },
    block,
    block.cache_control,
  );
}

/** A text, image or document block as its canonical part; one in the Files API, whole, for Anthropic alone. */
function contentPart(block: MediaBlock): ContentPart {
  if (block.type === 'text')
    return withCacheControl(withUnmodelled<TextPart>({ type: 'text', text: block.text }, block), block.cache_control);
  const source = block.source;
  if (source.type === 'file') return { type: 'anthropic_block', block: opaque(block) };
  return block.type === 'image'
    ? imagePart(block, source as Exclude<ImageBlock['source'], { type: 'file' }>)
    : documentPart(block, source as Exclude<DocumentBlock['source'], { type: 'file' }>);
}

/** A text-only list without cache marks is one string, the form the caches and the chat door share. */
function userContent(parts: ContentPart[]): string | ContentPart[] {
  if (parts.every((part) => part.type === 'text' && part.cache_control === undefined && part.anthropic === undefined))
    return parts.map((part) => (part as TextPart).text).join('\n');
  return parts;
}

/** A result's content: its text, or its blocks as parts when they are more than unmarked texts. */
function toolResultContent(content: string | ToolResultContentBlock[] | undefined): string | ContentPart[] {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return userContent(
    content.map((block) =>
      isOpaque(block) ? { type: 'anthropic_block', block: opaque(block) } : contentPart(block as MediaBlock),
    ),
  );
}

function toolMessage(block: Extract<UserBlock, { type: 'tool_result' }>): ToolMessage {
  const out: ToolMessage = { role: 'tool', content: toolResultContent(block.content), tool_call_id: block.tool_use_id };
  if (block.is_error === true) out.is_error = true;
  return withCacheControl(withUnmodelled(out, block), block.cache_control);
}

function userMessages(content: string | UserBlock[]): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  for (const block of content) {
    if (isOpaque(block)) parts.push({ type: 'anthropic_block', block: opaque(block) });
    else {
      const known = block as ModelledUserBlock;
      if (known.type === 'tool_result') out.push(toolMessage(known));
      else parts.push(contentPart(known as MediaBlock));
    }
  }
  if (parts.length > 0) out.push({ role: 'user', content: userContent(parts) });
  return out;
}

function assistantMessage(content: string | AssistantBlock[], index: number): AssistantMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  const texts: string[] = [];
  const calls: ToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  // With a block of an unmodelled type or a text or reasoning block with unmodelled fields, those and the texts go
  // to Anthropic-format upstreams verbatim and in order, after the reasoning and before the tool calls.
  const verbatim = content.some(
    (block) => isOpaque(block) || (block.type !== 'tool_use' && unmodelledFields(block) !== undefined),
  );
  const blocks: AnthropicFields[] = [];
  for (const raw of content) {
    if (isOpaque(raw)) {
      blocks.push(opaque(raw));
      continue;
    }
    const block = raw as ModelledAssistantBlock;
    if (verbatim && block.type !== 'tool_use') {
      if (block.type === 'text') texts.push(block.text);
      blocks.push(opaque(block));
    } else if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'tool_use')
      calls.push(
        withUnmodelled<ToolCall>(
          { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } },
          block,
          block.cache_control,
        ),
      );
    else if (block.type === 'thinking')
      thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
    else thinking.push({ type: 'redacted_thinking', data: block.data });
  }
  if (texts.length === 0 && calls.length === 0 && thinking.length === 0 && blocks.length === 0) {
    throw new InvalidRequestError(
      `Invalid request: messages.${index}.content: an assistant message needs at least one block.`,
    );
  }
  const out: AssistantMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('\n') : calls.length > 0 ? null : '',
  };
  if (calls.length > 0) out.tool_calls = calls;
  if (thinking.length > 0) out.thinking = thinking;
  if (blocks.length > 0) out.anthropic_blocks = blocks;
  return out;
}

function toolChoiceOf(choice: NonNullable<MessagesRequestBody['tool_choice']>): ToolChoice {
  switch (choice.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
  }
}

function thinkingOf(thinking: NonNullable<MessagesRequestBody['thinking']>): ThinkingConfig {
  if (thinking.type === 'disabled') return { type: 'disabled' };
  const out: ThinkingConfig =
    thinking.type === 'enabled' ? { type: 'enabled', budget_tokens: thinking.budget_tokens } : { type: 'adaptive' };
  if (thinking.display != null) out.display = thinking.display;
  return out;
}

/** What of a tool only an Anthropic-format upstream reads; undefined when the tool has none of it. */
function anthropicToolFields(tool: ClientTool): AnthropicToolFields | undefined {
  // fromEntries defines each field as its own property, `__proto__` included.
  const out: AnthropicToolFields = Object.fromEntries(
    Object.entries(tool).filter(([key]) => !MODELLED_TOOL_FIELDS.has(key)),
  );
  if (tool.cache_control != null)
    out.cache_control =
      tool.cache_control.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: tool.cache_control.ttl };
  if (tool.strict != null) out.strict = tool.strict;
  if (tool.defer_loading != null) out.defer_loading = tool.defer_loading;
  if (tool.eager_input_streaming != null) out.eager_input_streaming = tool.eager_input_streaming;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The top-level fields the door does not model, as the client sent them; undefined when there are none. */
function extraFields(body: MessagesRequestBody): Record<string, unknown> | undefined {
  const extra = Object.entries(body).filter(([key]) => !MESSAGES_FIELDS.has(key));
  // fromEntries defines each field as its own property, `__proto__` included.
  return extra.length > 0 ? Object.fromEntries(extra) : undefined;
}

/** Names what a block carries for an Anthropic-format upstream alone: its type, its Files API source, its unmodelled fields. */
function nameAnthropicOnly(block: Block, path: string, names: Set<string>): void {
  if (isOpaque(block)) names.add(block.type);
  else if (isFileSourced(block)) names.add(`${path}.source.file_id`);
  else for (const key of Object.keys(unmodelledFields(block) ?? {})) names.add(`${path}.${key}`);
  if (block.type === 'tool_result' && Array.isArray(block.content))
    block.content.forEach((inner: Block, k: number) => nameAnthropicOnly(inner, `${path}.content.${k}`, names));
}

/**
 * Where the request carries what only an Anthropic-format upstream reads: the
 * paths of unmodelled fields and Files API sources, unmodelled block types and
 * server tool types by name.
 */
function anthropicOnlyFields(body: MessagesRequestBody): string[] {
  const names = new Set<string>();
  if (Array.isArray(body.system)) body.system.forEach((block, j) => nameAnthropicOnly(block, `system.${j}`, names));
  body.messages.forEach((message, i) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block: Block, j) => nameAnthropicOnly(block, `messages.${i}.content.${j}`, names));
  });
  (body.tools ?? []).forEach((tool, i) => {
    if (isServerTool(tool)) names.add(tool.type);
    else for (const key of Object.keys(tool)) if (!MODELLED_TOOL_FIELDS.has(key)) names.add(`tools.${i}.${key}`);
  });
  return [...names];
}

/** Longest `anthropic-beta` / `anthropic-version` value carried (a list of beta names is far shorter). */
const MAX_ANTHROPIC_HEADER = 2048;

/** One header's value (repeated headers joined as HTTP joins them), or undefined when absent. */
function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const raw = headers[name];
  const value = Array.isArray(raw) ? raw.join(',') : raw;
  if (value === undefined || value === '') return undefined;
  if (value.length > MAX_ANTHROPIC_HEADER)
    throw new InvalidRequestError(`The ${name} header is longer than ${MAX_ANTHROPIC_HEADER} characters.`);
  return value;
}

/** `anthropic-beta` and `anthropic-version` onto the request, for an Anthropic-format upstream to receive unchanged. */
export function withAnthropicHeaders(req: ChatRequest, headers: IncomingHttpHeaders): ChatRequest {
  const beta = headerValue(headers, 'anthropic-beta');
  if (beta !== undefined) req.anthropic_beta = beta;
  const version = headerValue(headers, 'anthropic-version');
  if (version !== undefined) req.anthropic_version = version;
  return req;
}

type MessagesTools = NonNullable<MessagesRequestBody['tools']>;
type ClientTool =
  Exclude<MessagesTools[number], { type: string }> | Extract<MessagesTools[number], { type?: 'custom' | null }>;

function functionTool(t: ClientTool): FunctionTool {
  const fn: FunctionTool['function'] = { name: t.name, parameters: t.input_schema };
  if (t.description != null) fn.description = t.description;
  // Strict tool use is OpenAI's `strict` too; Anthropic-format upstreams read it from the tool's own fields.
  if (t.strict != null) fn.strict = t.strict;
  const tool: FunctionTool = { type: 'function', function: fn };
  const anthropic = anthropicToolFields(t);
  if (anthropic !== undefined) tool.anthropic = anthropic;
  return tool;
}

/**
 * Client tools as function tools; Anthropic's own tools whole, in their
 * places. A `tool_choice` that forces one of those is Anthropic's alone, so it
 * travels with the unmodelled top-level fields (the other formats name it).
 */
function withTools(req: ChatRequest, tools: MessagesTools, choice: MessagesRequestBody['tool_choice']): void {
  const functions: FunctionTool[] = [];
  const server: NonNullable<ChatRequest['anthropic_server_tools']> = [];
  tools.forEach((t, at) => {
    if (isServerTool(t)) server.push({ at, tool: Object.fromEntries(Object.entries(t)) });
    else functions.push(functionTool(t as ClientTool));
  });
  if (functions.length > 0) req.tools = functions;
  if (server.length > 0) req.anthropic_server_tools = server;
  if (choice == null) return;
  if (choice.type === 'tool' && !functions.some((t) => t.function.name === choice.name)) {
    req.extra_body = { ...req.extra_body, tool_choice: choice };
    return;
  }
  req.tool_choice = toolChoiceOf(choice);
  if (choice.type !== 'none' && choice.disable_parallel_tool_use === true) req.parallel_tool_calls = false;
}

/** A validated body as the canonical request; `model` is the gateway model it resolves to. */
export function normalizeMessagesRequest(body: MessagesRequestBody, model: string): ChatRequest {
  const messages: ChatMessage[] = systemMessages(body.system);
  body.messages.forEach((m, i) => {
    if (m.role === 'user') messages.push(...userMessages(m.content));
    else if (m.role === 'system') messages.push(...systemMessages(m.content));
    else messages.push(assistantMessage(m.content, i));
  });
  const req: ChatRequest = {
    model,
    messages,
    max_tokens: body.max_tokens,
    n: 1,
    stream: body.stream ?? false,
    // The door reports usage in message_start / message_delta, so it always asks for the usage chunk.
    include_usage: true,
    // The door passes an Anthropic-format upstream's server-tool blocks and citations on unchanged.
    anthropic_reply_blocks: true,
  };
  if (body.temperature != null) req.temperature = body.temperature;
  if (body.top_p != null) req.top_p = body.top_p;
  if (body.top_k != null) req.top_k = body.top_k;
  if (body.stop_sequences != null && body.stop_sequences.length > 0) req.stop = body.stop_sequences;
  if (body.metadata?.user_id != null) req.user = body.metadata.user_id;
  if (body.thinking != null) req.thinking = thinkingOf(body.thinking);
  const effort = body.output_config?.effort;
  if (effort != null) req.effort = effort;
  const format = body.output_config?.format;
  if (format != null)
    req.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema } };
  if (body.context_management != null) req.context_management = body.context_management;
  const extra = extraFields(body);
  if (extra !== undefined) req.extra_body = extra;
  const anthropicOnly = anthropicOnlyFields(body);
  if (anthropicOnly.length > 0) req.anthropic_fields = anthropicOnly;
  if (body.tools != null && body.tools.length > 0) withTools(req, body.tools, body.tool_choice);
  // Without tools a tool_choice means nothing, as on the chat door.
  return req;
}

type Issue = z.core.$ZodIssue;

/**
 * A union (content as a string or blocks) that fails says only "Invalid
 * input"; the branch that got furthest says what is wrong, so its issues
 * stand for the union's, under the union's path.
 */
function deepestIssues(issues: readonly Issue[]): Issue[] {
  return issues.flatMap((issue): Issue[] => {
    if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
    const depth = (branch: readonly Issue[]) => Math.max(...branch.map((i) => i.path.length));
    const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    if (depth(best) === 0) return [issue];
    return deepestIssues(best).map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
  });
}

/** The issues of a Messages body as one sentence naming each bad field. */
export function describeMessagesIssues(error: z.ZodError): string {
  return describeIssues({ issues: deepestIssues(error.issues) } as z.ZodError);
}

/** Validates a body; 400 naming the bad fields otherwise. */
export function parseMessagesBody(body: unknown): MessagesRequestBody {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
  }
  const parsed = messagesRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeMessagesIssues(parsed.error)}`);
  return parsed.data;
}
