import { z } from 'zod';
import type { FinishReason, Usage } from '../../chat/types.ts';

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
 * Maps a Gemini `finishReason`. The tool-call reasons (MALFORMED_FUNCTION_CALL,
 * UNEXPECTED_TOOL_CALL...) map to `stop`, not `tool_calls`: the gateway sends
 * no tools and the reply carries no call for the client to run. OTHER and
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

const partSchema = z.object({
  text: z.string().nullish(),
  // Thinking models may return their thoughts as parts flagged `thought`.
  thought: z.boolean().nullish(),
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

/**
 * OpenAI-style usage. Thinking tokens count as completion tokens, as OpenAI
 * counts reasoning tokens; `candidatesTokenCount` is absent when nothing was
 * generated (and on early stream chunks). The total is recomputed so that
 * prompt + completion = total always holds for the client.
 */
export function toUsage(metadata: GenerateContentResponse['usageMetadata']): Usage {
  const prompt = metadata?.promptTokenCount ?? 0;
  const completion = (metadata?.candidatesTokenCount ?? 0) + (metadata?.thoughtsTokenCount ?? 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** True when the prompt was blocked: a block reason and no candidates. */
export function isPromptBlocked(response: GenerateContentResponse): boolean {
  return (response.candidates ?? []).length === 0 && typeof response.promptFeedback?.blockReason === 'string';
}

/** Google's error envelope `{error: {code, message, status}}`. */
export const geminiErrorSchema = z.object({
  error: z.object({ message: z.string(), status: z.string().nullish() }),
});
