import { describe, expect, it } from 'vitest';
import { ReplyAssembler } from '../../src/cache/reply-assembler.ts';
import { completionChunks } from '../../src/chat/completion-accumulator.ts';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/chat/types.ts';
import type { StreamEntry } from '../../src/streams/protocol.ts';

const replayChunks = (c: ChatCompletion, usage: boolean): string[] =>
  completionChunks(c, usage).map((chunk) => JSON.stringify(chunk));

const completion: ChatCompletion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'a-4o',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop', logprobs: null },
    { index: 1, message: { role: 'assistant', content: 'It is Paris.' }, finish_reason: 'length', logprobs: null },
  ],
  usage: { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 },
};

function entries(chunks: string[], terminal: StreamEntry | undefined): StreamEntry[] {
  const list: StreamEntry[] = chunks.map((d, i) => ({ id: `${i}-0`, t: 'chunk', d }));
  if (terminal) list.push(terminal);
  return list;
}

function assemble(list: StreamEntry[], n = 2): string | undefined {
  const assembler = new ReplyAssembler(n);
  for (const entry of list) assembler.push(entry);
  return assembler.completion();
}

describe('ReplyAssembler and replayChunks', () => {
  it('round-trips a completion through replayed chunks and an end entry', () => {
    const chunks = replayChunks(completion, true);
    const usageChunk = JSON.parse(chunks.at(-1) as string) as ChatCompletionChunk;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(completion.usage);
    expect((JSON.parse(chunks[0] as string) as ChatCompletionChunk).usage).toBeNull();
    const rebuilt = assemble(entries(chunks, { id: 'e', t: 'end', d: '{}', pt: 7, ct: 4 }));
    expect(JSON.parse(rebuilt as string)).toEqual(completion);
  });

  it('replays without usage fields when include_usage is off', () => {
    const chunks = replayChunks(completion, false).map((c) => JSON.parse(c) as ChatCompletionChunk);
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('')).toBe('Paris.It is Paris.');
  });

  it('keeps a result entry as it is', () => {
    const json = JSON.stringify(completion);
    expect(assemble([{ id: '1', t: 'result', d: json }], 1)).toBe(json);
  });

  it("does not store a reply carrying an Anthropic upstream's own blocks for the Messages door, whole or streamed", () => {
    const carried = {
      ...completion,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant' as const,
            content: 'Paris.',
            anthropic_content: [{ type: 'text', text: 'Paris.' }],
          },
          finish_reason: 'stop' as const,
          logprobs: null,
        },
      ],
    };
    expect(assemble([{ id: '1', t: 'result', d: JSON.stringify(carried) }], 1)).toBeUndefined();
    const chunks = replayChunks({ ...completion, choices: [completion.choices[0]!] }, false);
    const block = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [
        { index: 0, delta: { anthropic_block: { start: { type: 'x' } } }, finish_reason: null, logprobs: null },
      ],
    });
    const end: StreamEntry = { id: 'e', t: 'end', d: '{}', pt: 7, ct: 4 };
    expect(assemble(entries(chunks, end), 1)).toBeDefined();
    expect(assemble(entries([block, ...chunks], end), 1)).toBeUndefined();
  });

  it('refuses failed, cut and unfinished replies', () => {
    const chunks = replayChunks(completion, false);
    expect(
      assemble(entries(chunks, { id: 'e', t: 'error', d: '{"code":"provider_error","message":"x"}' })),
    ).toBeUndefined();
    expect(assemble(entries(chunks, undefined))).toBeUndefined();
    // `end` arrived but choice 1 never got a finish reason, or never started.
    expect(assemble(entries(chunks.slice(0, 4), { id: 'e', t: 'end', d: '{}' }))).toBeUndefined();
    expect(assemble(entries(chunks.slice(0, 3), { id: 'e', t: 'end', d: '{}' }))).toBeUndefined();
    expect(assemble(entries(chunks.slice(0, 3), { id: 'e', t: 'end', d: '{}' }), 1)).toBeDefined();
    expect(assemble(entries(['not json'], { id: 'e', t: 'end', d: '{}' }))).toBeUndefined();
    expect(assemble([{ id: 'e', t: 'end', d: '{}' }])).toBeUndefined();
  });
});
