import {
  UpstreamProtocolError,
  type SseEvent,
  type StreamDecoder,
  type StreamDelta,
  type StreamEvent,
} from '../types.ts';
import {
  candidateIndices,
  candidateText,
  candidateThoughts,
  candidateToolCalls,
  finalFinishReason,
  finishReasonOf,
  geminiErrorSchema,
  generateContentResponseSchema,
  isPromptBlocked,
  toUsage,
} from './wire.ts';
import { hasMember, parseEventJson } from '../stream-event-json.ts';

/**
 * Decodes a `streamGenerateContent?alt=sse` stream, where every `data:` line
 * is a whole `GenerateContentResponse` holding the new text and function
 * calls of each candidate. Gemini sends each function call whole in one
 * event; it becomes one OpenAI-style tool-call delta carrying id, name and
 * all the arguments, numbered per candidate across the stream.
 * Gemini sends no end marker: the stream counts as finished once every
 * candidate seen so far has reported a finish reason (candidates of a
 * multi-candidate request arrive together, so "seen so far" is all of them in
 * practice).
 */

interface CandidateState {
  finished: boolean;
  /** Function calls seen so far: the index of the next one. */
  calls: number;
}

export class GeminiStreamDecoder implements StreamDecoder {
  readonly #candidates = new Map<number, CandidateState>();
  /** Events pushed so far: a protocol error names the event by number, never by its bytes. */
  #events = 0;
  #promptBlocked = false;

  get finished(): boolean {
    if (this.#promptBlocked) return true;
    if (this.#candidates.size === 0) return false;
    for (const state of this.#candidates.values()) if (!state.finished) return false;
    return true;
  }

  push(event: SseEvent): StreamEvent[] {
    this.#events++;
    const json = parseEventJson(event.data, this.#events, 'Gemini');
    const error = hasMember(json, 'error') ? geminiErrorSchema.safeParse(json) : undefined;
    if (error?.success) {
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
      const state = this.#candidates.get(index) ?? { finished: false, calls: 0 };
      this.#candidates.set(index, state);
      const delta: StreamDelta = { kind: 'delta', choice: index };
      const thoughts = candidateThoughts(candidate);
      if (thoughts !== '') delta.thinking = { index: 0, type: 'thinking', thinking: thoughts };
      const text = candidateText(candidate);
      if (text !== '') delta.content = text;
      const calls = candidateToolCalls(candidate);
      if (calls.length > 0) {
        delta.tool_calls = calls.map((call, k) => ({
          index: state.calls + k,
          id: call.id,
          type: 'function',
          function: call.function,
        }));
        state.calls += calls.length;
      }
      const finishReason = finishReasonOf(candidate);
      if (finishReason !== undefined) {
        state.finished = true;
        delta.finish_reason = finalFinishReason(finishReason, state.calls > 0);
      }
      if (
        delta.thinking !== undefined ||
        delta.content !== undefined ||
        delta.tool_calls !== undefined ||
        delta.finish_reason !== undefined
      )
        out.push(delta);
    });
    // Every chunk carries the usage so far; the last one is the total.
    if (response.usageMetadata) out.push({ kind: 'usage', usage: toUsage(response.usageMetadata) });
    return out;
  }
}
