import { z } from 'zod';

/**
 * The zod schema of `POST /v1/messages` bodies: Anthropic's Messages API
 * request (`MessageCreateParams` of the official SDK) as far as the gateway
 * can carry it to every upstream format. Unknown top-level fields, unknown
 * fields of content blocks and tools, and blocks of unknown types are kept for
 * an Anthropic-format upstream, which receives them unchanged (see decode.ts);
 * the other formats refuse them naming them. Server tools and the insides of
 * modelled fields (an image's source, a cache mark) are still checked.
 */

const MAX_MESSAGES = 1000;
const MAX_TOOLS = 128;
const MAX_STOP_SEQUENCES = 16;

/** Anthropic's tool-name rule, narrowed to OpenAI's 64 characters so every upstream takes it. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const toolName = z.string().regex(TOOL_NAME, 'must be 1-64 letters, digits, underscores or dashes');

const cacheControlSchema = z.strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });
const cacheControl = cacheControlSchema.nullish();

const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
const BASE64 = /^[A-Za-z0-9+/=\s]+$/;
const HTTPS_URL = /^https:\/\/\S+$/;

/** A text block; its unmodelled fields (citations...) are carried, in messages and in the system instruction alike. */
const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });

/** A file uploaded to Anthropic's Files API: only an Anthropic-format upstream can read it. */
const fileSource = z.strictObject({ type: z.literal('file'), file_id: z.string().min(1).max(256) });

const imageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('base64'),
      media_type: z.enum(IMAGE_MEDIA_TYPES),
      data: z.string().max(20_000_000).regex(BASE64, 'must be base64'),
    }),
    z.strictObject({ type: z.literal('url'), url: z.string().max(8192).regex(HTTPS_URL, 'must be an https: URL') }),
    fileSource,
  ]),
  cache_control: cacheControl,
});

const documentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('base64'),
      media_type: z.literal('application/pdf'),
      data: z.string().max(40_000_000).regex(BASE64, 'must be base64'),
    }),
    z.strictObject({ type: z.literal('text'), media_type: z.literal('text/plain'), data: z.string() }),
    z.strictObject({ type: z.literal('url'), url: z.string().max(8192).regex(HTTPS_URL, 'must be an https: URL') }),
    fileSource,
  ]),
  title: z.string().max(500).nullish(),
  context: z.string().nullish(),
  cache_control: cacheControl,
});

const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1).max(256),
  name: toolName,
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

const fieldsOf = (schema: { shape: object }): ReadonlySet<string> => new Set(Object.keys(schema.shape));

/** The fields the gateway models, per block type; the others pass to Anthropic-format upstreams as they are. */
export const MODELLED_BLOCK_FIELDS: Readonly<Record<string, ReadonlySet<string>>> = {
  text: fieldsOf(textBlock),
  image: fieldsOf(imageBlock),
  document: fieldsOf(documentBlock),
  tool_result: new Set(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']),
  tool_use: fieldsOf(toolUseBlock),
  thinking: fieldsOf(thinkingBlock),
  redacted_thinking: fieldsOf(redactedThinkingBlock),
};

/** Block types the gateway models; a block of another type is carried as it is. */
const MODELLED_BLOCK_TYPES: ReadonlySet<string> = new Set(Object.keys(MODELLED_BLOCK_FIELDS));

/** A block of a type the gateway does not model (`server_tool_use`, `search_result`...), for Anthropic-format upstreams. */
const opaqueBlock = z.looseObject({
  type: z
    .string()
    .min(1)
    .max(64)
    .refine((type) => !MODELLED_BLOCK_TYPES.has(type), { message: 'is not a block type this role sends', abort: true }),
});

// In each union the modelled branch comes first: when a modelled block is wrong, its issues are the ones reported.
/** What a tool returns: texts, images, documents, or blocks only Anthropic reads (`search_result`...). */
const toolResultContentBlock = z.union([
  z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock]),
  opaqueBlock,
]);

const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(256),
  content: z.union([z.string(), z.array(toolResultContentBlock)]).optional(),
  is_error: z.boolean().nullish(),
  cache_control: cacheControl,
});

const userBlock = z.union([
  z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, toolResultBlock]),
  opaqueBlock,
]);
const assistantBlock = z.union([
  z.discriminatedUnion('type', [textBlock, toolUseBlock, thinkingBlock, redactedThinkingBlock]),
  opaqueBlock,
]);

const message = z.discriminatedUnion('role', [
  z.strictObject({ role: z.literal('user'), content: z.union([z.string(), z.array(userBlock).min(1)]) }),
  z.strictObject({ role: z.literal('assistant'), content: z.union([z.string(), z.array(assistantBlock)]) }),
  // An instruction in the middle of the conversation (`SystemMessageParam`; Claude Code sends its environment so).
  z.strictObject({ role: z.literal('system'), content: z.union([z.string(), z.array(textBlock)]) }),
]);

/** Unmodelled tool fields (`input_examples`...) pass to Anthropic-format upstreams as they are. */
const clientTool = z.looseObject({
  // `custom` is the only client tool type; server tools (web search, code execution...) run at Anthropic only.
  type: z.literal('custom').nullish(),
  name: toolName,
  description: z.string().max(16_384).nullish(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  cache_control: cacheControl,
  // Anthropic's strict tool use and its tool runner's loading hints: passed on to Anthropic-format upstreams only.
  defer_loading: z.boolean().nullish(),
  eager_input_streaming: z.boolean().nullish(),
  strict: z.boolean().nullish(),
});

export const MODELLED_TOOL_FIELDS = fieldsOf(clientTool);

/**
 * A tool Anthropic defines and runs or specifies itself (`web_search_20250305`,
 * `bash_20250124`, `mcp_toolset`...): carried whole to Anthropic-format
 * upstreams, which alone know it. Only its name is read, for `tool_choice`.
 */
const serverTool = z.looseObject({
  type: z
    .string()
    .min(1)
    .max(64)
    .refine((type) => type !== 'custom', { message: "a 'custom' tool needs 'name' and 'input_schema'", abort: true }),
  name: z.string().min(1).max(128).optional(),
});

const tool = z.union([clientTool, serverTool]);

/** Whether a tool of the request is one of Anthropic's own (a server or Anthropic-defined tool). */
export function isServerTool(tool: MessagesTool): tool is z.infer<typeof serverTool> {
  return tool.type != null && tool.type !== 'custom';
}

const toolChoice = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().nullish() }),
  z.strictObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().nullish() }),
  z.strictObject({ type: z.literal('tool'), name: toolName, disable_parallel_tool_use: z.boolean().nullish() }),
  z.strictObject({ type: z.literal('none') }),
]);

const display = z.enum(['summarized', 'omitted']).nullish();
const thinking = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('enabled'), budget_tokens: z.int().min(1024).max(1_000_000), display }),
  z.strictObject({ type: z.literal('adaptive'), display }),
  z.strictObject({ type: z.literal('disabled') }),
]);

/** `output_config`: how hard the model works (`effort`) and the JSON Schema its answer follows (`format`). */
const outputConfig = z.strictObject({
  effort: z.enum(['low', 'medium', 'high', 'max']).nullish(),
  format: z.strictObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }).nullish(),
});

/**
 * Context editing (Anthropic's server clears old tool results or thinking):
 * passed on to Anthropic-format upstreams; for the others it is dropped and
 * named, since clients such as Claude Code always send it.
 */
const contextManagement = z.looseObject({ edits: z.array(z.looseObject({ type: z.string() })).optional() });

/** The top-level fields the gateway models; the others pass to Anthropic-format upstreams as they are. */
const messagesFields = {
  model: z.string().min(1).max(256),
  max_tokens: z.int().positive().max(1_000_000),
  messages: z.array(message).min(1).max(MAX_MESSAGES),
  system: z.union([z.string(), z.array(textBlock)]).nullish(),
  metadata: z.strictObject({ user_id: z.string().max(512).nullish() }).nullish(),
  stop_sequences: z.array(z.string().min(1)).max(MAX_STOP_SEQUENCES).nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.int().min(0).nullish(),
  tools: z.array(tool).max(MAX_TOOLS).nullish(),
  tool_choice: toolChoice.nullish(),
  thinking: thinking.nullish(),
  output_config: outputConfig.nullish(),
  context_management: contextManagement.nullish(),
};

export const MESSAGES_FIELDS: ReadonlySet<string> = new Set(Object.keys(messagesFields));

export const messagesRequestSchema = z
  .looseObject(messagesFields)
  .superRefine((body, ctx) => {
    const names = new Set<string>();
    for (const [i, t] of (body.tools ?? []).entries()) {
      if (t.name === undefined) continue;
      if (names.has(t.name))
        ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: 'duplicate tool name' });
      names.add(t.name);
    }
    const choice = body.tool_choice;
    if ((choice?.type === 'any' || choice?.type === 'tool') && names.size === 0) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: "needs a non-empty 'tools' list" });
    }
    if (choice?.type === 'tool' && !names.has(choice.name)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tool_choice', 'name'],
        message: `names '${choice.name}', which is not in 'tools'`,
      });
    }
    if (body.thinking?.type === 'enabled' && body.thinking.budget_tokens >= body.max_tokens) {
      ctx.addIssue({ code: 'custom', path: ['thinking', 'budget_tokens'], message: "must be less than 'max_tokens'" });
    }
  })
  .meta({ id: 'MessagesRequest' });

export type MessagesRequestBody = z.infer<typeof messagesRequestSchema>;
export type MessageBody = z.infer<typeof message>;
export type UserBlock = z.infer<typeof userBlock>;
export type AssistantBlock = z.infer<typeof assistantBlock>;
export type MessagesTool = z.infer<typeof tool>;
export type ToolResultContentBlock = z.infer<typeof toolResultContentBlock>;

/** Fields of `count_tokens`: the request without what only generation reads. */
export const countTokensRequestSchema = z
  // Unknown top-level fields are accepted: the count is the gateway's estimate, which they do not change.
  .looseObject({
    model: z.string().min(1).max(256),
    messages: z.array(message).min(1).max(MAX_MESSAGES),
    system: z.union([z.string(), z.array(textBlock)]).nullish(),
    tools: z.array(tool).max(MAX_TOOLS).nullish(),
    tool_choice: toolChoice.nullish(),
    thinking: thinking.nullish(),
    output_config: outputConfig.nullish(),
    context_management: contextManagement.nullish(),
  })
  .meta({ id: 'MessagesCountTokensRequest' });

export type CountTokensBody = z.infer<typeof countTokensRequestSchema>;
