import type { ChatRequest } from '../../chat/types.ts';
import { NO_TURNS_MESSAGE, toAlternatingTurns } from '../conversation-turns.ts';
import {
  UpstreamProtocolError,
  type ParsedCompletion,
  type ProviderAdapter,
  type ProviderEndpoint,
  type UpstreamHttpRequest,
} from '../types.ts';
import { AnthropicStreamDecoder } from './stream-decoder.ts';
import { anthropicErrorSchema, mapAnthropicStopReason, messageSchema, promptTokensOf, toUsage } from './wire.ts';

/**
 * Adapter for the Anthropic Messages API (provider_c).
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

/** Builds the JSON body; exported for tests. */
export function buildAnthropicBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const { system, turns } = toAlternatingTurns(req.messages);
  const messages = turns.map((turn) => ({ role: turn.role, content: turn.text }));
  const last = messages.at(-1);
  // A trailing assistant turn is a prefill, and the API rejects a prefill
  // that ends in whitespace.
  if (last?.role === 'assistant') last.content = last.content.trimEnd();

  const body: Record<string, unknown> = {
    model: req.model,
    max_tokens: req.max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages,
  };
  if (system !== undefined) body.system = system;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  // Anthropic documents only non-whitespace stop sequences as working.
  const stop = req.stop?.filter((sequence) => sequence.trim() !== '') ?? [];
  if (stop.length > 0) body.stop_sequences = stop;
  // seed, presence_penalty and frequency_penalty have no Messages API
  // counterpart; they are dropped, as Anthropic's own OpenAI-compatible
  // endpoint does, rather than failing requests written for OpenAI.
  if (stream) body.stream = true;
  return body;
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
    if (toAlternatingTurns(req.messages).turns.length === 0) return NO_TURNS_MESSAGE;
    return undefined;
  },

  buildRequest(req: ChatRequest, endpoint: ProviderEndpoint, options: { stream: boolean }): UpstreamHttpRequest {
    return {
      url: `${endpoint.baseUrl}/v1/messages`,
      headers: {
        'content-type': 'application/json',
        'x-api-key': endpoint.apiKey,
        'anthropic-version': ANTHROPIC_VERSION,
        accept: options.stream ? 'text/event-stream' : 'application/json',
      },
      body: JSON.stringify(buildAnthropicBody(req, options.stream)),
    };
  },

  parseResponse(body: unknown): ParsedCompletion {
    const parsed = messageSchema.safeParse(body);
    if (!parsed.success) {
      throw new UpstreamProtocolError(`Unexpected message body from the Anthropic upstream: ${parsed.error.message}`);
    }
    const { content, stop_reason: stopReason, usage } = parsed.data;
    let text = '';
    for (const block of content) if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    return {
      choices: [{ index: 0, content: text, finish_reason: mapAnthropicStopReason(stopReason) }],
      usage: toUsage(promptTokensOf(usage) ?? 0, usage.output_tokens),
    };
  },

  createStreamDecoder() {
    return new AnthropicStreamDecoder();
  },

  extractErrorMessage(body: unknown): string | undefined {
    const parsed = anthropicErrorSchema.safeParse(body);
    return parsed.success ? parsed.data.error.message : undefined;
  },
};
