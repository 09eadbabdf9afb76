import { z } from 'zod';
import { InvalidRequestError } from '../errors/catalog.ts';
import type {
  AssistantMessage,
  CacheControl,
  ChatMessage,
  ChatRequest,
  ContentPart,
  TextPart,
  ToolCall,
} from './types.ts';

/**
 * The zod schema of `POST /v1/chat/completions` bodies: OpenAI's request
 * shape, with the gateway's bounds. It is the single source for validation
 * and for the OpenAPI document. Unknown fields are rejected, never silently
 * dropped; `null` is accepted wherever OpenAI accepts it and means "absent".
 */

const MAX_MESSAGES = 1000;
const MAX_CHOICES = 8;
const MAX_STOP_SEQUENCES = 4;
export const MAX_TOOLS = 128;
export const MAX_METADATA_PAIRS = 16;

/** Anthropic's prompt-cache breakpoint, as LiteLLM users already write it on OpenAI-shaped parts. */
const cacheControl = z.strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).nullish() });

const textPart = z.strictObject({ type: z.literal('text'), text: z.string() });

/**
 * A text part of a system, developer or user message, which may end a
 * cacheable prefix. Assistant and tool messages keep the plain part: the
 * canonical model holds their content as one string, so a mark there would be
 * dropped, and unknown fields are refused rather than dropped.
 */
const markedTextPart = textPart.extend({ cache_control: cacheControl.nullish() });

/** Images come inline (`data:`) or as an `https:` URL for the provider to fetch; the gateway never fetches one. */
const IMAGE_URL = /^(?:data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+|https:\/\/\S+)$/;

const imagePart = z.strictObject({
  type: z.literal('image_url'),
  image_url: z.strictObject({
    url: z
      .string()
      .max(20_000_000)
      .regex(IMAGE_URL, 'must be an https: URL or a base64 data:image/(png|jpeg|gif|webp) URL'),
    detail: z.enum(['auto', 'low', 'high']).nullish(),
  }),
});

/** Documents come inline, as OpenAI's `file` part with `file_data`; PDF is what every upstream format with documents reads. */
const filePart = z.strictObject({
  type: z.literal('file'),
  file: z.strictObject({
    file_data: z
      .string()
      .max(20_000_000)
      .regex(/^data:application\/pdf;base64,[A-Za-z0-9+/=\s]+$/, 'must be a base64 data:application/pdf URL'),
    filename: z.string().max(1024).nullish(),
  }),
});

const textContent = z.union([z.string(), z.array(textPart).min(1)]);
const markedTextContent = z.union([z.string(), z.array(markedTextPart).min(1)]);
const name = z.string().min(1).max(64).nullish();

/** OpenAI's rule for function names. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const functionName = z.string().regex(FUNCTION_NAME, 'must be 1-64 letters, digits, underscores or dashes');

const toolCall = z.strictObject({
  id: z.string().min(1).max(256),
  type: z.literal('function'),
  function: z.strictObject({ name: functionName, arguments: z.string() }),
});

const message = z.discriminatedUnion('role', [
  z.strictObject({ role: z.enum(['system', 'developer']), content: markedTextContent, name }),
  z.strictObject({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(z.union([markedTextPart, imagePart, filePart])).min(1)]),
    name,
  }),
  z
    .strictObject({
      role: z.literal('assistant'),
      content: textContent.nullish(),
      name,
      tool_calls: z.array(toolCall).max(MAX_TOOLS).nullish(),
      refusal: z.string().nullish(),
    })
    .refine((m) => m.content != null || (m.tool_calls?.length ?? 0) > 0 || m.refusal != null, {
      message: "an assistant message needs 'content' or 'tool_calls'",
    }),
  z.strictObject({ role: z.literal('tool'), content: textContent, tool_call_id: z.string().min(1).max(256) }),
]);

const functionTool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: functionName,
    description: z.string().max(8192).nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
});

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: functionName }) }),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    json_schema: z.strictObject({
      name: functionName,
      description: z.string().max(8192).nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

export const chatCompletionRequestSchema = z
  .strictObject({
    model: z.string().min(1).max(256),
    messages: z.array(message).min(1).max(MAX_MESSAGES),
    max_tokens: z.int().positive().max(1_000_000).nullish(),
    max_completion_tokens: z.int().positive().max(1_000_000).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    n: z.int().min(1).max(MAX_CHOICES).nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.strictObject({ include_usage: z.boolean().nullish() }).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(MAX_STOP_SEQUENCES)]).nullish(),
    seed: z.int().nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    user: z.string().max(256).nullish(),
    service_tier: z.enum(['auto', 'default', 'flex', 'priority']).nullish(),
    tools: z.array(functionTool).max(MAX_TOOLS).nullish(),
    tool_choice: toolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    response_format: responseFormat.nullish(),
    logprobs: z.boolean().nullish(),
    top_logprobs: z.int().min(0).max(20).nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= MAX_METADATA_PAIRS, { message: `at most ${MAX_METADATA_PAIRS} pairs` })
      .nullish(),
    store: z.boolean().nullish(),
    reasoning_effort: z.enum(['minimal', 'low', 'medium', 'high']).nullish(),
    cache_control: cacheControl
      .nullish()
      .describe(
        "Anthropic's automatic prompt caching (Anthropic-format providers; dropped for others and named in X-Gateway-Dropped-Params).",
      ),
    prompt_cache_key: z
      .string()
      .min(1)
      .max(1024)
      .nullish()
      .describe(
        "OpenAI's prompt-cache routing key (OpenAI-format providers; dropped for others and named in X-Gateway-Dropped-Params).",
      ),
    prompt_cache_retention: z
      .enum(['in_memory', '24h'])
      .nullish()
      .describe(
        "OpenAI's prompt-cache retention (OpenAI-format providers; dropped for others and named in X-Gateway-Dropped-Params).",
      ),
  })
  .superRefine((body, ctx) => {
    const tools = body.tools ?? [];
    const choice = body.tool_choice;
    if (choice != null && choice !== 'none' && choice !== 'auto' && tools.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: "needs a non-empty 'tools' list" });
    }
    if (typeof choice === 'object' && choice !== null && !tools.some((t) => t.function.name === choice.function.name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tool_choice'],
        message: `names '${choice.function.name.slice(0, 64)}', which is not in 'tools'`,
      });
    }
    const names = new Set<string>();
    for (const [i, tool] of tools.entries()) {
      if (names.has(tool.function.name))
        ctx.addIssue({ code: 'custom', path: ['tools', i, 'function', 'name'], message: 'duplicate tool name' });
      names.add(tool.function.name);
    }
    if (body.top_logprobs != null && body.logprobs !== true) {
      ctx.addIssue({ code: 'custom', path: ['top_logprobs'], message: "needs 'logprobs': true" });
    }
  })
  .meta({ id: 'ChatCompletionRequest' });

export type ChatCompletionRequestBody = z.infer<typeof chatCompletionRequestSchema>;
type MessageBody = z.infer<typeof message>;

function joinText(parts: ReadonlyArray<{ text: string }>): string {
  return parts.map((part) => part.text).join('\n');
}

type TextPartBody = z.infer<typeof markedTextPart>;

function cacheControlOf(value: NonNullable<TextPartBody['cache_control']>): CacheControl {
  return value.ttl != null ? { type: 'ephemeral', ttl: value.ttl } : { type: 'ephemeral' };
}

function textPartOf(part: TextPartBody): TextPart {
  return part.cache_control != null
    ? { type: 'text', text: part.text, cache_control: cacheControlOf(part.cache_control) }
    : { type: 'text', text: part.text };
}

/** A breakpoint is a position in the prompt: parts that carry one stay parts, so it reaches the upstream where the client put it. */
function hasBreakpoint(parts: ReadonlyArray<{ type: string; cache_control?: unknown }>): boolean {
  return parts.some((part) => part.type === 'text' && part.cache_control != null);
}

/** System text: a string, or text parts when one of them carries a breakpoint. */
function systemContent(value: string | TextPartBody[]): string | TextPart[] {
  if (typeof value === 'string' || !hasBreakpoint(value)) return textOf(value);
  return value.map(textPartOf);
}

function textOf(value: string | ReadonlyArray<{ text: string }>): string {
  return typeof value === 'string' ? value : joinText(value);
}

/** Text-only part lists become a string, so a plain prompt has one form whatever the client sent. */
function userContent(value: Extract<MessageBody, { role: 'user' }>['content']): string | ContentPart[] {
  if (typeof value === 'string') return value;
  if (value.every((part) => part.type === 'text') && !hasBreakpoint(value))
    return joinText(value as Array<{ text: string }>);
  return value.map((part) => {
    if (part.type === 'text') return textPartOf(part);
    if (part.type === 'file') {
      const file: ContentPart = { type: 'file', file: { file_data: part.file.file_data } };
      if (part.file.filename != null) file.file.filename = part.file.filename;
      return file;
    }
    const image: ContentPart = { type: 'image_url', image_url: { url: part.image_url.url } };
    if (part.image_url.detail != null) image.image_url.detail = part.image_url.detail;
    return image;
  });
}

function normalizeMessage(m: MessageBody): ChatMessage {
  switch (m.role) {
    case 'system':
    case 'developer':
      return m.name != null
        ? { role: m.role, content: systemContent(m.content), name: m.name }
        : { role: m.role, content: systemContent(m.content) };
    case 'user':
      return m.name != null
        ? { role: 'user', content: userContent(m.content), name: m.name }
        : { role: 'user', content: userContent(m.content) };
    case 'assistant': {
      const out: AssistantMessage = { role: 'assistant', content: m.content == null ? null : textOf(m.content) };
      if (m.name != null) out.name = m.name;
      if (m.tool_calls != null && m.tool_calls.length > 0) {
        out.tool_calls = m.tool_calls.map((c): ToolCall => ({
          id: c.id,
          type: 'function',
          function: { name: c.function.name, arguments: c.function.arguments },
        }));
      }
      if (m.refusal != null) out.refusal = m.refusal;
      return out;
    }
    case 'tool':
      return { role: 'tool', content: textOf(m.content), tool_call_id: m.tool_call_id };
  }
}

/** Turns a validated body into the normalized {@link ChatRequest}: nulls, empty lists and defaults become absent fields. */
export function normalizeChatRequest(body: ChatCompletionRequestBody): ChatRequest {
  const req: ChatRequest = {
    model: body.model,
    messages: body.messages.map(normalizeMessage),
    n: body.n ?? 1,
    stream: body.stream ?? false,
    include_usage: body.stream_options?.include_usage ?? false,
  };
  if (body.max_tokens != null) req.max_tokens = body.max_tokens;
  if (body.max_completion_tokens != null) req.max_completion_tokens = body.max_completion_tokens;
  if (body.temperature != null) req.temperature = body.temperature;
  if (body.top_p != null) req.top_p = body.top_p;
  if (body.stop != null) {
    const stops = typeof body.stop === 'string' ? [body.stop] : body.stop;
    if (stops.length > 0) req.stop = stops;
  }
  if (body.seed != null) req.seed = body.seed;
  if (body.presence_penalty != null) req.presence_penalty = body.presence_penalty;
  if (body.frequency_penalty != null) req.frequency_penalty = body.frequency_penalty;
  if (body.service_tier != null) req.service_tier = body.service_tier;
  if (body.tools != null && body.tools.length > 0) {
    req.tools = body.tools.map((tool) => {
      const fn: NonNullable<ChatRequest['tools']>[number]['function'] = { name: tool.function.name };
      if (tool.function.description != null) fn.description = tool.function.description;
      if (tool.function.parameters != null) fn.parameters = tool.function.parameters;
      if (tool.function.strict != null) fn.strict = tool.function.strict;
      return { type: 'function', function: fn };
    });
    // Without tools a tool_choice (only 'none' or 'auto' pass validation then) means nothing.
    if (body.tool_choice != null) req.tool_choice = body.tool_choice;
    if (body.parallel_tool_calls != null) req.parallel_tool_calls = body.parallel_tool_calls;
  }
  const format = body.response_format;
  if (format != null && format.type === 'json_object') req.response_format = { type: 'json_object' };
  if (format != null && format.type === 'json_schema') {
    const spec: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean } = {
      name: format.json_schema.name,
    };
    if (format.json_schema.description != null) spec.description = format.json_schema.description;
    if (format.json_schema.schema != null) spec.schema = format.json_schema.schema;
    if (format.json_schema.strict != null) spec.strict = format.json_schema.strict;
    req.response_format = { type: 'json_schema', json_schema: spec };
  }
  if (body.logprobs === true) {
    req.logprobs = true;
    if (body.top_logprobs != null) req.top_logprobs = body.top_logprobs;
  }
  if (body.user != null) req.user = body.user;
  if (body.metadata != null && Object.keys(body.metadata).length > 0) req.metadata = body.metadata;
  if (body.store != null) req.store = body.store;
  if (body.reasoning_effort != null) req.reasoning_effort = body.reasoning_effort;
  if (body.cache_control != null) req.cache_control = cacheControlOf(body.cache_control);
  if (body.prompt_cache_key != null) req.prompt_cache_key = body.prompt_cache_key;
  if (body.prompt_cache_retention != null) req.prompt_cache_retention = body.prompt_cache_retention;
  return req;
}

/** Longest piece of client input quoted back in an error message. */
const MAX_QUOTED = 64;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Formats zod issues as one readable sentence naming each bad field (at most
 * five). Field names and messages are clipped: a hostile body must not be able
 * to inflate the error it gets back.
 */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map((p) => clip(String(p), MAX_QUOTED)).join('.') : 'body';
      const message =
        issue.code === 'unrecognized_keys'
          ? `unrecognized field(s) ${issue.keys
              .slice(0, 3)
              .map((k) => `'${clip(k, MAX_QUOTED)}'`)
              .join(', ')}`
          : clip(issue.message, 200);
      return `${path}: ${message}`;
    })
    .join('; ');
}

/** Validates a body into a {@link ChatRequest}; 400 naming the bad fields otherwise. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
  }
  const parsed = chatCompletionRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeIssues(parsed.error)}`);
  return normalizeChatRequest(parsed.data);
}
