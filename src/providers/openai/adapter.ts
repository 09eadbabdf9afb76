import { z } from 'zod';
import type { ChatMessage, ChatRequest } from '../../chat/types.ts';
import {
  UpstreamProtocolError,
  type ParsedCompletion,
  type ProviderAdapter,
  type ProviderEndpoint,
  type UpstreamHttpRequest,
} from '../types.ts';
import { OpenAiStreamDecoder } from './stream-decoder.ts';
import { mapOpenAiFinishReason, openAiErrorMessage, openAiErrorSchema, openAiUsageSchema } from './wire.ts';

/**
 * Adapter for the OpenAI chat-completions wire format (provider_a). The
 * gateway's own types are OpenAI-shaped, so this is close to a pass-through;
 * what it adds is a strict check of the upstream's replies.
 */

/** One message as sent upstream. */
interface OpenAiMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  name?: string;
}

function toOpenAiMessage(message: ChatMessage): OpenAiMessage {
  // `developer` only exists for the newer reasoning models, and the API maps
  // `system` to it there; `system` is accepted by every model, `developer` is not.
  const role = message.role === 'developer' ? 'system' : message.role;
  const out: OpenAiMessage = { role, content: message.content };
  if (message.name !== undefined) out.name = message.name;
  return out;
}

/** Builds the JSON body; exported for tests. */
export function buildOpenAiBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: req.model,
    messages: req.messages.map(toOpenAiMessage),
  };
  if (req.n !== 1) body.n = req.n;
  if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.stop !== undefined && req.stop.length > 0) body.stop = req.stop;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.presence_penalty !== undefined) body.presence_penalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) body.frequency_penalty = req.frequency_penalty;
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
      }),
      finish_reason: z.string().nullish(),
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

  validate(): string | undefined {
    // The gateway's request schema is the OpenAI one: everything it accepts
    // can be expressed.
    return undefined;
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
      throw new UpstreamProtocolError(`Unexpected chat completion body from the OpenAI upstream: ${parsed.error.message}`);
    }
    const { choices, usage } = parsed.data;
    return {
      choices: choices.map((choice) => {
        const refused = choice.message.content == null && typeof choice.message.refusal === 'string';
        return {
          index: choice.index,
          // A refusal comes as `refusal` with a null `content`; the client
          // still gets the text, flagged as filtered.
          content: choice.message.content ?? choice.message.refusal ?? '',
          finish_reason: refused ? 'content_filter' : mapOpenAiFinishReason(choice.finish_reason),
        };
      }),
      usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
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
