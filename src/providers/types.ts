import type { ChatRequest, FinishReason, Usage } from '../chat/types.ts';

/**
 * The one interface every provider adapter implements. An adapter is pure
 * translation between the gateway's OpenAI-shaped types and one upstream wire
 * format: it builds the HTTP request and parses bodies and SSE events. It does
 * no I/O; retries, timeouts, cancellation and fan-out live in
 * `src/execution/`.
 */

/** Upstream wire formats the gateway speaks. */
export type WireFormat = 'openai' | 'gemini' | 'anthropic';

/** Where and with which key to call the upstream. */
export interface ProviderEndpoint {
  /** Base URL without a trailing slash, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey: string;
}

export interface UpstreamHttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** One choice of a non-streamed upstream reply. */
export interface ParsedChoice {
  index: number;
  content: string;
  finish_reason: FinishReason;
}

export interface ParsedCompletion {
  choices: ParsedChoice[];
  usage: Usage;
}

/** What a stream decoder makes of one upstream SSE event. */
export type StreamEvent =
  /** Text and/or a finish reason for one choice. */
  | { kind: 'delta'; choice: number; content?: string; finish_reason?: FinishReason }
  /** Token counts so far; the last one seen is the total. */
  | { kind: 'usage'; usage: Usage }
  /** The upstream reported an error inside the stream. */
  | { kind: 'error'; message: string };

export interface SseEvent {
  /** The SSE `event:` field, when the upstream names its events. */
  event?: string | undefined;
  data: string;
}

/** Stateful decoder of one upstream SSE stream. */
export interface StreamDecoder {
  push(event: SseEvent): StreamEvent[];
  /** True once the upstream signalled a clean end (`[DONE]`, `message_stop`, a finish reason...). */
  readonly finished: boolean;
}

export interface ProviderAdapter {
  readonly format: WireFormat;
  /** Default base URL: the provider's public API. */
  readonly defaultBaseUrl: string;
  /**
   * False when the upstream cannot return several choices in one call; the
   * executor then makes `n` calls and numbers their choices.
   */
  readonly supportsMultipleChoices: boolean;
  /** A message when this request cannot be expressed for the upstream (400 to the client). */
  validate(req: ChatRequest): string | undefined;
  /** `req.n` is already 1 when {@link supportsMultipleChoices} is false. */
  buildRequest(req: ChatRequest, endpoint: ProviderEndpoint, options: { stream: boolean }): UpstreamHttpRequest;
  /** Parses a 2xx JSON body; throws {@link UpstreamProtocolError} when it is not the expected shape. */
  parseResponse(body: unknown): ParsedCompletion;
  createStreamDecoder(): StreamDecoder;
  /** The upstream's own error message from an error body, if it has one. */
  extractErrorMessage(body: unknown): string | undefined;
}

/** The upstream answered something that is not its documented format. */
export class UpstreamProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamProtocolError';
  }
}
