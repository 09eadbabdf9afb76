import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { usageOf } from '../../chat/token-usage.ts';
import type { FinishReason, ToolCall, Usage } from '../../chat/types.ts';

/**
 * The parts of Gemini's `GenerateContentResponse` that both the non-streamed
 * parser and the stream decoder read (each `alt=sse` event is one whole
 * `GenerateContentResponse`). Only the fields the gateway relies on are checked.
 */

/**
 * Finish reasons meaning the output was withheld or cut by a filter. LANGUAGE
 * (unsupported language) is a refusal to answer rather than a natural stop, so
 * it is reported the same way.
 */
const CONTENT_FILTER_REASONS: ReadonlySet<string> = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * Maps a Gemini `finishReason`. Gemini ends a turn that calls functions with
 * STOP; the callers turn that into `tool_calls` when the candidate holds
 * calls (see {@link finalFinishReason}). The failed-call reasons
 * (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL...) map to `stop`, not
 * `tool_calls`: such a reply carries no call for the client to run. OTHER and
 * unknown values also map to `stop`.
 */
export function mapGeminiFinishReason(reason: string): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (CONTENT_FILTER_REASONS.has(reason)) return 'content_filter';
  return 'stop';
}

/** The proto default, "unused": a candidate carrying it has not finished. */
const UNSPECIFIED_FINISH_REASON = 'FINISH_REASON_UNSPECIFIED';

/** The candidate's finish reason, or undefined while it is still generating. */
export function finishReasonOf(candidate: GeminiCandidate): FinishReason | undefined {
  const reason = candidate.finishReason;
  if (reason === undefined || reason === null || reason === UNSPECIFIED_FINISH_REASON) return undefined;
  return mapGeminiFinishReason(reason);
}

/** `Part.functionCall`: `args` is a JSON object (absent for a call without arguments); `id` is not always sent. */
const functionCallSchema = z.object({
  id: z.string().nullish(),
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).nullish(),
});

const partSchema = z.object({
  text: z.string().nullish(),
  // Thinking models may return their thoughts as parts flagged `thought`.
  thought: z.boolean().nullish(),
  functionCall: functionCallSchema.nullish(),
});

const candidateSchema = z.object({
  content: z.object({ parts: z.array(partSchema).nullish() }).nullish(),
  finishReason: z.string().nullish(),
  // Often left out for candidate 0, see candidateIndices().
  index: z.number().int().nonnegative().nullish(),
});

export type GeminiCandidate = z.infer<typeof candidateSchema>;

const usageMetadataSchema = z.object({
  promptTokenCount: z.number().nullish(),
  candidatesTokenCount: z.number().nullish(),
  thoughtsTokenCount: z.number().nullish(),
  // Part of promptTokenCount: the prompt tokens read from a cached content (explicit or implicit caching).
  cachedContentTokenCount: z.number().nullish(),
  totalTokenCount: z.number().nullish(),
});

export const generateContentResponseSchema = z.object({
  candidates: z.array(candidateSchema).nullish(),
  usageMetadata: usageMetadataSchema.nullish(),
  // Set, with no candidates, when the prompt itself was blocked.
  promptFeedback: z.object({ blockReason: z.string().nullish() }).nullish(),
});

export type GenerateContentResponse = z.infer<typeof generateContentResponseSchema>;

/**
 * The choice index of each candidate of one response. A missing `index` is 0
 * (proto3 JSON leaves out zero values); should that make two candidates of
 * one response collide, their positions are used instead.
 */
export function candidateIndices(candidates: readonly GeminiCandidate[]): number[] {
  const indices = candidates.map((candidate) => candidate.index ?? 0);
  return new Set(indices).size === indices.length ? indices : candidates.map((_, position) => position);
}

/** The visible text of a candidate: its non-thought text parts, concatenated. */
export function candidateText(candidate: GeminiCandidate): string {
  let text = '';
  for (const part of candidate.content?.parts ?? []) {
    if (part.thought === true || typeof part.text !== 'string') continue;
    text += part.text;
  }
  return text;
}

/** The text of the candidate's thought parts (thought summaries, sent with `includeThoughts`). */
export function candidateThoughts(candidate: GeminiCandidate): string {
  let text = '';
  for (const part of candidate.content?.parts ?? [])
    if (part.thought === true && typeof part.text === 'string') text += part.text;
  return text;
}

/** An id for a call Gemini sent without one, shaped like OpenAI's (`call_` and 24 characters). */
function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/**
 * The function calls of a candidate, in order, as OpenAI tool calls. Gemini
 * sends each call whole (never split across stream events), with its
 * arguments as an object: they become JSON text. The call's own `id` is kept
 * when Gemini sends one.
 */
export function candidateToolCalls(candidate: GeminiCandidate): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    const call = part.functionCall;
    if (!call) continue;
    calls.push({
      id: call.id ?? newToolCallId(),
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
    });
  }
  return calls;
}

/** A finished candidate's reason, `tool_calls` when it called functions and otherwise stopped normally. */
export function finalFinishReason(reason: FinishReason, calledTools: boolean): FinishReason {
  return reason === 'stop' && calledTools ? 'tool_calls' : reason;
}

/**
 * OpenAI-style usage. Thinking tokens count as completion tokens and are its
 * reasoning detail, as OpenAI counts reasoning tokens; cached content tokens
 * are already part of `promptTokenCount` and are its cached detail.
 * `candidatesTokenCount` is absent when nothing was generated (and on early
 * stream chunks). The total is recomputed so that prompt + completion = total
 * always holds for the client.
 */
export function toUsage(metadata: GenerateContentResponse['usageMetadata']): Usage {
  const prompt = metadata?.promptTokenCount ?? 0;
  const completion = (metadata?.candidatesTokenCount ?? 0) + (metadata?.thoughtsTokenCount ?? 0);
  return usageOf({
    prompt,
    completion,
    cachedRead: metadata?.cachedContentTokenCount ?? undefined,
    reasoning: metadata?.thoughtsTokenCount ?? undefined,
  });
}

/** True when the prompt was blocked: a block reason and no candidates. */
export function isPromptBlocked(response: GenerateContentResponse): boolean {
  return (response.candidates ?? []).length === 0 && typeof response.promptFeedback?.blockReason === 'string';
}

/** Google's error envelope `{error: {code, message, status}}`. */
export const geminiErrorSchema = z.object({
  error: z.object({ message: z.string(), status: z.string().nullish() }),
});
