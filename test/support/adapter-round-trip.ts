import { EventSourceParserStream } from 'eventsource-parser/stream';
import { CompletionAccumulator } from '../../src/chat/completion-accumulator.ts';
import type { ChatRequest, ChunkDelta, FinishReason, ToolCall, Usage } from '../../src/chat/types.ts';
import type {
  ParsedCompletion,
  ProviderAdapter,
  ProviderEndpoint,
  SseEvent,
  StreamEvent,
} from '../../src/providers/types.ts';

/**
 * A bare-bones caller of one adapter over real HTTP (global fetch plus
 * eventsource-parser), for round-trip tests against the fake upstream. No
 * retries, no timeouts of its own: those belong to the executor under test
 * elsewhere.
 */

export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'test-model',
    messages: [{ role: 'user', content: 'hello there' }],
    n: 1,
    stream: false,
    include_usage: false,
    ...overrides,
  };
}

export interface NonStreamedResult {
  status: number;
  headers: Headers;
  completion?: ParsedCompletion;
  /** From `extractErrorMessage` when the status is not 2xx. */
  errorMessage?: string;
  errorBody?: unknown;
}

export async function callNonStreamed(
  adapter: ProviderAdapter,
  req: ChatRequest,
  endpoint: ProviderEndpoint,
  signal?: AbortSignal,
): Promise<NonStreamedResult> {
  const upstream = adapter.buildRequest(req, endpoint, { stream: false });
  const res = await fetch(upstream.url, {
    method: 'POST',
    headers: upstream.headers,
    body: upstream.body,
    signal: signal ?? null,
  });
  const body: unknown = await res.json();
  if (!res.ok) {
    return {
      status: res.status,
      headers: res.headers,
      errorMessage: adapter.extractErrorMessage(body),
      errorBody: body,
    };
  }
  return { status: res.status, headers: res.headers, completion: adapter.parseResponse(body) };
}

export interface StreamedResult {
  status: number;
  /** Every event the decoder produced, in order. */
  events: StreamEvent[];
  /** The raw SSE events received. */
  sse: SseEvent[];
  finished: boolean;
  errorMessage?: string;
}

/**
 * Streams a call through the adapter's decoder. Errors thrown while reading
 * (a cut connection, a decoder's protocol error) are rethrown with the events
 * decoded so far attached as `partial`.
 */
export async function callStreamed(
  adapter: ProviderAdapter,
  req: ChatRequest,
  endpoint: ProviderEndpoint,
  signal?: AbortSignal,
): Promise<StreamedResult> {
  const upstream = adapter.buildRequest(req, endpoint, { stream: true });
  const res = await fetch(upstream.url, {
    method: 'POST',
    headers: upstream.headers,
    body: upstream.body,
    signal: signal ?? null,
  });
  if (!res.ok || res.body === null) {
    const body: unknown = await res.json();
    return {
      status: res.status,
      events: [],
      sse: [],
      finished: false,
      errorMessage: adapter.extractErrorMessage(body),
    };
  }
  const decoder = adapter.createStreamDecoder();
  const result: StreamedResult = { status: res.status, events: [], sse: [], finished: false };
  const sseStream = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  try {
    for await (const message of sseStream) {
      const event: SseEvent = { event: message.event, data: message.data };
      result.sse.push(event);
      result.events.push(...decoder.push(event));
      result.finished = decoder.finished;
    }
  } catch (error) {
    throw Object.assign(error instanceof Error ? error : new Error(String(error)), { partial: result });
  }
  return result;
}

export interface Accumulated {
  /** Text per choice index. */
  texts: string[];
  /** Tool calls per choice index, their argument fragments joined. */
  toolCalls: ToolCall[][];
  finishReasons: Array<FinishReason | undefined>;
  usage?: Usage;
  errors: string[];
}

/** Folds decoder events the way a client would, with the gateway's own accumulator. */
export function accumulate(events: readonly StreamEvent[]): Accumulated {
  const out: Accumulated = { texts: [], toolCalls: [], finishReasons: [], errors: [] };
  const accumulator = new CompletionAccumulator();
  for (const event of events) {
    if (event.kind === 'delta') {
      const choice = event.choice;
      const delta: ChunkDelta = {};
      if (event.content !== undefined) delta.content = event.content;
      if (event.refusal !== undefined) delta.refusal = event.refusal;
      if (event.tool_calls !== undefined) delta.tool_calls = event.tool_calls;
      out.texts[choice] = (out.texts[choice] ?? '') + (event.content ?? '');
      if (event.finish_reason !== undefined) out.finishReasons[choice] = event.finish_reason;
      accumulator.push({
        id: 'x',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: choice, delta, finish_reason: event.finish_reason ?? null, logprobs: null }],
      });
    } else if (event.kind === 'usage') {
      out.usage = event.usage;
    } else {
      out.errors.push(event.message);
    }
  }
  for (const choice of accumulator.completion().choices) out.toolCalls[choice.index] = choice.message.tool_calls ?? [];
  return out;
}
