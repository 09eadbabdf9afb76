/**
 * A mid-stream text chunk as the worker writes it (src/execution/chunk-emitter.ts):
 * only a `content` string for choice 0, nothing finished, no usage yet. The
 * doors that re-encode chunks (Messages, Responses) take its content as the
 * JSON string literal it already is instead of parsing the whole chunk, which
 * is most of their encoding cost; any other chunk (another shape, a DLP
 * rewrite, a cache replay) gets undefined here and is parsed whole.
 */
const TEXT_CHUNK_HEAD = '"choices":[{"index":0,"delta":{"content":';
const TEXT_CHUNK_TAILS = [
  '},"finish_reason":null,"logprobs":null}],"usage":null}',
  '},"finish_reason":null,"logprobs":null}]}',
];
const ONE_STRING_LITERAL = /^"(?:[^"\\]|\\.)*"$/;

/** The JSON string literal of a text-only chunk's content, or undefined when the chunk is anything else. */
export function textLiteralOf(json: string): string | undefined {
  const head = json.indexOf(TEXT_CHUNK_HEAD);
  if (head < 0) return undefined;
  const tail = TEXT_CHUNK_TAILS.find((t) => json.endsWith(t));
  if (tail === undefined) return undefined;
  const literal = json.slice(head + TEXT_CHUNK_HEAD.length, json.length - tail.length);
  return ONE_STRING_LITERAL.test(literal) ? literal : undefined;
}
