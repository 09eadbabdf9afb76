import { z } from 'zod';
import {
  toolResultText,
  type ChatMessage,
  type ChatRequest,
  type ContentPart,
  type ReplyMessage,
} from '../../chat/types.ts';
import { anthropicOnlyParams } from '../inert-params.ts';
import {
  UpstreamProtocolError,
  type ParsedChoice,
  type ParsedCompletion,
  type ProviderAdapter,
  type ProviderEndpoint,
  type UpstreamHttpRequest,
} from '../types.ts';
import { OpenAiStreamDecoder } from './stream-decoder.ts';
import {
  mapOpenAiFinishReason,
  openAiErrorMessage,
  openAiErrorSchema,
  openAiUsage,
  openAiUsageSchema,
  toolCallSchema,
  toToolCall,
} from './wire.ts';

/**
 * Adapter for the OpenAI chat-completions wire format (provider_a). The
 * gateway's own types are OpenAI-shaped, so this is close to a pass-through;
 * what it adds is a strict check of the upstream's replies.
 */

/**
 * A message as sent upstream: the canonical message is already OpenAI-shaped;
 * only `developer` changes. It exists for the newer reasoning models, and the
 * API maps `system` to it there; `system` is accepted by every model,
 * `developer` is not. Anthropic's `cache_control` marks on text parts are
 * not OpenAI's (it caches prefixes by itself), so they are left out.
 */
function toOpenAiMessage(message: ChatMessage): object {
  switch (message.role) {
    case 'system':
    case 'developer': {
      const { cache_control: _cache, anthropic: _fields, ...rest } = message;
      return typeof rest.content === 'string'
        ? { ...rest, role: 'system' as const }
        : { ...rest, role: 'system' as const, content: rest.content.flatMap(toOpenAiPart) };
    }
    case 'user':
      return typeof message.content === 'string'
        ? message
        : { ...message, content: message.content.flatMap(toOpenAiPart) };
    case 'assistant': {
      // Reasoning blocks are another provider's signed record; OpenAI has no field for them, nor for a Messages
      // client's unmodelled blocks and fields (which reach here only when dropped with drop_unsupported_params).
      const { thinking: _thinking, anthropic_blocks: _blocks, ...rest } = message;
      if (rest.tool_calls?.some((call) => call.anthropic !== undefined))
        rest.tool_calls = rest.tool_calls.map(({ anthropic: _fields, ...call }) => call);
      return rest;
    }
    case 'tool': {
      // The format has no error flag: the result's text says what went wrong (docs/messages.md).
      const { is_error: _error, cache_control: _cache, anthropic: _fields, ...rest } = message;
      return { ...rest, content: toolResultText(rest.content) };
    }
  }
}

/**
 * The messages as sent upstream. A `tool` message holds text only, so the
 * images and documents of tool results follow the results of their turn as
 * one user message, in order.
 */
function toOpenAiMessages(messages: readonly ChatMessage[]): object[] {
  const out: object[] = [];
  let attachments: object[] = [];
  for (const message of messages) {
    if (message.role !== 'tool' && attachments.length > 0) {
      out.push({ role: 'user', content: attachments });
      attachments = [];
    }
    out.push(toOpenAiMessage(message));
    if (message.role === 'tool' && typeof message.content !== 'string')
      for (const part of message.content) if (part.type !== 'text') attachments.push(...toOpenAiPart(part));
  }
  if (attachments.length > 0) out.push({ role: 'user', content: attachments });
  return out;
}

/**
 * Prompt-cache marks are Anthropic's (OpenAI caches prefixes by itself); a PDF
 * is a `file` part with its bytes as a data URL, a text document a text part.
 */
function toOpenAiPart(part: ContentPart): object[] {
  if (part.type === 'anthropic_block') return [];
  if (part.type === 'text') return [{ type: 'text', text: part.text }];
  if (part.type === 'image_url') return [{ type: 'image_url', image_url: part.image_url }];
  if (part.type === 'file') return [part];
  const { source, title } = part;
  if (source.type === 'text')
    return [{ type: 'text', text: title === undefined ? source.data : `${title}\n\n${source.data}` }];
  if (source.type === 'base64')
    return [
      {
        type: 'file',
        file: { filename: title ?? 'document.pdf', file_data: `data:application/pdf;base64,${source.data}` },
      },
    ];
  // validate() refuses document URLs before this is reached.
  throw new Error('document URL reached the OpenAI adapter');
}

/** Request fields forwarded under the same name when present. */
const FORWARDED = [
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'logprobs',
  'top_logprobs',
  'user',
  'metadata',
  'store',
  'reasoning_effort',
  'prompt_cache_key',
  'prompt_cache_retention',
] as const satisfies ReadonlyArray<keyof ChatRequest>;

/** Builds the JSON body; exported for tests. */
export function buildOpenAiBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: req.model,
    messages: toOpenAiMessages(req.messages),
  };
  if (req.n !== 1) body.n = req.n;
  for (const field of FORWARDED) if (req[field] !== undefined) body[field] = req[field];
  // A Messages tool's Anthropic fields have no place here.
  if (req.tools?.some((tool) => tool.anthropic !== undefined))
    body.tools = req.tools.map(({ type, function: fn }) => ({ type, function: fn }));
  if (req.stop !== undefined && req.stop.length > 0) body.stop = req.stop;
  // `service_tier` is deliberately not forwarded: for the gateway it is a
  // queuing hint, and upstream `flex` is only accepted by some models.
  if (stream) {
    body.stream = true;
    // Always asked for, whatever the client wanted: the gateway needs the
    // token counts for metering even when the client does not.
    body.stream_options = { include_usage: true };
  }
  return body;
}

const completionSchema = z.object({
  choices: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      message: z.object({
        content: z.string().nullish(),
        refusal: z.string().nullish(),
        tool_calls: z.array(toolCallSchema).nullish(),
        reasoning_content: z.string().nullish(),
      }),
      finish_reason: z.string().nullish(),
      logprobs: z.unknown().optional(),
    }),
  ),
  usage: openAiUsageSchema,
});

/** The OpenAI chat-completions adapter (stateless singleton). */
export const openAiAdapter: ProviderAdapter = {
  format: 'openai',
  /** The public API; the path `/chat/completions` is appended to it. */
  defaultBaseUrl: 'https://api.openai.com/v1',
  supportsMultipleChoices: true,

  validate(req: ChatRequest): string | undefined {
    // Everything the chat schema accepts can be expressed; documents come from the Messages door.
    for (const message of req.messages) {
      if ((message.role !== 'user' && message.role !== 'tool') || typeof message.content === 'string') continue;
      if (message.content.some((part) => part.type === 'document' && part.source.type === 'url')) {
        return 'provider_a cannot fetch a document by URL; send the PDF bytes (a base64 document source) instead.';
      }
    }
    return undefined;
  },

  /**
   * `top_k`, extended `thinking` and Anthropic's `effort` have no
   * counterpart in chat completions (`reasoning_effort` is another control,
   * and a model that cannot reason would reject it). Adaptive or disabled
   * thinking and effort are inert (src/providers/inert-params.ts): dropped
   * and named rather than refused. Anthropic's automatic caching too: OpenAI
   * caches prefixes by itself.
   */
  unsupportedParams(req: ChatRequest): Array<keyof ChatRequest> {
    const unsupported: Array<keyof ChatRequest> = [];
    if (req.top_k !== undefined) unsupported.push('top_k');
    if (req.thinking !== undefined) unsupported.push('thinking');
    if (req.effort !== undefined) unsupported.push('effort');
    if (req.cache_control !== undefined) unsupported.push('cache_control');
    unsupported.push(...anthropicOnlyParams(req));
    return unsupported;
  },

  buildRequest(req: ChatRequest, endpoint: ProviderEndpoint, options: { stream: boolean }): UpstreamHttpRequest {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      authorization: `Bearer ${endpoint.apiKey}`,
      accept: options.stream ? 'text/event-stream' : 'application/json',
    };
    return {
      url: `${endpoint.baseUrl}/chat/completions`,
      headers,
      body: JSON.stringify(buildOpenAiBody(req, options.stream)),
    };
  },

  parseResponse(body: unknown): ParsedCompletion {
    const parsed = completionSchema.safeParse(body);
    if (!parsed.success) {
      throw new UpstreamProtocolError(
        `Unexpected chat completion body from the OpenAI upstream: ${parsed.error.message}`,
      );
    }
    const { choices, usage } = parsed.data;
    return {
      choices: choices.map((choice) => {
        const message: ReplyMessage = { role: 'assistant', content: choice.message.content ?? null };
        if (choice.message.refusal != null) message.refusal = choice.message.refusal;
        if (choice.message.tool_calls != null && choice.message.tool_calls.length > 0)
          message.tool_calls = choice.message.tool_calls.map(toToolCall);
        // OpenAI-compatible reasoning servers' reasoning: an unsigned block, which no upstream is given back.
        if (choice.message.reasoning_content)
          message.thinking = [{ type: 'thinking', thinking: choice.message.reasoning_content, signature: '' }];
        // A reply that is neither text, refusal nor calls still reads as text for the client.
        if (message.content === null && message.refusal === undefined && message.tool_calls === undefined)
          message.content = '';
        const parsedChoice: ParsedChoice = {
          index: choice.index,
          message,
          finish_reason: mapOpenAiFinishReason(choice.finish_reason),
        };
        if (choice.logprobs != null) parsedChoice.logprobs = choice.logprobs;
        return parsedChoice;
      }),
      usage: openAiUsage(usage),
    };
  },

  createStreamDecoder() {
    return new OpenAiStreamDecoder();
  },

  extractErrorMessage(body: unknown): string | undefined {
    const parsed = openAiErrorSchema.safeParse(body);
    return parsed.success ? openAiErrorMessage(parsed.data.error) : undefined;
  },
};
