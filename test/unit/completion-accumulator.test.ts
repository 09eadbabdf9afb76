import { describe, expect, it } from 'vitest';
import { CompletionAccumulator, completionChunks } from '../../src/chat/completion-accumulator.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionChunkChoice } from '../../src/chat/types.ts';

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, created: 1700000000, model: 'm' };
const chunk = (choices: Array<Partial<ChatCompletionChunkChoice> & { index: number }>): ChatCompletionChunk => ({
  ...base,
  choices: choices.map((c) => ({ delta: {}, finish_reason: null, logprobs: null, ...c })),
});

describe('CompletionAccumulator', () => {
  it('joins tool-call argument fragments per call index, as OpenAI streams them', () => {
    const acc = new CompletionAccumulator();
    acc.push(chunk([{ index: 0, delta: { role: 'assistant', content: null as never } }]));
    acc.push(
      chunk([
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }],
          },
        },
      ]),
    );
    acc.push(
      chunk([
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{"c' } }],
          },
        },
      ]),
    );
    acc.push(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] } }]));
    acc.push(
      chunk([
        {
          index: 0,
          delta: {
            tool_calls: [
              { index: 0, function: { arguments: '"Paris"}' } },
              { index: 1, function: { arguments: '":1}' } },
            ],
          },
        },
      ]),
    );
    acc.push(chunk([{ index: 0, finish_reason: 'tool_calls' }]));
    expect(acc.isComplete(1)).toBe(true);
    expect(acc.completion().choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{"c":1}' } },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
  });

  it('keeps refusals apart from content and concatenates logprobs', () => {
    const acc = new CompletionAccumulator();
    acc.push(
      chunk([{ index: 0, delta: { refusal: 'I can' }, logprobs: { content: null, refusal: [{ token: 'I' }] } }]),
    );
    acc.push(
      chunk([
        {
          index: 0,
          delta: { refusal: 'not.' },
          logprobs: { content: null, refusal: [{ token: 'not' }] },
          finish_reason: 'stop',
        },
      ]),
    );
    const choice = acc.completion().choices[0];
    expect(choice?.message).toEqual({ role: 'assistant', content: null, refusal: 'I cannot.' });
    expect(choice?.logprobs).toEqual({ content: [], refusal: [{ token: 'I' }, { token: 'not' }] });
  });

  it('is incomplete while a choice lacks its finish reason or never started', () => {
    const acc = new CompletionAccumulator();
    acc.push(
      chunk([
        { index: 0, delta: { content: 'a' }, finish_reason: 'stop' },
        { index: 1, delta: { content: 'b' } },
      ]),
    );
    expect(acc.isComplete(2)).toBe(false);
    expect(acc.isComplete(3)).toBe(false);
    acc.push(chunk([{ index: 1, finish_reason: 'length' }]));
    expect(acc.isComplete(2)).toBe(true);
  });
});

describe('completionChunks', () => {
  it('replays a tool-call completion that the accumulator rebuilds as it was', () => {
    const completion: ChatCompletion = {
      id: 'chatcmpl-2',
      object: 'chat.completion',
      created: 1700000001,
      model: 'm',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
        { index: 1, message: { role: 'assistant', content: 'text' }, finish_reason: 'stop', logprobs: null },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    };
    const acc = new CompletionAccumulator();
    for (const c of completionChunks(completion, true)) acc.push(c);
    expect(acc.completion()).toEqual(completion);
  });
});
