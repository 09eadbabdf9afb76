import {
  countWords,
  imageProblem,
  isRecord,
  sampleOf,
  streamPieces,
  type FakeDialect,
  type FakePrompt,
  type FakeReply,
  type FakeToolCall,
  type SseFrame,
} from './dialect.ts';

/**
 * Fake of Anthropic `POST /v1/messages`, which returns exactly one message.
 * It rejects (400, in the API's wording where known) what the real API
 * rejects, so adapter bugs fail here rather than in production: unknown
 * top-level fields, roles that do not alternate, empty texts, a final
 * assistant text ending in whitespace, malformed tools and tool choices,
 * `tool_result` blocks that do not answer the `tool_use` blocks of the
 * message just before or do not come first, calls left unanswered, and bad
 * images. Tool calls of the reply are `tool_use` blocks; JSON outputs come
 * from `output_config.format`.
 *
 * A forced tool (`tool_choice: {type: 'tool'}`) is answered as a model would:
 * with an input that follows the tool's `input_schema` ({@link sampleOf}), or,
 * for an open schema that declares no properties, with the fake's JSON-mode
 * object `{"echo": <last user text>}`. The shared `fakeAnswer` gives every call
 * `{"input": <last user text>}` and `completionBody` does not see the request,
 * so the dialect hands the input over through the last user text, marked
 * ({@link FORCED_INPUT_MARK}), and unwraps it when it renders the call.
 */

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** Top-level request fields of the Messages API; anything else is "Extra inputs are not permitted". */
const REQUEST_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'tools',
  'tool_choice',
  'metadata',
  'output_config',
  'thinking',
  'service_tier',
  'container',
  'inference_geo',
  'cache_control',
  'context_management',
  'mcp_servers',
]);

const TOOL_FIELDS = new Set([
  'name',
  'description',
  'input_schema',
  'cache_control',
  'type',
  'strict',
  'defer_loading',
  'eager_input_streaming',
  'input_examples',
]);
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
/** Tools Anthropic defines (versioned, such as `web_search_20250305`) and the MCP toolset: their own fields, no input_schema. */
const SERVER_TOOL_TYPE =
  /^(?:(?:web_search|web_fetch|code_execution|bash|text_editor|computer|memory|tool_search_tool_regex|tool_search_tool_bm25)_\d{8}|mcp_toolset)$/;

/** Starts a last user text that carries a forced tool's input as JSON (private-use character: no client text starts so). */
const FORCED_INPUT_MARK = '\u{F8FF}forced-tool-input:';

/** The input a model gives a forced tool: one that follows its schema. */
function forcedInput(schema: Record<string, unknown>, lastUserText: string): unknown {
  const properties = schema.properties;
  if (isRecord(properties) && Object.keys(properties).length > 0) return sampleOf(schema, lastUserText);
  return { echo: lastUserText };
}

/** The `input` object of a reply's tool call, unwrapping a forced tool's input. */
function callInput(call: FakeToolCall): unknown {
  const args: unknown = JSON.parse(call.arguments);
  if (isRecord(args) && typeof args.input === 'string' && args.input.startsWith(FORCED_INPUT_MARK)) {
    return JSON.parse(args.input.slice(FORCED_INPUT_MARK.length)) as unknown;
  }
  return args;
}

/** Why a request is rejected: the message of the 400. */
class Problem {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/** The value read, or the problem that stopped the reading. */
type Read<T> = T | Problem;

function problem(message: string): Problem {
  return new Problem(message);
}

function isProblem<T>(value: Read<T>): value is Problem {
  return value instanceof Problem;
}

function extraField(record: Record<string, unknown>, allowed: ReadonlySet<string>, path: string): string | undefined {
  const extra = Object.keys(record).find((key) => !allowed.has(key));
  return extra === undefined ? undefined : `${path}${extra}: Extra inputs are not permitted`;
}

/** `system` is a string or a list of text blocks. */
function systemText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return undefined;
  let text = '';
  for (const block of value) {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return undefined;
    text += block.text;
  }
  return text;
}

/** The block types a `tool_result` content may hold besides text. */
const TOOL_RESULT_BLOCKS = new Set(['image', 'document', 'search_result']);

/** The text of a `tool_result` content: absent, a string, or text, image, document and search result blocks. */
function toolResultText(value: unknown, path: string): Read<string> {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return problem(`${path}: Input should be a valid string or list`);
  let text = '';
  for (const [i, block] of value.entries()) {
    if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (!(isRecord(block) && TOOL_RESULT_BLOCKS.has(String(block.type))))
      return problem(`${path}.${i}: invalid content block`);
    else if (block.type === 'image') {
      const imageIssue = imageSourceProblem(block.source);
      if (imageIssue !== undefined) return problem(`${path}.${i}.source: ${imageIssue}`);
    }
  }
  return text;
}

/** A file uploaded with the Files API (beta), referenced by its id. */
function isFileSource(source: unknown): boolean {
  return isRecord(source) && source.type === 'file' && typeof source.file_id === 'string' && source.file_id !== '';
}

function imageSourceProblem(source: unknown): string | undefined {
  if (!isRecord(source)) return 'source: Field required';
  if (source.type === 'base64') return imageProblem(source.media_type, source.data);
  if (source.type === 'url') {
    return typeof source.url === 'string' && source.url.startsWith('https://')
      ? undefined
      : 'url: only https URLs are accepted';
  }
  if (isFileSource(source)) return undefined;
  return `source.type: unsupported image source type ${String(source.type)}`;
}

/** What one message contributes to the prompt facts. */
interface MessageFacts {
  text: string;
  toolUseIds: string[];
  toolResults: Array<{ id: string; content: string }>;
  images: number;
  /** PDF `document` blocks. */
  files: number;
  /** Words of texts and tool results. */
  words: number;
}

function readContent(message: Record<string, unknown>, i: number, isLast: boolean): Read<MessageFacts> {
  const role = message.role;
  const content = message.content;
  const facts: MessageFacts = { text: '', toolUseIds: [], toolResults: [], images: 0, files: 0, words: 0 };
  if (typeof content === 'string') {
    if (content === '' && !(isLast && role === 'assistant')) {
      return problem(
        `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    facts.text = content;
    facts.words = countWords(content);
    return facts;
  }
  if (!Array.isArray(content)) return problem(`messages.${i}.content: Input should be a valid string or list`);
  if (content.length === 0 && !(isLast && role === 'assistant')) {
    return problem(
      `messages.${i}: all messages must have non-empty content except for the optional final assistant message`,
    );
  }
  let seenOther = false;
  for (const [k, block] of content.entries()) {
    const path = `messages.${i}.content.${k}`;
    if (!isRecord(block)) return problem(`${path}: Input should be a valid dictionary`);
    switch (block.type) {
      case 'text':
        if (typeof block.text !== 'string') return problem(`${path}.text: Field required`);
        if (block.text === '') return problem(`${path}: text content blocks must be non-empty`);
        if (block.text.trim() === '') return problem(`${path}: text content blocks must contain non-whitespace text`);
        facts.text += block.text;
        facts.words += countWords(block.text);
        seenOther = true;
        break;
      case 'image': {
        if (role !== 'user') return problem(`${path}: image blocks are only allowed in user messages`);
        const imageIssue = imageSourceProblem(block.source);
        if (imageIssue !== undefined) return problem(`${path}.source: ${imageIssue}`);
        facts.images += 1;
        seenOther = true;
        break;
      }
      case 'document': {
        if (role !== 'user') return problem(`${path}: document blocks are only allowed in user messages`);
        const source = isRecord(block.source) ? block.source : {};
        if (isFileSource(source)) {
          facts.files += 1;
          seenOther = true;
          break;
        }
        if (
          source.type !== 'base64' ||
          source.media_type !== 'application/pdf' ||
          typeof source.data !== 'string' ||
          !/^[A-Za-z0-9+/=]+$/.test(source.data)
        ) {
          return problem(`${path}.source: a base64 application/pdf source is required`);
        }
        facts.files += 1;
        seenOther = true;
        break;
      }
      case 'tool_use':
        if (role !== 'assistant') return problem(`${path}: tool_use blocks are only allowed in assistant messages`);
        if (typeof block.id !== 'string' || block.id === '') return problem(`${path}.id: Field required`);
        if (typeof block.name !== 'string' || !TOOL_NAME.test(block.name))
          return problem(`${path}.name: invalid tool name`);
        if (!isRecord(block.input)) return problem(`${path}.input: Input should be a valid dictionary`);
        facts.toolUseIds.push(block.id);
        seenOther = true;
        break;
      case 'tool_result': {
        if (role !== 'user') return problem(`${path}: tool_result blocks are only allowed in user messages`);
        if (typeof block.tool_use_id !== 'string') return problem(`${path}.tool_use_id: Field required`);
        if (seenOther) {
          return problem(
            `messages.${i}: tool_result blocks must come first in the user message content, before any other block.`,
          );
        }
        const text = toolResultText(block.content, `${path}.content`);
        if (isProblem(text)) return text;
        facts.toolResults.push({ id: block.tool_use_id, content: text });
        facts.words += countWords(text);
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        // Checked as the API checks them: a signature (or the encrypted data) must come back with the block.
        if (role !== 'assistant')
          return problem(`${path}: ${block.type} blocks are only allowed in assistant messages`);
        if (
          block.type === 'thinking' &&
          (typeof block.thinking !== 'string' || typeof block.signature !== 'string' || block.signature === '')
        ) {
          return problem(`${path}.signature: Field required`);
        }
        if (block.type === 'redacted_thinking' && typeof block.data !== 'string')
          return problem(`${path}.data: Field required`);
        break;
      // Server tools' blocks (the model's web search and its results) come back in assistant turns; search results
      // are the client's own, in user turns.
      case 'server_tool_use':
      case 'web_search_tool_result':
        if (role !== 'assistant')
          return problem(`${path}: ${block.type} blocks are only allowed in assistant messages`);
        seenOther = true;
        break;
      case 'search_result':
        if (role !== 'user') return problem(`${path}: search_result blocks are only allowed in user messages`);
        if (typeof block.source !== 'string') return problem(`${path}.source: Field required`);
        seenOther = true;
        break;
      default:
        return problem(`${path}.type: unsupported content block type ${String(block.type)}`);
    }
  }
  return facts;
}

interface ToolFacts {
  names: string[];
  /** Input schemas by tool name. */
  schemas: Map<string, Record<string, unknown>>;
  toolChoice: FakePrompt['toolChoice'];
  parallelToolCalls: boolean;
  /** Names of the server tools declared. */
  serverNames: string[];
}

function readTools(body: Record<string, unknown>): Read<ToolFacts> {
  const facts: ToolFacts = {
    names: [],
    schemas: new Map(),
    toolChoice: 'auto',
    parallelToolCalls: true,
    serverNames: [],
  };
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return problem('tools: Input should be a valid list');
    for (const [i, tool] of body.tools.entries()) {
      if (!isRecord(tool)) return problem(`tools.${i}: Input should be a valid dictionary`);
      if (typeof tool.type === 'string' && tool.type !== 'custom') {
        if (!SERVER_TOOL_TYPE.test(tool.type)) return problem(`tools.${i}.type: unknown tool type '${tool.type}'`);
        // The fake never runs a server tool; its name can still be forced, and then the model answers in text.
        if (typeof tool.name === 'string') facts.serverNames.push(tool.name);
        continue;
      }
      const extra = extraField(tool, TOOL_FIELDS, `tools.${i}.custom.`);
      if (extra !== undefined) return problem(extra);
      const path = `tools.${i}.custom`;
      if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name))
        return problem(`${path}.name: String should match pattern '${TOOL_NAME.source}'`);
      if (!isRecord(tool.input_schema)) return problem(`${path}.input_schema: Field required`);
      if (tool.input_schema.type !== 'object') return problem(`${path}.input_schema.type: Input should be 'object'`);
      if (tool.description !== undefined && typeof tool.description !== 'string')
        return problem(`${path}.description: Input should be a valid string`);
      if (facts.names.includes(tool.name)) return problem('tools: Tool names must be unique.');
      facts.names.push(tool.name);
      facts.schemas.set(tool.name, tool.input_schema);
    }
  }
  const choice = body.tool_choice;
  if (choice === undefined) return facts;
  if (facts.names.length === 0 && facts.serverNames.length === 0)
    return problem('tool_choice: tool_choice may only be specified while providing tools.');
  if (!isRecord(choice)) return problem('tool_choice: Input should be a valid dictionary');
  const allowed = choice.type === 'none' ? new Set(['type']) : new Set(['type', 'name', 'disable_parallel_tool_use']);
  const extra = extraField(choice, allowed, 'tool_choice.');
  if (extra !== undefined) return problem(extra);
  if (choice.disable_parallel_tool_use !== undefined && typeof choice.disable_parallel_tool_use !== 'boolean') {
    return problem('tool_choice.disable_parallel_tool_use: Input should be a valid boolean');
  }
  facts.parallelToolCalls = choice.disable_parallel_tool_use !== true;
  switch (choice.type) {
    case 'auto':
      facts.toolChoice = 'auto';
      break;
    case 'any':
      facts.toolChoice = 'required';
      break;
    case 'none':
      facts.toolChoice = 'none';
      break;
    case 'tool':
      if (typeof choice.name === 'string' && facts.serverNames.includes(choice.name)) {
        facts.toolChoice = 'none';
        break;
      }
      if (typeof choice.name !== 'string' || !facts.names.includes(choice.name)) {
        return problem(`tool_choice.name: Tool '${String(choice.name)}' not found in tools`);
      }
      facts.toolChoice = { name: choice.name };
      break;
    default:
      return problem(
        `tool_choice.type: Input tag '${String(choice.type)}' is not one of 'auto', 'any', 'tool', 'none'`,
      );
  }
  return facts;
}

function readJsonSchema(body: Record<string, unknown>): Read<Record<string, unknown> | undefined> {
  const config = body.output_config;
  if (config === undefined) return undefined;
  if (!isRecord(config)) return problem('output_config: Input should be a valid dictionary');
  const extra = extraField(config, new Set(['format', 'effort']), 'output_config.');
  if (extra !== undefined) return problem(extra);
  const format = config.format;
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format) || format.type !== 'json_schema')
    return problem("output_config.format.type: Input should be 'json_schema'");
  if (!isRecord(format.schema)) return problem('output_config.format.schema: Field required');
  return format.schema;
}

/** The text a message ends with: its string content, or its last block when that is a text. */
function finalText(content: unknown): string {
  if (typeof content === 'string') return content;
  const last: unknown = Array.isArray(content) ? content.at(-1) : undefined;
  return isRecord(last) && last.type === 'text' && typeof last.text === 'string' ? last.text : '';
}

function frame(type: string, payload: Record<string, unknown> = {}): SseFrame {
  return { event: type, data: JSON.stringify({ type, ...payload }) };
}

/** The JSON text of a call's input split into up to three non-empty pieces, as `input_json_delta` fragments. */
function jsonFragments(json: string): string[] {
  const size = Math.max(1, Math.ceil(json.length / 3));
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out;
}

function stopReasonOf(reply: FakeReply): string {
  if (reply.toolCalls.length > 0) return 'tool_use';
  if (reply.finish === 'length') return 'max_tokens';
  return reply.finish === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
}

function toolUseBlock(call: FakeToolCall): Record<string, unknown> {
  return { type: 'tool_use', id: call.id, name: call.name, input: callInput(call) };
}

/** The `webSearch` behaviour's blocks, shaped as the API documents its web search tool's reply. */
const WEB_SEARCH_USE = {
  type: 'server_tool_use',
  id: 'srvtoolu_fake',
  name: 'web_search',
  input: { query: 'fake search' },
};
const WEB_SEARCH_RESULT = {
  type: 'web_search_tool_result',
  tool_use_id: 'srvtoolu_fake',
  content: [
    {
      type: 'web_search_result',
      url: 'https://example.com/fake',
      title: 'A fake result',
      encrypted_content: 'ZmFrZQ==',
      page_age: null,
    },
  ],
};
const WEB_SEARCH_CITATION = {
  type: 'web_search_result_location',
  url: 'https://example.com/fake',
  title: 'A fake result',
  encrypted_index: 'ZmFrZQ==',
  cited_text: 'fake',
};

export const anthropicDialect: FakeDialect = {
  route(method, url) {
    return method === 'POST' && url.pathname === '/v1/messages' ? { stream: false } : undefined;
  },

  isAuthorized(headers, apiKey) {
    return headers['x-api-key'] === apiKey;
  },

  headerProblem(headers) {
    return headers['anthropic-version'] === undefined ? 'anthropic-version: header is required' : undefined;
  },

  errorBody(status, message) {
    return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
  },

  readPrompt(body): FakePrompt | string {
    if (!isRecord(body) || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return "'model' and 'messages' are required.";
    }
    const extra = extraField(body, REQUEST_FIELDS, '');
    if (extra !== undefined) return extra;
    // The real API rejects requests without these; so does the fake, to catch adapter bugs.
    if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
    if (body.messages.length === 0) return 'messages: at least one message is required';
    if (typeof body.temperature === 'number' && (body.temperature < 0 || body.temperature > 1))
      return 'temperature: range: 0..1';
    if (body.metadata !== undefined) {
      if (!isRecord(body.metadata)) return 'metadata: Input should be a valid dictionary';
      const extraMetadata = extraField(body.metadata, new Set(['user_id']), 'metadata.');
      if (extraMetadata !== undefined) return extraMetadata;
    }
    const tools = readTools(body);
    if (isProblem(tools)) return tools.message;
    const jsonSchema = readJsonSchema(body);
    if (isProblem(jsonSchema)) return jsonSchema.message;

    let inputWords = 0;
    if (body.system !== undefined) {
      const system = systemText(body.system);
      if (system === undefined) return 'system: invalid';
      inputWords += countWords(system);
    }
    let lastUser: MessageFacts | undefined;
    let images = 0;
    let files = 0;
    let previousRole: unknown;
    /** tool_use ids of the previous assistant message, still to be answered. */
    let openCalls: string[] = [];
    for (const [i, message] of body.messages.entries()) {
      if (!isRecord(message)) return `messages.${i}: invalid`;
      if (message.role !== 'user' && message.role !== 'assistant') return `messages.${i}.role: invalid`;
      if (i === 0 && message.role !== 'user') return 'messages: first message must use the "user" role';
      if (message.role === previousRole) return 'messages: roles must alternate between "user" and "assistant"';
      previousRole = message.role;
      const isLast = i === body.messages.length - 1;
      const facts = readContent(message, i, isLast);
      if (isProblem(facts)) return facts.message;
      for (const [k, result] of facts.toolResults.entries()) {
        if (!openCalls.includes(result.id)) {
          return (
            `messages.${i}.content.${k}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${result.id}. ` +
            'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.'
          );
        }
      }
      if (message.role === 'user' && openCalls.length > 0) {
        const unanswered = openCalls.filter((id) => !facts.toolResults.some((result) => result.id === id));
        if (unanswered.length > 0) {
          return (
            `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. ` +
            'Each `tool_use` block must have a corresponding `tool_result` block in the next message.'
          );
        }
      }
      if (isLast && message.role === 'assistant' && /\s$/.test(finalText(message.content))) {
        return 'messages: final assistant content cannot end with trailing whitespace';
      }
      openCalls = message.role === 'assistant' ? facts.toolUseIds : [];
      inputWords += facts.words;
      images += facts.images;
      files += facts.files;
      if (message.role === 'user') lastUser = facts;
    }
    const toolResults = lastUser?.toolResults.map((result) => result.content) ?? [];
    let lastUserText = lastUser?.text ?? '';
    const forced = tools.toolChoice;
    // fakeAnswer calls the forced tool only when the last turn holds no tool results.
    if (typeof forced === 'object' && toolResults.length === 0) {
      lastUserText =
        FORCED_INPUT_MARK + JSON.stringify(forcedInput(tools.schemas.get(forced.name) ?? {}, lastUserText));
    }
    return {
      ...(typeof body.max_tokens === 'number' ? { maxTokens: body.max_tokens } : {}),
      ...(Array.isArray(body.stop_sequences)
        ? { stopSequences: body.stop_sequences.filter((x): x is string => typeof x === 'string') }
        : {}),
      model: body.model,
      stream: body.stream === true,
      n: 1,
      lastUserText,
      inputWords,
      includeUsage: true,
      tools: tools.names,
      toolChoice: tools.toolChoice,
      parallelToolCalls: tools.parallelToolCalls,
      toolResults,
      ...(jsonSchema !== undefined ? { jsonSchema } : {}),
      // The Messages API has no schema-less JSON mode.
      jsonMode: false,
      images,
      ...(files > 0 ? { files } : {}),
      maxTokens: body.max_tokens as number,
      ...(isRecord(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive')
        ? { thinking: true }
        : {}),
    };
  },

  completionBody(reply: FakeReply) {
    const text = reply.texts[0] ?? '';
    const content: unknown[] = reply.thinking
      ? [{ type: 'thinking', thinking: reply.thinking.text, signature: reply.thinking.signature }]
      : [];
    if (reply.webSearch) content.push(WEB_SEARCH_USE, WEB_SEARCH_RESULT);
    if (text !== '' || reply.toolCalls.length === 0)
      content.push(reply.webSearch ? { type: 'text', text, citations: [WEB_SEARCH_CITATION] } : { type: 'text', text });
    content.push(...reply.toolCalls.map(toolUseBlock));
    return {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: reply.model,
      content,
      stop_reason: stopReasonOf(reply),
      stop_sequence: reply.stopSequence ?? null,
      usage: { input_tokens: reply.promptTokens, output_tokens: reply.completionTokens[0] ?? 0 },
    };
  },

  streamFrames(reply: FakeReply): SseFrame[] {
    const frames: SseFrame[] = [
      frame('message_start', {
        message: {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model: reply.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: reply.promptTokens, output_tokens: 1 },
        },
      }),
    ];
    // A ping follows the first content_block_start, as in Anthropic's documented example stream.
    const start = (index: number, block: Record<string, unknown>) => {
      frames.push(frame('content_block_start', { index, content_block: block }));
      if (index === 0) frames.push(frame('ping'));
    };
    let index = 0;
    if (reply.thinking) {
      start(index, { type: 'thinking', thinking: '', signature: '' });
      for (const piece of streamPieces(reply.thinking.text))
        frames.push(frame('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } }));
      frames.push(
        frame('content_block_delta', {
          index,
          delta: { type: 'signature_delta', signature: reply.thinking.signature },
        }),
      );
      frames.push(frame('content_block_stop', { index }));
      index += 1;
    }
    if (reply.webSearch) {
      start(index, { ...WEB_SEARCH_USE, input: {} });
      frames.push(
        frame('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(WEB_SEARCH_USE.input) },
        }),
        frame('content_block_stop', { index }),
      );
      index += 1;
      start(index, WEB_SEARCH_RESULT);
      frames.push(frame('content_block_stop', { index }));
      index += 1;
    }
    const text = reply.texts[0] ?? '';
    if (text !== '' || reply.toolCalls.length === 0) {
      start(index, reply.webSearch ? { type: 'text', text: '', citations: [] } : { type: 'text', text: '' });
      if (reply.webSearch)
        frames.push(
          frame('content_block_delta', { index, delta: { type: 'citations_delta', citation: WEB_SEARCH_CITATION } }),
        );
      for (const piece of streamPieces(text)) {
        frames.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text: piece } }));
      }
      frames.push(frame('content_block_stop', { index }));
      index += 1;
    }
    for (const call of reply.toolCalls) {
      start(index, { type: 'tool_use', id: call.id, name: call.name, input: {} });
      for (const fragment of jsonFragments(JSON.stringify(callInput(call)))) {
        frames.push(
          frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: fragment } }),
        );
      }
      frames.push(frame('content_block_stop', { index }));
      index += 1;
    }
    frames.push(
      frame('message_delta', {
        delta: { stop_reason: stopReasonOf(reply), stop_sequence: reply.stopSequence ?? null },
        usage: { output_tokens: reply.completionTokens[0] ?? 0 },
      }),
      frame('message_stop'),
    );
    return frames;
  },
};
