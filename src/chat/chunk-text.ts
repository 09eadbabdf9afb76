import type { ChatCompletionChunk, ChatCompletionChunkChoice, ChunkDelta, FinishReason } from './types.ts';

/**
 * Chunks as the worker writes them (src/execution/chunk-emitter.ts), read
 * without JSON.parse. The doors that re-encode chunks (Messages, Responses)
 * spent most of their encoding time parsing them: a parse costs more than
 * writing all of a chunk's frames. Each reader takes only the exact shapes
 * the emitter writes and says undefined (or parses in full) for anything else
 * (another key order, more fields, a DLP rewrite, a cache replay), so what the
 * doors send never depends on which way a chunk was read.
 */

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;

/**
 * A mid-stream text chunk: only a `content` string for choice 0, nothing
 * finished, no usage yet. Its content is taken as the JSON string literal it
 * already is.
 */
const TEXT_CHUNK_HEAD = '"choices":[{"index":0,"delta":{"content":';
const TEXT_CHUNK_TAIL = '},"finish_reason":null,"logprobs":null}],"usage":null}';
const TEXT_CHUNK_TAIL_NO_USAGE = '},"finish_reason":null,"logprobs":null}]}';
const ONE_STRING_LITERAL = new RegExp(`^${STRING}$`);

/** The JSON string literal of a text-only chunk's content, or undefined when the chunk is anything else. */
export function textLiteralOf(json: string): string | undefined {
  const head = json.indexOf(TEXT_CHUNK_HEAD);
  if (head < 0) return undefined;
  const tail = json.endsWith(TEXT_CHUNK_TAIL)
    ? TEXT_CHUNK_TAIL
    : json.endsWith(TEXT_CHUNK_TAIL_NO_USAGE)
      ? TEXT_CHUNK_TAIL_NO_USAGE
      : undefined;
  if (tail === undefined) return undefined;
  const literal = json.slice(head + TEXT_CHUNK_HEAD.length, json.length - tail.length);
  return ONE_STRING_LITERAL.test(literal) ? literal : undefined;
}

/**
 * Every other chunk a plain reply is made of: the first (`role`, and its
 * text), the finish chunk and the usage chunk. The whole text must match, from
 * the first brace to the last, so a match is that chunk and nothing else. A
 * usage of the three counts is read from its digits; any other usage object
 * is the rest of the chunk up to its closing brace, parsed alone. Groups:
 * 1 id, 2 created, 3 model, 4 the choice, 5 role, 6 its text, 7 text without
 * role, 8 finish reason, 9 usage, 10 to 12 its counts.
 */
const COUNT = String.raw`(?:0|[1-9]\d{0,14})`;
const EMITTED_CHUNK = new RegExp(
  `^\\{"id":(${STRING}),"object":"chat\\.completion\\.chunk","created":(${COUNT}),"model":(${STRING}),"choices":\\[` +
    `(\\{"index":0,"delta":\\{(?:("role":"assistant")(?:,"content":(${STRING}))?|"content":(${STRING}))?\\},` +
    `"finish_reason":(?:null|"(stop|length|tool_calls|content_filter)"),"logprobs":null\\})?\\]` +
    `(?:,"usage":(null|\\{"prompt_tokens":(${COUNT}),"completion_tokens":(${COUNT}),"total_tokens":(${COUNT})\\}|\\{[^]*\\}))?\\}$`,
);

/** A JSON string literal's value: most hold no escape, and are the text between their quotes. */
export function stringOf(literal: string): string {
  return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
}

/** A chunk's JSON text as the object JSON.parse makes of it, read without a parse when the worker wrote it. */
export function chunkOf(json: string): ChatCompletionChunk {
  return emittedChunkOf(json) ?? (JSON.parse(json) as ChatCompletionChunk);
}

function emittedChunkOf(json: string): ChatCompletionChunk | undefined {
  const match = EMITTED_CHUNK.exec(json);
  if (match === null) return undefined;
  const choices: ChatCompletionChunkChoice[] = [];
  if (match[4] !== undefined) {
    const delta: ChunkDelta = {};
    if (match[5] !== undefined) delta.role = 'assistant';
    const content = match[6] ?? match[7];
    if (content !== undefined) delta.content = stringOf(content);
    const finish = (match[8] as FinishReason | undefined) ?? null;
    choices.push({ index: 0, delta, finish_reason: finish, logprobs: null });
  }
  const chunk: ChatCompletionChunk = {
    id: stringOf(match[1] as string),
    object: 'chat.completion.chunk',
    created: Number(match[2]),
    model: stringOf(match[3] as string),
    choices,
  };
  const usage = match[9];
  if (usage === 'null') chunk.usage = null;
  else if (match[12] !== undefined)
    chunk.usage = {
      prompt_tokens: Number(match[10]),
      completion_tokens: Number(match[11]),
      total_tokens: Number(match[12]),
    };
  else if (usage !== undefined) {
    try {
      chunk.usage = JSON.parse(usage) as ChatCompletionChunk['usage'];
    } catch {
      // More members after the usage object: not a chunk the worker writes.
      return undefined;
    }
  }
  return chunk;
}
