import { describe, expect, it } from 'vitest';
import { NativeResponsesCodec } from '../../src/doors/responses/native-codec.ts';
import { blockOf, reasoningItem } from '../../src/doors/responses/reasoning-items.ts';
import { ProviderError } from '../../src/errors/catalog.ts';
import { nativeEvent, responseUsage, textPaths, textsAt, withTexts } from '../../src/providers/openai/responses-api.ts';

/**
 * The pure parts of native Responses mode and of reasoning items: which texts
 * of a Responses body DLP sees and how they are written back, the upstream
 * events as the worker reads them, the codec's numbering, and the signed
 * reasoning block's round trip through `encrypted_content`.
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
