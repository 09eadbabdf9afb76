import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { responsesKeyOf, responsesPartitionOf, responsesPromptOf } from '../../src/cache/cache-key.ts';
import { ResponsesReplyAssembler } from '../../src/cache/reply-assembler.ts';
import { NativeResponsesCodec } from '../../src/doors/responses/native-codec.ts';
import { blockOf, reasoningItem } from '../../src/doors/responses/reasoning-items.ts';
import { ProviderError } from '../../src/errors/catalog.ts';
import { nativeEvent, responseUsage, textPaths, textsAt, withTexts } from '../../src/providers/openai/responses-api.ts';

/**
 * The pure parts of native Responses mode and of reasoning items: which texts
 * of a Responses body DLP sees and how they are written back, the upstream
 * events as the worker reads them, the codec's numbering, a cached reply's
 * replay (fresh ids, the event grammar read back by the `openai` client),
 * its cache keys, and the signed reasoning block's round trip through
 * `encrypted_content`.
 */

const body = {
  model: 'a-o4',
  instructions: 'Be brief.',
  input: [
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'hello' },
        { type: 'input_image', image_url: 'https://example.com/a.png' },
      ],
    },
    {
      type: 'reasoning',
      id: 'rs_1',
      summary: [{ type: 'summary_text', text: 'pondering' }],
      encrypted_content: 'gAAAAopaque',
    },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi there', annotations: [] }] },
    { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"q":"x"}' },
    { type: 'function_call_output', call_id: 'c1', output: 'result text' },
    { role: 'user', content: 'and now?' },
  ],
  tools: [{ type: 'web_search' }],
};

describe('text paths of a Responses body', () => {
  it('finds every text a person or a tool wrote, in order, and nothing else', () => {
    expect(textsAt(body, textPaths(body))).toEqual([
      'Be brief.',
      'hello',
      'pondering',
      'hi there',
      '{"q":"x"}',
      'result text',
      'and now?',
    ]);
    expect(textsAt({ model: 'm', input: 'just this' }, textPaths({ model: 'm', input: 'just this' }))).toEqual([
      'just this',
    ]);
  });

  it('writes redacted texts back into a copy, leaving ids, images and encrypted reasoning as they were', () => {
    const paths = textPaths(body);
    const redacted = withTexts(
      body,
      paths,
      textsAt(body, paths).map((t) => t.toUpperCase()),
    );
    expect(textsAt(redacted, paths)).toEqual([
      'BE BRIEF.',
      'HELLO',
      'PONDERING',
      'HI THERE',
      '{"Q":"X"}',
      'RESULT TEXT',
      'AND NOW?',
    ]);
    expect(redacted.input).toMatchObject([
      { content: [{}, { type: 'input_image', image_url: 'https://example.com/a.png' }] },
      { id: 'rs_1', encrypted_content: 'gAAAAopaque' },
      {},
      { call_id: 'c1', name: 'lookup' },
      {},
      {},
    ]);
    expect(textsAt(body, paths)[0]).toBe('Be brief.');
  });
});

describe('upstream Responses events', () => {
  it("name the client's model in the response they carry and report the usage of the terminal one", () => {
    const completed = nativeEvent(
      JSON.stringify({
        type: 'response.completed',
        sequence_number: 9,
        response: {
          model: 'o4-mini',
          usage: {
            input_tokens: 5,
            output_tokens: 7,
            input_tokens_details: { cached_tokens: 2 },
            output_tokens_details: { reasoning_tokens: 3 },
          },
        },
      }),
      'a-o4',
    );
    expect(completed).toMatchObject({
      kind: 'event',
      terminal: true,
      usage: {
        prompt_tokens: 5,
        completion_tokens: 7,
        total_tokens: 12,
        prompt_tokens_details: { cached_tokens: 2 },
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    });
    expect(JSON.parse((completed as { json: string }).json).response.model).toBe('a-o4');
    const delta = '{"type":"response.output_text.delta","delta":"x","sequence_number":4}';
    expect(nativeEvent(delta, 'a-o4')).toEqual({ kind: 'event', json: delta, terminal: false });
  });

  it("read a compatible server's [DONE] line as the end", () => {
    expect(nativeEvent(' [DONE]', 'm')).toEqual({ kind: 'done' });
  });

  it('turn an upstream error event into a failure, and refuse an event that is not JSON', () => {
    expect(nativeEvent('{"type":"error","code":"server_error","message":"boom","sequence_number":3}', 'm')).toEqual({
      kind: 'error',
      message: 'boom',
    });
    expect(() => nativeEvent('{"type": oops', 'm')).toThrow(/not JSON/);
  });

  it('read no usage from a response without one', () => {
    expect(responseUsage({ usage: null })).toBeUndefined();
  });
});

describe('the native codec', () => {
  it('passes events through numbered from 0, and numbers its own error event after them', () => {
    const codec = new NativeResponsesCodec();
    const first = codec.chunk('{"type":"response.created","sequence_number":0,"response":{"id":"resp_1"}}');
    const second = codec.chunk('{"type":"response.output_text.delta","sequence_number":7,"delta":"hi"}');
    expect(first).toBe(
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1"}}\n\n',
    );
    expect(second).toContain('"sequence_number":1');
    const fail = codec.fail(new ProviderError('provider_a stopped'));
    expect(JSON.parse(fail.slice(fail.indexOf('data: ') + 6))).toEqual({
      type: 'error',
      code: 'provider_error',
      message: 'provider_a stopped',
      param: null,
      sequence_number: 2,
    });
    expect(codec.completion('{"id":"resp_1"}')).toBe('{"id":"resp_1"}');
  });
});

/** A native reply as the upstream wrote it: reasoning with encrypted content, a message, a function call, a hosted tool's call. */
const stored = {
  id: 'resp_upstream1',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  model: 'a-o4',
  store: false,
  output: [
    {
      id: 'rs_up1',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Thinking it over' }],
      encrypted_content: 'gAAAAopaque',
    },
    {
      id: 'ws_up1',
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'sky' },
    },
    {
      id: 'msg_up1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'The sky is blue.', annotations: [], logprobs: [] }],
    },
    {
      id: 'fc_up1',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_up1',
      name: 'lookup',
      arguments: '{"q":"sky"}',
    },
  ],
  usage: {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 2 },
    output_tokens: 8,
    output_tokens_details: { reasoning_tokens: 3 },
    total_tokens: 18,
  },
};

/** An `openai` client whose every call is answered with `body` (SSE when `sse`). */
function clientAnswering(text: string, sse: boolean): OpenAI {
  return new OpenAI({
    apiKey: 'k',
    baseURL: 'http://gateway.invalid/v1',
    maxRetries: 0,
    fetch: async () =>
      new Response(text, { status: 200, headers: { 'content-type': sse ? 'text/event-stream' : 'application/json' } }),
  });
}

describe('a cached native reply replayed', () => {
  it('is a new response: fresh response and item ids, the same texts, call ids, encrypted reasoning and usage', () => {
    const replay = new NativeResponsesCodec().replay(JSON.stringify(stored));
    const response = JSON.parse(replay.completion) as typeof stored;
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    const ids = response.output.map((item) => item.id);
    expect(ids.map((id) => id.split('_')[0])).toEqual(['rs', 'ws', 'msg', 'fc']);
    for (const [i, id] of ids.entries()) expect(id).not.toBe(stored.output[i]!.id);
    expect(response.created_at).toBeGreaterThan(stored.created_at);
    const { id: _a, created_at: _b, output: _c, ...rest } = response;
    const { id: _d, created_at: _e, output: _f, ...storedRest } = stored;
    expect(rest).toEqual(storedRest);
    expect(response.output.map(({ id: _id, ...item }) => item)).toEqual(
      stored.output.map(({ id: _id, ...item }) => item),
    );
    expect(replay.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 8 });
    const again = JSON.parse(new NativeResponsesCodec().replay(JSON.stringify(stored)).completion) as typeof stored;
    expect(again.id).not.toBe(response.id);
  });

  it("streams as an upstream would, numbered from 0 without a gap, and the openai client's stream reads it back whole", async () => {
    const codec = new NativeResponsesCodec();
    const replay = codec.replay(JSON.stringify(stored));
    const frames = replay.chunks.map((chunk) => codec.chunk(chunk)).join('') + codec.end();
    const events = [...frames.matchAll(/^data: (.*)$/gm)].map(
      (m) => JSON.parse(m[1]!) as { type: string; sequence_number: number },
    );
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]!.type).toBe('response.created');
    expect(events.at(-1)!.type).toBe('response.completed');
    const stream = clientAnswering(frames, true).responses.stream({ model: 'a-o4', input: 'x' });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types).toEqual(events.map((e) => e.type));
    expect(types).toContain('response.reasoning_summary_text.delta');
    expect(types).toContain('response.function_call_arguments.delta');
    expect(final.id).toBe((JSON.parse(replay.completion) as { id: string }).id);
    expect(final.output_text).toBe('The sky is blue.');
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'web_search_call', 'message', 'function_call']);
    const whole = await clientAnswering(replay.completion, false).responses.create({ model: 'a-o4', input: 'x' });
    expect(whole.output_text).toBe('The sky is blue.');
  });

  it('ends an incomplete response with response.incomplete', () => {
    const codec = new NativeResponsesCodec();
    const incomplete = { ...stored, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
    const chunks = codec.replay(JSON.stringify(incomplete)).chunks;
    expect((JSON.parse(chunks.at(-1)!) as { type: string }).type).toBe('response.incomplete');
  });
});

describe('the cache of native replies', () => {
  const native = {
    model: 'a-o4',
    input: 'why is the sky blue',
    store: false,
    include: ['reasoning.encrypted_content'],
  };

  it('keys the whole body but for stream, whatever the order of its fields', () => {
    const key = responsesKeyOf('owner:o', native);
    expect(
      responsesKeyOf('owner:o', {
        store: false,
        stream: true,
        include: native.include,
        input: native.input,
        model: 'a-o4',
      }),
    ).toBe(key);
    expect(responsesKeyOf('owner:p', native)).not.toBe(key);
    expect(responsesKeyOf('owner:o', { ...native, include: [] })).not.toBe(key);
    expect(responsesKeyOf('owner:o', { ...native, tools: [{ type: 'web_search' }] })).not.toBe(key);
    expect(responsesKeyOf('owner:o', { ...native, metadata: { a: '1' } })).not.toBe(key);
  });

  it('compares the last user text semantically, everything else in the partition', () => {
    expect(responsesPromptOf(native)).toEqual({ text: 'why is the sky blue', path: ['input'] });
    const items = {
      ...native,
      input: [
        { role: 'user', content: 'first' },
        { role: 'user', content: [{ type: 'input_text', text: 'why is the sky blue' }] },
      ],
    };
    expect(responsesPromptOf(items)).toEqual({ text: 'why is the sky blue', path: ['input', 1, 'content', 0, 'text'] });
    const other = {
      ...items,
      input: [items.input[0], { role: 'user', content: [{ type: 'input_text', text: 'why is grass green' }] }],
    };
    expect(responsesPartitionOf('owner:o', 'e', items, ['input', 1, 'content', 0, 'text'])).toBe(
      responsesPartitionOf('owner:o', 'e', other, ['input', 1, 'content', 0, 'text']),
    );
    expect(responsesPartitionOf('owner:o', 'e', items, ['input', 1, 'content', 0, 'text'])).not.toBe(
      responsesPartitionOf('owner:o', 'e', { ...items, instructions: 'Be brief.' }, ['input', 1, 'content', 0, 'text']),
    );
    expect(items.input[1]).toEqual({ role: 'user', content: [{ type: 'input_text', text: 'why is the sky blue' }] });
    expect(
      responsesPromptOf({ ...native, input: [{ type: 'function_call_output', call_id: 'c', output: 'x' }] }),
    ).toBeUndefined();
    expect(
      responsesPromptOf({
        ...native,
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'a' },
              { type: 'input_image', image_url: 'x' },
            ],
          },
        ],
      }),
    ).toBeUndefined();
  });

  it('stores only a complete response: the result, or the terminal event of a stream that ended', () => {
    const assemble = (entries: Array<{ t: string; d?: string }>) => {
      const assembler = new ResponsesReplyAssembler();
      for (const [i, entry] of entries.entries()) assembler.push({ id: `${i}-0`, ...entry } as never);
      return assembler.completion();
    };
    const json = JSON.stringify(stored);
    expect(assemble([{ t: 'result', d: json }])).toBe(json);
    expect(assemble([{ t: 'result', d: JSON.stringify({ ...stored, status: 'failed' }) }])).toBeUndefined();
    const completed = JSON.stringify({ type: 'response.completed', response: stored });
    const created = JSON.stringify({ type: 'response.created', response: { ...stored, output: [] } });
    expect(assemble([{ t: 'chunk', d: created }, { t: 'chunk', d: completed }, { t: 'end' }])).toBe(json);
    expect(
      assemble([
        { t: 'chunk', d: created },
        { t: 'chunk', d: completed },
      ]),
    ).toBeUndefined();
    expect(
      assemble([
        { t: 'chunk', d: created },
        { t: 'error', d: '{}' },
      ]),
    ).toBeUndefined();
    expect(assemble([{ t: 'chunk', d: created }, { t: 'end' }])).toBeUndefined();
  });
});

describe('reasoning items', () => {
  it('carry a signed thinking block whole, and give it back exactly', () => {
    const block = { type: 'thinking' as const, thinking: 'because', signature: 'EqQBsig==' };
    const item = reasoningItem(block);
    expect(item).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'because' }] });
    expect(item.id).toMatch(/^rs_/);
    expect(blockOf(item.encrypted_content)).toEqual(block);
  });

  it('carry redacted thinking as its data, and unsigned reasoning not at all', () => {
    const redacted = reasoningItem({ type: 'redacted_thinking', data: 'ENCRYPTED' });
    expect(redacted.summary).toEqual([]);
    expect(blockOf(redacted.encrypted_content)).toEqual({ type: 'redacted_thinking', data: 'ENCRYPTED' });
    expect(
      reasoningItem({ type: 'thinking', thinking: 'open reasoning', signature: '' }).encrypted_content,
    ).toBeUndefined();
  });

  it("read no block from another API's encrypted reasoning or a malformed one", () => {
    expect(blockOf('gAAAAopaque')).toBeUndefined();
    expect(blockOf('gwr1.not-json')).toBeUndefined();
    expect(blockOf(`gwr1.${Buffer.from('{"type":"thinking"}').toString('base64url')}`)).toBeUndefined();
    expect(blockOf(undefined)).toBeUndefined();
  });
});
