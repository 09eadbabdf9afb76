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
  /** Names of the declared function tools, in order (empty when none). */
  tools: string[];
  /** The tool choice, normalized: `{name}` forces one tool. */
  toolChoice: 'auto' | 'none' | 'required' | { name: string };
  /** False when the request forbade parallel tool calls. */
  parallelToolCalls: boolean;
  /** Contents of the tool results in the last user turn (empty when it has none). */
  toolResults: string[];
  /** Inline PDF documents the request carried. @defaultValue 0 */
  files?: number;
  /** The JSON schema the reply must follow (structured outputs), if any. */
  jsonSchema?: Record<string, unknown>;
  /** JSON mode without a schema. */
  jsonMode: boolean;
  /** Images in the request, each checked: valid base64 of the named type, or an https URL. */
  images: number;
  /** The request's output token budget, if it set one: a longer text reply is cut to this many words. */
  maxTokens?: number;
  /** The stop sequences the request set, if any (honoured with `honorLimits`). */
  stopSequences?: string[];
  /** The request asked for extended thinking (Anthropic `thinking` enabled or adaptive): the reply starts with a signed thinking block. */
  thinking?: boolean;
}

/** A tool call of the fake reply; `arguments` is JSON text. */
export interface FakeToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface FakeReply {
  model: string;
  /** One text per choice, in index order; '' when the choice only calls tools. */
  texts: string[];
  /** Tool calls of every choice (the same for each); empty when the reply is text. */
  toolCalls: FakeToolCall[];
  promptTokens: number;
  /** Completion tokens of each choice: its word count. */
  completionTokens: number[];
  /** Why a text reply ended early, with `honorLimits`: the token limit, or a stop sequence (named). */
  finish?: 'length' | 'stop_sequence';
  stopSequence?: string;
  /** The reasoning before the answer, when the prompt asked for thinking: `Thinking about: <last user text>`, signed. */
  thinking?: { text: string; signature: string };
  /** Searched the web first (the `webSearch` behaviour; only the Anthropic dialect says so). */
  webSearch?: true;
}

/**
 * A text cut as a model stops: at the first stop sequence (left out, as every format leaves it
 * out), else after `maxTokens` words (a word is a token here).
 */
export function applyLimits(
  text: string,
  prompt: FakePrompt,
  stopSequences = true,
): { text: string; finish?: 'length' | 'stop_sequence'; stopSequence?: string } {
  let cutAt = -1;
  let hit: string | undefined;
  for (const sequence of stopSequences ? (prompt.stopSequences ?? []) : []) {
    const at = text.indexOf(sequence);
    if (at >= 0 && (cutAt < 0 || at < cutAt)) {
      cutAt = at;
      hit = sequence;
    }
  }
  if (hit !== undefined) return { text: text.slice(0, cutAt), finish: 'stop_sequence', stopSequence: hit };
  const words = text.split(' ');
  if (prompt.maxTokens !== undefined && countWords(text) > prompt.maxTokens)
    return { text: words.slice(0, prompt.maxTokens).join(' '), finish: 'length' };
  return { text };
}

/**
 * What the fake answers, the same in every format:
 * - tools declared, the choice not `none`, and no tool results in the last turn: a call of the named
 *   tool, else of the first one, with `{"input": <last user text>}`; of the first two when the text
 *   holds `[parallel]` and parallel calls are allowed;
 * - tool results in the last turn: `Tool said: <results joined by " | ">`;
 * - a JSON schema: an object that follows it (see {@link sampleOf}); JSON mode: `{"echo": <text>}`;
 * - else `Echo: <last user text>`, with ` (+N images)` when the request carried images.
 */
export function fakeAnswer(
  prompt: FakePrompt,
  replyText: string | undefined,
): { text: string; toolCalls: FakeToolCall[] } {
  const wantsTool = prompt.tools.length > 0 && prompt.toolChoice !== 'none' && prompt.toolResults.length === 0;
  if (wantsTool) {
    const forced = typeof prompt.toolChoice === 'object' ? prompt.toolChoice.name : undefined;
    const names = forced
      ? [forced]
      : prompt.lastUserText.includes('[parallel]') && prompt.parallelToolCalls
        ? prompt.tools.slice(0, 2)
        : prompt.tools.slice(0, 1);
    const args = JSON.stringify({ input: prompt.lastUserText });
    return { text: '', toolCalls: names.map((name, i) => ({ id: `call_fake_${i}_${name}`, name, arguments: args })) };
  }
  if (prompt.toolResults.length > 0) return { text: `Tool said: ${prompt.toolResults.join(' | ')}`, toolCalls: [] };
  if (prompt.jsonSchema)
    return { text: JSON.stringify(sampleOf(prompt.jsonSchema, prompt.lastUserText)), toolCalls: [] };
  if (prompt.jsonMode) return { text: JSON.stringify({ echo: prompt.lastUserText }), toolCalls: [] };
  const images = prompt.images > 0 ? ` (+${prompt.images} images)` : '';
  const files = (prompt.files ?? 0) > 0 ? ` (+${prompt.files} files)` : '';
  return { text: replyText ?? `Echo: ${prompt.lastUserText}${images}${files}`, toolCalls: [] };
}

/** A value that follows a JSON schema: strings are `text`, numbers 42, booleans true, enums their first value. */
export function sampleOf(schema: unknown, text: string): unknown {
  if (!isRecord(schema)) return null;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.anyOf)) return sampleOf(schema.anyOf[0], text);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return text;
    case 'number':
    case 'integer':
      return 42;
    case 'boolean':
      return true;
    case 'array':
      return [sampleOf(schema.items, text)];
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = isRecord(schema.properties) ? schema.properties : {};
      for (const [key, value] of Object.entries(properties)) out[key] = sampleOf(value, text);
      return out;
    }
    default:
      return null;
  }
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** A message when inline image bytes are not what a provider would accept. */
export function imageProblem(mediaType: unknown, data: unknown): string | undefined {
  if (typeof mediaType !== 'string' || !IMAGE_TYPES.has(mediaType))
    return `unsupported image media type ${String(mediaType)}`;
  if (typeof data !== 'string' || data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data))
    return 'image data is not valid base64';
  return undefined;
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

/** JSON text cut in three, as upstreams cut streamed arguments mid-token. */
export function fragments(text: string): string[] {
  const third = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += third) out.push(text.slice(i, i + third));
  return out;
}
