import { afterEach, describe, expect, it, vi } from 'vitest';
import { chunkOf, textLiteralOf } from '../../src/chat/chunk-text.ts';
import type { Usage } from '../../src/chat/types.ts';
import { ChunkEmitter } from '../../src/execution/chunk-emitter.ts';
import type { StreamDelta } from '../../src/providers/types.ts';

type Delta = Omit<StreamDelta, 'kind' | 'choice'>;

/** The chunks the worker writes for these deltas (and usage), with and without `include_usage`. */
function emitted(id: string, model: string, deltas: Delta[], usage?: Usage): string[] {
  const out: string[] = [];
  for (const includeUsage of [true, false]) {
    const emitter = new ChunkEmitter(id, 1_700_000_000, model, includeUsage, (json) => out.push(json));
    for (const delta of deltas) emitter.delta(0, delta);
    if (usage) emitter.usage(usage);
  }
  return out;
}

const USAGE = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
const TEXTS = [
  '',
  'Hello',
  'He said "hi"',
  'back\\slash\\',
  ' \n\t\u0000 é 🙂 \u2028',
  '"},"finish_reason":null}],"usage":null}',
];

const plain = [
  ...emitted('chatcmpl-abc', 'the-model', [{ content: '' }, { content: 'Hi' }, { finish_reason: 'stop' }], USAGE),
  ...TEXTS.flatMap((text) => emitted('chatcmpl-abc', 'the-model', [{ content: text }, { content: text }])),
  ...(['stop', 'length', 'tool_calls', 'content_filter'] as const).flatMap((reason) =>
    emitted('chatcmpl-abc', 'the-model', [
      { content: 'a' },
      { finish_reason: reason },
      { content: 'b', finish_reason: reason },
    ]),
  ),
  ...emitted('chatcmpl-"quoted\\', 'model/"é"', [{ content: 'x' }, { finish_reason: 'stop' }], USAGE),
  ...emitted('', '', [{ content: '' }], { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }),
  // An empty reply: the first chunk has the role and the finish reason, no text.
  ...emitted('chatcmpl-abc', 'the-model', [{ finish_reason: 'stop' }], USAGE),
];

/** Chunks of shapes the plain reader leaves to JSON.parse, or reads only in part. */
const other = [
  ...emitted('chatcmpl-abc', 'the-model', [
    { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { refusal: 'no' },
    { content: 'a', refusal: 'b' },
    { thinking: { index: 0, type: 'thinking', thinking: 'hmm' } },
    { anthropic_block: { start: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} } } },
    { content: 'c', logprobs: { content: [] } },
    { finish_reason: 'stop', stop_sequence: 'END' },
  ]),
  ...emitted('chatcmpl-abc', 'the-model', [], {
    ...USAGE,
    prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 2 },
    gateway_cache: { hit: true } as Usage['gateway_cache'],
  }),
  '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1},"system_fingerprint":"fp"}',
  '{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null,"logprobs":null}],"id":"c","object":"chat.completion.chunk","created":1,"model":"m","usage":null}',
  '{"id":"c","object":"chat.completion.chunk","created":1.5,"model":"m","choices":[{"index":1,"delta":{"content":"a"},"finish_reason":null,"logprobs":null}]}',
];

describe('chunkOf', () => {
  afterEach(() => vi.restoreAllMocks());

  it('reads every chunk as JSON.parse does, the worker’s plain chunks and any other', () => {
    for (const json of [...plain, ...other]) expect(chunkOf(json), json).toStrictEqual(JSON.parse(json));
  });

  it('does not parse the plain chunks of a reply whose strings hold no escape', () => {
    const chunks = emitted(
      'chatcmpl-abc',
      'the-model',
      [{ content: '' }, { content: 'Hi' }, { finish_reason: 'stop' }],
      USAGE,
    );
    const parse = vi.spyOn(JSON, 'parse');
    for (const json of chunks) chunkOf(json);
    expect(parse).not.toHaveBeenCalled();
    chunkOf(other[0] as string);
    expect(parse).toHaveBeenCalledTimes(1);
  });
});

describe('textLiteralOf', () => {
  it('gives the content of a text chunk as its JSON literal, and undefined for any other chunk', () => {
    for (const json of [...plain, ...other]) {
      const chunk = JSON.parse(json);
      const delta = chunk.choices[0]?.delta ?? {};
      const textOnly =
        chunk.choices.length === 1 &&
        Object.keys(delta).join() === 'content' &&
        chunk.choices[0].finish_reason === null &&
        chunk.choices[0].index === 0 &&
        chunk.choices[0].logprobs === null &&
        !chunk.usage &&
        json.startsWith('{"id"');
      expect(textLiteralOf(json), json).toBe(textOnly ? JSON.stringify(delta.content) : undefined);
    }
  });
});
