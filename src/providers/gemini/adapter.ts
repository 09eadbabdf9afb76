import type { ChatRequest } from '../../chat/types.ts';
import { NO_TURNS_MESSAGE, toAlternatingTurns } from '../conversation-turns.ts';
import {
  UpstreamProtocolError,
  type ParsedChoice,
  type ParsedCompletion,
  type ProviderAdapter,
  type ProviderEndpoint,
  type UpstreamHttpRequest,
} from '../types.ts';
import { GeminiStreamDecoder } from './stream-decoder.ts';
import {
  candidateIndices,
  candidateText,
  finishReasonOf,
  geminiErrorSchema,
  generateContentResponseSchema,
  isPromptBlocked,
  toUsage,
} from './wire.ts';

/**
 * Adapter for Google Gemini `generateContent` / `streamGenerateContent`
 * (provider_b).
 */

interface GeminiContent {
  role: 'user' | 'model';
  parts: Array<{ text: string }>;
}

/** Builds the JSON body; exported for tests. */
export function buildGeminiBody(req: ChatRequest): Record<string, unknown> {
  const { system, turns } = toAlternatingTurns(req.messages);
  const contents: GeminiContent[] = turns.map((turn) => ({
    role: turn.role === 'assistant' ? 'model' : 'user',
    parts: [{ text: turn.text }],
  }));
  const body: Record<string, unknown> = { contents };
  if (system !== undefined) body.systemInstruction = { parts: [{ text: system }] };

  const config: Record<string, unknown> = {};
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.top_p !== undefined) config.topP = req.top_p;
  if (req.max_tokens !== undefined) config.maxOutputTokens = req.max_tokens;
  if (req.n !== 1) config.candidateCount = req.n;
  if (req.stop !== undefined && req.stop.length > 0) config.stopSequences = req.stop;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.presence_penalty !== undefined) config.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) config.frequencyPenalty = req.frequency_penalty;
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

/** The Gemini adapter (stateless singleton). */
export const geminiAdapter: ProviderAdapter = {
  format: 'gemini',
  /** The public API; `/models/{model}:generateContent` is appended to it. */
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  supportsMultipleChoices: true,

  validate(req: ChatRequest): string | undefined {
    // Gemini takes the instructions apart and needs at least one turn.
    if (toAlternatingTurns(req.messages).turns.length === 0) return NO_TURNS_MESSAGE;
    return undefined;
  },

  buildRequest(req: ChatRequest, endpoint: ProviderEndpoint, options: { stream: boolean }): UpstreamHttpRequest {
    const model = encodeURIComponent(req.model);
    // The key goes in a header, never in the URL, so it cannot leak into logs of URLs.
    const url = options.stream
      ? `${endpoint.baseUrl}/models/${model}:streamGenerateContent?alt=sse`
      : `${endpoint.baseUrl}/models/${model}:generateContent`;
    return {
      url,
      headers: {
        'content-type': 'application/json',
        'x-goog-api-key': endpoint.apiKey,
        accept: options.stream ? 'text/event-stream' : 'application/json',
      },
      body: JSON.stringify(buildGeminiBody(req)),
    };
  },

  parseResponse(body: unknown): ParsedCompletion {
    const parsed = generateContentResponseSchema.safeParse(body);
    if (!parsed.success) {
      throw new UpstreamProtocolError(`Unexpected generateContent body from the Gemini upstream: ${parsed.error.message}`);
    }
    const response = parsed.data;
    const usage = toUsage(response.usageMetadata);
    if (isPromptBlocked(response)) {
      // A blocked prompt is answered, not failed: one empty choice flagged
      // `content_filter`, the way OpenAI reports filtered output. The client
      // learns why without the gateway counting an upstream failure.
      return { choices: [{ index: 0, content: '', finish_reason: 'content_filter' }], usage };
    }
    const candidates = response.candidates ?? [];
    if (candidates.length === 0) {
      throw new UpstreamProtocolError('The Gemini upstream returned no candidates and no block reason.');
    }
    const indices = candidateIndices(candidates);
    const choices: ParsedChoice[] = candidates.map((candidate, position) => ({
      index: indices[position] ?? position,
      content: candidateText(candidate),
      finish_reason: finishReasonOf(candidate) ?? 'stop',
    }));
    choices.sort((a, b) => a.index - b.index);
    return { choices, usage };
  },

  createStreamDecoder() {
    return new GeminiStreamDecoder();
  },

  extractErrorMessage(body: unknown): string | undefined {
    // Errors of the array-framed stream (`alt=json`) come wrapped in a list.
    const candidate = Array.isArray(body) ? body[0] : body;
    const parsed = geminiErrorSchema.safeParse(candidate);
    return parsed.success ? parsed.data.error.message : undefined;
  },
};
