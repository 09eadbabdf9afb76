import type { IncomingHttpHeaders } from 'node:http';

/**
 * What the fake upstream needs to know about one wire format. A dialect is
 * pure data shaping; the server in `../fake-upstream.ts` does the HTTP.
 */

/** One SSE event to write; `event` is the SSE event name, when the format names its events. */
export interface SseFrame {
  event?: string;
  data: string;
}

/** The request facts the fake reply is made from. */
export interface FakePrompt {
  model: string;
  stream: boolean;
  /** Choices asked for (OpenAI `n`, Gemini `candidateCount`). */
  n: number;
  /** Text of the last user turn, echoed back. */
  lastUserText: string;
  /** Word count of every input text, system included: the fake prompt token count. */
  inputWords: number;
  /** OpenAI `stream_options.include_usage`. */
  includeUsage: boolean;
}

export interface FakeReply {
  model: string;
  /** One text per choice, in index order. */
  texts: string[];
  promptTokens: number;
  /** Completion tokens of each choice: its word count. */
  completionTokens: number[];
}

export interface FakeRoute {
  stream: boolean;
  /** Model named in the path (Gemini); other formats name it in the body. */
  model?: string;
}

export interface FakeDialect {
  /** The route of a request, undefined when this format has no such endpoint (404). */
  route(method: string, url: URL): FakeRoute | undefined;
  isAuthorized(headers: IncomingHttpHeaders, apiKey: string): boolean;
  /** A message for a 400 when a required non-auth header is missing. */
  headerProblem?(headers: IncomingHttpHeaders): string | undefined;
  /** The format's error body for a status. */
  errorBody(status: number, message: string): unknown;
  /** The prompt facts, or a message for a 400 when the body is not a valid request. */
  readPrompt(body: unknown, route: FakeRoute): FakePrompt | string;
  completionBody(reply: FakeReply): unknown;
  streamFrames(reply: FakeReply, prompt: FakePrompt): SseFrame[];
}

export function countWords(text: string): number {
  let count = 0;
  for (const word of text.split(/\s+/)) if (word !== '') count += 1;
  return count;
}

/** The stream pieces of a reply: split on spaces, each piece but the first keeps its leading space. */
export function streamPieces(text: string): string[] {
  return text.split(' ').map((word, i) => (i === 0 ? word : ` ${word}`));
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
