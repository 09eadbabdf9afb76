/**
 * The gateway's canonical chat model. The API validates and normalizes the
 * client's OpenAI-style body into a {@link ChatRequest}; workers hand it to a
 * provider adapter; adapters return OpenAI-shaped replies. The schema, the
 * adapters, DLP, the caches and the executor all read these types, and they
 * are part of the job contract between the API and the workers.
 */

/** Prompt caching at an Anthropic-format upstream: marks the end of a cacheable prefix. */
export interface CacheControl {
  type: 'ephemeral';
  /** How long the upstream keeps the prefix. @defaultValue '5m' */
  ttl?: '5m' | '1h';
}

export interface TextPart {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
  anthropic?: AnthropicFields;
}

/**
 * Fields of a Messages block or tool the gateway does not model (citations,
 * say), as the client sent them: only the Anthropic adapter writes them back,
 * onto the block they came with. A request carrying any names them in
 * {@link ChatRequest.anthropic_fields}, so the other formats refuse or drop them.
 */
export type AnthropicFields = Record<string, unknown>;

/**
 * A Messages content block of a type the gateway does not model
 * (`server_tool_use`, `web_search_tool_result`, `search_result`...), kept
 * verbatim for an Anthropic-format upstream; the other formats never see it.
 */
export interface AnthropicBlockPart {
  type: 'anthropic_block';
  block: AnthropicFields;
}

export interface ImagePart {
  type: 'image_url';
  /** A `data:` URL (bytes inline) or an `https:` URL the provider fetches itself. */
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
  anthropic?: AnthropicFields;
}

/** A document (a PDF) sent inline, in OpenAI chat's `file` part shape; upstreams that read documents get it as theirs. */
export interface FilePart {
  type: 'file';
  /** `file_data`: a `data:application/pdf;base64,` URL. */
  file: { file_data: string; filename?: string };
}

/**
 * A document for the model to read: a PDF (inline bytes or an `https:` URL the
 * provider fetches) or plain text. Anthropic's Messages API has it as a block;
 * the other formats get it as a file or text part where they can read it.
 */
export interface DocumentPart {
  type: 'document';
  source:
    | { type: 'base64'; media_type: 'application/pdf'; data: string }
    | { type: 'text'; media_type: 'text/plain'; data: string }
    | { type: 'url'; url: string };
  title?: string;
  /** Text about the document the model may use but not cite. */
  context?: string;
  cache_control?: CacheControl;
  anthropic?: AnthropicFields;
}

export type ContentPart = TextPart | ImagePart | FilePart | DocumentPart | AnthropicBlockPart;

/**
 * A reasoning block an Anthropic model returned, kept verbatim for the next
 * turn: the API checks the signature (and needs the blocks back before a
 * tool result when thinking is on). `redacted_thinking` is encrypted
 * reasoning, opaque to everyone but the API.
 */
export type ThinkingBlock =
  { type: 'thinking'; thinking: string; signature: string } | { type: 'redacted_thinking'; data: string };

/** Extended thinking: a token budget for reasoning before the answer, the model's own choice (`adaptive`), or off. */
export type ThinkingConfig =
  /** `display: omitted` returns the signature without the reasoning text (Anthropic). */
  | { type: 'enabled'; budget_tokens: number; display?: 'summarized' | 'omitted' }
  | { type: 'adaptive'; display?: 'summarized' | 'omitted' }
  | { type: 'disabled' };

/** How hard the model works on its answer (Anthropic `output_config.effort`). */
export type Effort = 'low' | 'medium' | 'high' | 'max';

/** A function call the model asked for. `arguments` is JSON text, as the model wrote it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  anthropic?: AnthropicFields;
}

export interface SystemMessage {
  role: 'system' | 'developer';
  /** A string, or text parts when one of them marks a prompt-cache breakpoint (`cache_control`). */
  content: string | TextPart[];
  name?: string;
  /** Ends a cacheable prefix at this instruction (Anthropic-format upstreams). */
  cache_control?: CacheControl;
  /** A Messages system block's unmodelled fields, as on {@link TextPart}. */
  anthropic?: AnthropicFields;
}

export interface UserMessage {
  role: 'user';
  /**
   * A string, or parts when the message carries images or a prompt-cache
   * breakpoint (other text-only part lists are joined into a string).
   */
  content: string | ContentPart[];
  name?: string;
}

export interface AssistantMessage {
  role: 'assistant';
  /** Null when the turn only called tools. */
  content: string | null;
  name?: string;
  tool_calls?: ToolCall[];
  refusal?: string;
  /** Reasoning blocks returned with this turn, in order; they come before its text and calls. */
  thinking?: ThinkingBlock[];
  /**
   * A Messages turn with blocks of types the gateway does not model (or text
   * and reasoning blocks with unmodelled fields): all its blocks but the tool
   * calls, its reasoning included, verbatim and in order, which
   * Anthropic-format upstreams get in place of `content`; `content` still
   * holds its texts for the others.
   */
  anthropic_blocks?: AnthropicFields[];
}

/** The result of a tool call, sent back by the client. */
export interface ToolMessage {
  role: 'tool';
  /**
   * A string, or parts when the result carries images, documents, blocks
   * only Anthropic reads or a prompt-cache breakpoint (a Messages
   * `tool_result` with block content; other text-only lists are joined).
   */
  content: string | ContentPart[];
  tool_call_id: string;
  /** The call failed and `content` says why (Anthropic's `is_error`). */
  is_error?: true;
  /** Ends a cacheable prefix at this result (Anthropic-format upstreams). */
  cache_control?: CacheControl;
  anthropic?: AnthropicFields;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** A JSON Schema object, kept as the client sent it. */
export type JsonSchema = Record<string, unknown>;

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema; strict?: boolean };
  /**
   * A Messages tool's own fields, sent as they are to Anthropic-format
   * upstreams only: its prompt-cache mark, Anthropic's strict tool use and its
   * tool runner's loading hints. The other formats have no place for them and
   * they change nothing a reply means there.
   */
  anthropic?: AnthropicToolFields;
}

/** Also any tool field the gateway does not model, as the client sent it. */
export interface AnthropicToolFields {
  [field: string]: unknown;
  cache_control?: CacheControl;
  strict?: boolean;
  defer_loading?: boolean;
  eager_input_streaming?: boolean;
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: JsonSchema; strict?: boolean } };

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/** A validated, normalized chat completion request. Optional fields are absent, never null. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** `max_tokens` as the client sent it (older OpenAI models). */
  max_tokens?: number;
  /** `max_completion_tokens` as the client sent it (required by OpenAI's reasoning models). */
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  /** Number of choices; default 1. */
  n: number;
  /** Stop sequences; `null`, a string or a list normalize to this. */
  stop?: string[];
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk carries usage. */
  include_usage: boolean;
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  /** OpenAI's `service_tier`; `flex` marks work tolerant of queuing. */
  service_tier?: string;
  /** Absent when the client sent none or an empty list. */
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  /** Absent for `{type: 'text'}`, which is the default. */
  response_format?: Exclude<ResponseFormat, { type: 'text' }>;
  /** Only `true` is kept; `false` is the default. */
  logprobs?: true;
  top_logprobs?: number;
  user?: string;
  metadata?: Record<string, string>;
  store?: boolean;
  reasoning_effort?: ReasoningEffort;
  /**
   * Anthropic's automatic prompt caching: the upstream puts the breakpoint on
   * the last cacheable block itself. Sent to Anthropic-format upstreams only.
   */
  cache_control?: CacheControl;
  /** OpenAI's prompt-cache routing key. Sent to OpenAI-format upstreams only. */
  prompt_cache_key?: string;
  /** OpenAI's prompt-cache retention. Sent to OpenAI-format upstreams only. */
  prompt_cache_retention?: PromptCacheRetention;
  /** Sample only from the k most likely tokens (Anthropic, Gemini). */
  top_k?: number;
  /** Extended thinking (Anthropic `thinking`, Gemini `thinkingConfig`). */
  thinking?: ThinkingConfig;
  /**
   * Anthropic's effort: a cost and latency hint with no counterpart elsewhere,
   * sent to Anthropic-format upstreams, dropped and named for the others.
   */
  effort?: Effort;
  /** Anthropic's context editing (its server clears old tool results or thinking); Anthropic-format upstreams only. */
  context_management?: Record<string, unknown>;
  /**
   * Top-level fields of a Messages request the gateway does not model, as the
   * client sent them: an Anthropic-format upstream receives them unchanged;
   * the other formats have no place for them (a 400 naming them, or dropped
   * with `drop_unsupported_params`).
   */
  extra_body?: Record<string, unknown>;
  /**
   * Where a Messages request carries what only an Anthropic-format upstream
   * reads inside its blocks and tools: the paths of unmodelled fields
   * (`messages.0.content.1.citations`, `tools.0.input_examples`) and the
   * unmodelled block types. The other formats refuse the request naming them,
   * or drop them with `drop_unsupported_params`.
   */
  anthropic_fields?: string[];
  /**
   * The tools of a Messages request that Anthropic defines (`web_search_20250305`,
   * `bash_20250124`, `mcp_toolset`...), whole, each with its place in the
   * client's `tools` list: an Anthropic-format upstream gets them there; their
   * types are in {@link anthropic_fields}, so the other formats refuse or drop them.
   */
  anthropic_server_tools?: Array<{ at: number; tool: AnthropicFields }>;
  /** The `anthropic-beta` header of a Messages request, sent unchanged to Anthropic-format upstreams. */
  anthropic_beta?: string;
  /** The `anthropic-version` header of a Messages request, sent to Anthropic-format upstreams in place of the adapter's own. */
  anthropic_version?: string;
  /**
   * Set by the Messages door: an Anthropic-format upstream's reply blocks the
   * other fields cannot say (server-tool blocks, citations, unmodelled block
   * types and fields) come back verbatim in `anthropic_content`. Other doors
   * leave it unset, so their replies carry nothing extra.
   */
  anthropic_reply_blocks?: true;
}

export type PromptCacheRetention = 'in_memory' | '24h';

/** The token budget of a request, whichever field carried it. */
export function maxOutputTokens(req: ChatRequest): number | undefined {
  return req.max_completion_tokens ?? req.max_tokens;
}

/** The text of a message: its content, or its text parts joined; '' for a tool-only assistant turn. */
export function messageText(message: ChatMessage): string {
  const content = message.content;
  if (content === null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += (text === '' ? '' : '\n') + part.text;
  return text;
}

export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

/**
 * Token counts in OpenAI's shape: `prompt_tokens` includes cached and
 * cache-written prompt tokens, `completion_tokens` includes reasoning tokens.
 * The details objects are present when the upstream reported such counts
 * (`src/usage/token-usage.ts` reads them).
 */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: PromptTokensDetails;
  completion_tokens_details?: CompletionTokensDetails;
  /**
   * Present only on a reply served from the gateway's own response cache: the
   * counts are those of the reply when it was first produced, and nothing was
   * charged for this one.
   */
  gateway_cache?: GatewayCacheMark;
}

export interface PromptTokensDetails {
  /** Prompt tokens read from the upstream's prompt cache (OpenAI's field). */
  cached_tokens: number;
  /** Prompt tokens written to the upstream's prompt cache (Anthropic reports them; OpenAI has no such charge). */
  cache_write_tokens?: number;
  /** Of `cache_write_tokens`, those written with the 1-hour retention. */
  cache_write_1h_tokens?: number;
}

export interface CompletionTokensDetails {
  /** Completion tokens spent on reasoning or thinking, included in `completion_tokens`. */
  reasoning_tokens: number;
}

/** How a reply served from the gateway's cache is marked in its usage. */
export interface GatewayCacheMark {
  hit: true;
  /** Which of the gateway's caches answered. */
  type: 'exact' | 'semantic';
}

/** The assistant message of a reply. */
export interface ReplyMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
  /** Reasoning blocks of an Anthropic upstream, present only when the request asked for thinking. */
  thinking?: ThinkingBlock[];
  /**
   * An Anthropic-format upstream's content blocks, verbatim and in order,
   * when the request asked for them (`anthropic_reply_blocks`) and they hold
   * more than the fields above say; only the Messages door reads it.
   */
  anthropic_content?: Array<Record<string, unknown>>;
}

export interface ChatCompletionChoice {
  index: number;
  message: ReplyMessage;
  finish_reason: FinishReason;
  /** The stop sequence that ended the reply, when the upstream says which (Anthropic format). */
  stop_sequence?: string;
  /** OpenAI's logprobs object when asked for (OpenAI format only), else null. */
  logprobs: unknown;
}

/** OpenAI `chat.completion` object. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage: Usage;
}

/** A piece of a tool call in a stream: the first piece of a call has its id and name, later ones argument text. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

/**
 * A piece of a reasoning block in a stream: `index` numbers the blocks of the
 * message; the first piece of a redacted block carries its whole `data`, a
 * thinking block's text and signature come in pieces.
 */
export interface ThinkingDelta {
  index: number;
  type?: ThinkingBlock['type'];
  thinking?: string;
  signature?: string;
  data?: string;
}

/**
 * A piece of an Anthropic-format upstream's stream the canonical chunk cannot
 * say, for a request with `anthropic_reply_blocks` (the Messages door): a
 * block of a type the gateway does not model (`server_tool_use`,
 * `web_search_tool_result`...) opened as the upstream started it, or a delta
 * it does not model (`citations_delta`, a server tool's input) for that block
 * or, with `text`, for the text block it belongs to.
 */
export interface AnthropicBlockPiece {
  start?: Record<string, unknown>;
  delta?: Record<string, unknown>;
  text?: true;
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string;
  refusal?: string;
  tool_calls?: ToolCallDelta[];
  thinking?: ThinkingDelta;
  anthropic_block?: AnthropicBlockPiece;
}

export interface ChatCompletionChunkChoice {
  index: number;
  delta: ChunkDelta;
  finish_reason: FinishReason | null;
  /** With the finish reason: the stop sequence that ended the reply, when the upstream says which. */
  stop_sequence?: string;
  logprobs: unknown;
}

/** OpenAI `chat.completion.chunk` object. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatCompletionChunkChoice[];
  usage?: Usage | null;
}

/** A tool result's text: the content, or its text parts joined by newlines. */
export function toolResultText(content: ToolMessage['content']): string {
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (part.type === 'text') text += text === '' ? part.text : `\n${part.text}`;
  return text;
}
