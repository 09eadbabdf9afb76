import {
  maxOutputTokens,
  type ChatRequest,
  type ReplyMessage,
  type ThinkingBlock,
  type ToolCall,
} from '../../chat/types.ts';
import { NO_TURNS_MESSAGE, toAlternatingTurns } from '../conversation-turns.ts';
import {
  UpstreamProtocolError,
  type ParsedCompletion,
  type ProviderAdapter,
  type ProviderEndpoint,
  type UpstreamHttpRequest,
} from '../types.ts';
import { breakpointProblem, conversationProblem, toAnthropicMessages, toAnthropicSystem } from './messages.ts';
import { AnthropicStreamDecoder } from './stream-decoder.ts';
import {
  JSON_MODE_TOOL,
  structuredOutputFields,
  structuredOutputOf,
  structuredOutputProblem,
} from './structured-output.ts';
import { toolFields, toolsProblem } from './tools.ts';
import {
  anthropicErrorSchema,
  cacheCountsOf,
  inputJson,
  mapAnthropicStopReason,
  messageSchema,
  promptTokensOf,
  toolUseOf,
  toUsage,
} from './wire.ts';

/**
 * Adapter for the Anthropic Messages API (provider_c). Messages and tools are
 * translated in `messages.ts` and `tools.ts`, `response_format` in
 * `structured-output.ts` (which records how and why).
 */

/** The API version this adapter speaks, sent as `anthropic-version`. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * `max_tokens` sent when the client gave none: the Messages API requires it,
 * and 4096 fits every current model's output limit.
 */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** Anthropic's temperature range is 0..1, OpenAI's 0..2. */
const MAX_TEMPERATURE = 1;

/**
 * Request fields the Messages API has no counterpart for (its `Metadata`
 * holds only `user_id`, which `user` maps to; there is no seed, penalty or
 * logprob parameter, and nothing is stored). `reasoning_effort` is not mapped
 * to extended thinking: a thinking budget is not the same control, changes the
 * reply (thinking blocks, temperature restrictions) and needs `max_tokens`
 * above the budget. `service_tier` is the gateway's queuing hint and `n` the
 * executor's fan-out, so neither is listed.
 */
const UNSUPPORTED = [
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'logprobs',
  'top_logprobs',
  'metadata',
  'reasoning_effort',
  // OpenAI's prompt-cache controls: Anthropic's are `cache_control` marks.
  'prompt_cache_key',
  'prompt_cache_retention',
] as const satisfies ReadonlyArray<keyof ChatRequest>;

/** Builds the JSON body; exported for tests. */
export function buildAnthropicBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const conversation = toAlternatingTurns(req.messages, { anthropicBlocks: true });
  // Fields the gateway does not model go first and unchanged; the ones it builds are its own.
  const body: Record<string, unknown> = {
    ...req.extra_body,
    model: req.model,
    max_tokens: maxOutputTokens(req) ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages: toAnthropicMessages(conversation.turns),
  };
  const system = toAnthropicSystem(conversation);
  if (system !== undefined) body.system = system;
  // Automatic caching: the API places the breakpoint on the last cacheable block itself.
  if (req.cache_control !== undefined) body.cache_control = req.cache_control;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined) body.top_k = req.top_k;
  if (req.thinking !== undefined) body.thinking = req.thinking;
  // Anthropic documents only non-whitespace stop sequences as working.
  const stop = req.stop?.filter((sequence) => sequence.trim() !== '') ?? [];
  if (stop.length > 0) body.stop_sequences = stop;
  Object.assign(body, toolFields(req));
  const output = structuredOutputOf(req);
  if (output !== undefined) Object.assign(body, structuredOutputFields(output));
  if (req.effort !== undefined)
    body.output_config = { ...(body.output_config as Record<string, unknown> | undefined), effort: req.effort };
  // `metadata.user_id` is the API's only metadata: an opaque end-user id, as OpenAI's `user` is.
  if (req.user !== undefined) body.metadata = { user_id: req.user };
  if (req.context_management !== undefined) body.context_management = req.context_management;
  if (stream) body.stream = true;
  return body;
}

/** The fields of each reply block type the canonical reply holds; `citations: null` says nothing. */
const MODELLED_BLOCK_FIELDS = new Map<unknown, ReadonlySet<string>>([
  ['text', new Set(['type', 'text'])],
  ['thinking', new Set(['type', 'thinking', 'signature'])],
  ['redacted_thinking', new Set(['type', 'data'])],
  ['tool_use', new Set(['type', 'id', 'name', 'input'])],
]);

/** Whether a reply block holds something the canonical reply cannot say (a server-tool block, citations...). */
function saysMore(block: Record<string, unknown>): boolean {
  const modelled = MODELLED_BLOCK_FIELDS.get(block.type);
  if (modelled === undefined) return true;
  return Object.entries(block).some(([key, value]) => !modelled.has(key) && value !== null);
}

/** The Anthropic Messages adapter (stateless singleton). */
export const anthropicAdapter: ProviderAdapter = {
  format: 'anthropic',
  /**
   * The API host without the version: the adapter appends `/v1/messages`, so
   * a configured `base_url` is a host (or proxy prefix), as in Anthropic's own
   * SDKs, and the API version lives in one place, this adapter.
   */
  defaultBaseUrl: 'https://api.anthropic.com',
  // The Messages API returns one message per call; the executor fans out.
  supportsMultipleChoices: false,

  validate(req: ChatRequest): string | undefined {
    if (req.temperature !== undefined && req.temperature > MAX_TEMPERATURE) {
      return `'temperature' must be between 0 and ${MAX_TEMPERATURE} for model '${req.model}' (got ${req.temperature}).`;
    }
    const conversation = toAlternatingTurns(req.messages, { anthropicBlocks: true });
    if (conversation.turns.length === 0) return NO_TURNS_MESSAGE;
    return (
      conversationProblem(conversation) ??
      breakpointProblem(
        conversation,
        req.tools?.filter((tool) => tool.anthropic?.cache_control !== undefined).length,
      ) ??
      toolsProblem(req) ??
      structuredOutputProblem(req)
    );
  },

  unsupportedParams(req: ChatRequest): Array<keyof ChatRequest> {
    const present: Array<keyof ChatRequest> = UNSUPPORTED.filter((key) => req[key] !== undefined);
    // `store: false` is what the Messages API does anyway.
    if (req.store === true) present.push('store');
    return present;
  },

  buildRequest(req: ChatRequest, endpoint: ProviderEndpoint, options: { stream: boolean }): UpstreamHttpRequest {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-api-key': endpoint.apiKey,
      // A Messages client's own version and betas pass unchanged: what it asked for is what the upstream reads.
      'anthropic-version': req.anthropic_version ?? ANTHROPIC_VERSION,
      accept: options.stream ? 'text/event-stream' : 'application/json',
    };
    if (req.anthropic_beta !== undefined) headers['anthropic-beta'] = req.anthropic_beta;
    return {
      url: `${endpoint.baseUrl}/v1/messages`,
      headers,
      body: JSON.stringify(buildAnthropicBody(req, options.stream)),
    };
  },

  parseResponse(body: unknown, req?: ChatRequest): ParsedCompletion {
    const parsed = messageSchema.safeParse(body);
    if (!parsed.success) {
      throw new UpstreamProtocolError(`Unexpected message body from the Anthropic upstream: ${parsed.error.message}`);
    }
    const { content, stop_reason: stopReason, stop_sequence: stopSequence, usage } = parsed.data;
    let text = '';
    const toolCalls: ToolCall[] = [];
    const thinking: ThinkingBlock[] = [];
    for (const block of content) {
      if (block.type === 'text' && typeof block.text === 'string') text += block.text;
      else if (block.type === 'thinking')
        thinking.push({ type: 'thinking', thinking: block.thinking ?? '', signature: block.signature ?? '' });
      else if (block.type === 'redacted_thinking') thinking.push({ type: 'redacted_thinking', data: block.data ?? '' });
      else if (block.type === 'tool_use') {
        const call = toolUseOf(block);
        // The JSON-mode tool's input is the answer (structured-output.ts).
        if (call.name === JSON_MODE_TOOL) text += inputJson(call.input);
        else
          toolCalls.push({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: inputJson(call.input) },
          });
      }
    }
    let finish = mapAnthropicStopReason(stopReason);
    if (finish === 'tool_calls' && toolCalls.length === 0) finish = 'stop';
    // Content is null only when the turn just calls tools, as in OpenAI replies.
    const message: ReplyMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (thinking.length > 0) message.thinking = thinking;
    if (req?.anthropic_reply_blocks === true) {
      // The parsed schema strips unknown keys; the blocks as the upstream sent them are in the body.
      const raw = (body as { content: Array<Record<string, unknown>> }).content;
      if (raw.some(saysMore)) message.anthropic_content = raw;
    }
    const choice: ParsedCompletion['choices'][number] = { index: 0, message, finish_reason: finish };
    if (stopReason === 'stop_sequence' && stopSequence != null) choice.stop_sequence = stopSequence;
    return {
      choices: [choice],
      usage: toUsage(promptTokensOf(usage) ?? 0, usage.output_tokens, cacheCountsOf(usage)),
    };
  },

  createStreamDecoder(req?: ChatRequest) {
    return new AnthropicStreamDecoder(req?.anthropic_reply_blocks === true);
  },

  extractErrorMessage(body: unknown): string | undefined {
    const parsed = anthropicErrorSchema.safeParse(body);
    return parsed.success ? parsed.data.error.message : undefined;
  },
};
