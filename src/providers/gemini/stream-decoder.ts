import { UpstreamProtocolError, type SseEvent, type StreamDecoder, type StreamEvent } from '../types.ts';
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
 * Decodes a `streamGenerateContent?alt=sse` stream, where every `data:` line
 * is a whole `GenerateContentResponse` holding the new text of each candidate.
 * Gemini sends no end marker: the stream counts as finished once every
 * candidate seen so far has reported a finish reason (candidates of a
 * multi-candidate request arrive together, so "seen so far" is all of them in
 * practice).
 */
export class GeminiStreamDecoder implements StreamDecoder {
  /** Candidate index -> whether it has reported a finish reason. */
  readonly #candidates = new Map<number, boolean>();
  #promptBlocked = false;

  get finished(): boolean {
    if (this.#promptBlocked) return true;
    if (this.#candidates.size === 0) return false;
    for (const done of this.#candidates.values()) if (!done) return false;
    return true;
  }

  push(event: SseEvent): StreamEvent[] {
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      throw new UpstreamProtocolError(`Malformed JSON in the Gemini upstream stream: ${event.data.slice(0, 200)}`);
    }
    const error = geminiErrorSchema.safeParse(json);
    if (error.success) {
      const { status, message } = error.data.error;
      return [{ kind: 'error', message: status ? `${status}: ${message}` : message }];
    }
    const parsed = generateContentResponseSchema.safeParse(json);
    if (!parsed.success) {
      throw new UpstreamProtocolError(`Unexpected event in the Gemini upstream stream: ${parsed.error.message}`);
    }
    const response = parsed.data;
    const out: StreamEvent[] = [];
    if (isPromptBlocked(response)) {
      // Same decision as the non-streamed parser: an empty, filtered choice.
      this.#promptBlocked = true;
      out.push({ kind: 'delta', choice: 0, finish_reason: 'content_filter' });
    }
    const candidates = response.candidates ?? [];
    const indices = candidateIndices(candidates);
    candidates.forEach((candidate, position) => {
      const index = indices[position] ?? position;
      const text = candidateText(candidate);
      const finishReason = finishReasonOf(candidate);
      this.#candidates.set(index, (this.#candidates.get(index) ?? false) || finishReason !== undefined);
      if (text === '' && finishReason === undefined) return;
      const delta: StreamEvent = { kind: 'delta', choice: index };
      if (text !== '') delta.content = text;
      if (finishReason !== undefined) delta.finish_reason = finishReason;
      out.push(delta);
    });
    // Every chunk carries the usage so far; the last one is the total.
    if (response.usageMetadata) out.push({ kind: 'usage', usage: toUsage(response.usageMetadata) });
    return out;
  }
}
