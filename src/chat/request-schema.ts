import { z } from 'zod';
import type { ChatMessage, ChatRequest } from './types.ts';

/**
 * The zod schema of `POST /v1/chat/completions` bodies, with the bounds of
 * DECISIONS.md. It is the single source for validation and for the OpenAPI
 * document. Unknown fields are rejected (never silently dropped): a client
 * that sends `tools` must learn that this gateway does not forward them.
 */

const textPart = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
});

const content = z.union([z.string(), z.array(textPart).min(1)]);

const message = z.strictObject({
  role: z.enum(['system', 'developer', 'user', 'assistant']),
  content,
  name: z.string().min(1).max(64).optional(),
});

export const MAX_MESSAGES = 1000;
export const MAX_CHOICES = 8;
export const MAX_STOP_SEQUENCES = 4;

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
    stream_options: z.strictObject({ include_usage: z.boolean().optional() }).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(MAX_STOP_SEQUENCES)]).nullish(),
    seed: z.int().nullish(),
    presence_penalty: z.number().min(-2).max(2).nullish(),
    frequency_penalty: z.number().min(-2).max(2).nullish(),
    user: z.string().max(256).optional(),
    service_tier: z.enum(['auto', 'default', 'flex', 'priority']).nullish(),
  })
  .meta({ id: 'ChatCompletionRequest' });

export type ChatCompletionRequestBody = z.infer<typeof chatCompletionRequestSchema>;

function flattenContent(value: z.infer<typeof content>): string {
  return typeof value === 'string' ? value : value.map((part) => part.text).join('\n');
}

/** Turns a validated body into the normalized {@link ChatRequest}. */
export function normalizeChatRequest(body: ChatCompletionRequestBody): ChatRequest {
  const messages: ChatMessage[] = body.messages.map((m) => {
    const out: ChatMessage = { role: m.role, content: flattenContent(m.content) };
    if (m.name !== undefined) out.name = m.name;
    return out;
  });
  const req: ChatRequest = {
    model: body.model,
    messages,
    n: body.n ?? 1,
    stream: body.stream ?? false,
    include_usage: body.stream_options?.include_usage ?? false,
  };
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null) req.max_tokens = maxTokens;
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
      const message = issue.code === 'unrecognized_keys' ? `unrecognized field(s) ${issue.keys.slice(0, 3).map((k) => `'${clip(k, MAX_QUOTED)}'`).join(', ')}` : clip(issue.message, 200);
      return `${path}: ${message}`;
    })
    .join('; ');
}
