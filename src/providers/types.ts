import type {
  AnthropicBlockPiece,
  ChatRequest,
  FinishReason,
  ReplyMessage,
  ThinkingDelta,
  ToolCallDelta,
  Usage,
} from '../chat/types.ts';

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
  message: ReplyMessage;
  finish_reason: FinishReason;
  /** The stop sequence that ended the reply, when the upstream says which. */
  stop_sequence?: string;
  /** OpenAI's logprobs object, when the upstream sent one. */
  logprobs?: unknown;
}

export interface ParsedCompletion {
  choices: ParsedChoice[];
  usage: Usage;
}

/** New output of one choice. Tool-call pieces follow OpenAI's streaming shape (index, then id and name, then argument text). */
export interface StreamDelta {
  kind: 'delta';
  choice: number;
  content?: string;
  refusal?: string;
  tool_calls?: ToolCallDelta[];
  /** A piece of a reasoning block (Anthropic upstreams, when the request asked for thinking). */
  thinking?: ThinkingDelta;
  /** What an Anthropic-format stream holds beyond the canonical pieces, when the request asked for it. */
  anthropic_block?: AnthropicBlockPiece;
  logprobs?: unknown;
  finish_reason?: FinishReason;
  /** With `finish_reason`: the stop sequence that ended the reply, when the upstream says which. */
  stop_sequence?: string;
}

/** What a stream decoder makes of one upstream SSE event. */
export type StreamEvent =
  /** Text, refusal text, tool-call pieces and/or a finish reason for one choice. */
  | StreamDelta
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
  /** @defaultValue base URL: the provider's public API */
  readonly defaultBaseUrl: string;
  /**
   * False when the upstream cannot return several choices in one call; the
   * executor then makes `n` calls and numbers their choices.
   */
  readonly supportsMultipleChoices: boolean;
  /** A message when this request cannot be expressed for the upstream (400 to the client). */
  validate(req: ChatRequest): string | undefined;
  /**
   * The request fields present in `req` that this format cannot honour (e.g.
   * `seed` for Anthropic). The API answers 400 naming them, or drops them when
   * the provider is configured with `drop_unsupported_params`.
   */
  unsupportedParams(req: ChatRequest): Array<keyof ChatRequest>;
  /**
   * What of a valid request the adapter leaves out on its own, because the
   * upstream has no place for it and it changes nothing an answer means
   * (Gemini: constraints of tool parameters it has no keyword for); the reply
   * names them in `X-Gateway-Dropped-Params`. @defaultValue none
   */
  leftOut?(req: ChatRequest): string[];
  /** `req.n` is already 1 when {@link supportsMultipleChoices} is false. */
  buildRequest(req: ChatRequest, endpoint: ProviderEndpoint, options: { stream: boolean }): UpstreamHttpRequest;
  /** Parses a 2xx JSON body of `req`; throws {@link UpstreamProtocolError} when it is not the expected shape. */
  parseResponse(body: unknown, req?: ChatRequest): ParsedCompletion;
  createStreamDecoder(req?: ChatRequest): StreamDecoder;
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
