import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_VERSION,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  anthropicAdapter,
} from '../../src/providers/anthropic/adapter.ts';
import { mapAnthropicStopReason } from '../../src/providers/anthropic/wire.ts';
import { LEADING_USER_PLACEHOLDER } from '../../src/providers/conversation-turns.ts';
import { UpstreamProtocolError, type SseEvent } from '../../src/providers/types.ts';
import { accumulate, callNonStreamed, callStreamed, chatRequest } from '../support/adapter-round-trip.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';

const endpoint = { baseUrl: 'https://anthropic.example', apiKey: 'ak-test' };

function bodyOf(overrides: Parameters<typeof chatRequest>[0] = {}, stream = false): Record<string, unknown> {
  return JSON.parse(anthropicAdapter.buildRequest(chatRequest(overrides), endpoint, { stream }).body) as Record<
    string,
    unknown
  >;
}

/** An SSE event as Anthropic sends it: the event name repeated as `type` in the data. */
function named(type: string, payload: Record<string, unknown> = {}): SseEvent {
  return { event: type, data: JSON.stringify({ type, ...payload }) };
}

describe('anthropicAdapter.buildRequest', () => {
  it('posts to {base}/v1/messages with the key and version headers', () => {
    const request = anthropicAdapter.buildRequest(chatRequest(), endpoint, { stream: false });
    expect(anthropicAdapter.defaultBaseUrl).toBe('https://api.anthropic.com');
    expect(request.url).toBe('https://anthropic.example/v1/messages');
    expect(request.headers['x-api-key']).toBe('ak-test');
    expect(request.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers).not.toHaveProperty('authorization');
  });

  it('defaults max_tokens and sends only what the client set', () => {
    expect(bodyOf()).toEqual({
      model: 'test-model',
      max_tokens: DEFAULT_ANTHROPIC_MAX_TOKENS,
      messages: [{ role: 'user', content: 'hello there' }],
    });
  });

  it('maps the parameters it can express and drops the ones it cannot', () => {
    const body = bodyOf(
      {
        max_tokens: 99,
        temperature: 0.3,
        top_p: 0.7,
        stop: ['END', '  ', 'STOP'],
        seed: 1,
        presence_penalty: 1,
        frequency_penalty: 1,
      },
      true,
    );
    expect(body).toEqual({
      model: 'test-model',
      max_tokens: 99,
      messages: [{ role: 'user', content: 'hello there' }],
      temperature: 0.3,
      top_p: 0.7,
      stop_sequences: ['END', 'STOP'],
      stream: true,
    });
  });

  it('hoists system and developer messages into system', () => {
    const body = bodyOf({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'Use metric units.' },
        { role: 'user', content: 'How far?' },
      ],
    });
    expect(body.system).toBe('You are terse.\n\nUse metric units.');
    expect(body.messages).toEqual([{ role: 'user', content: 'How far?' }]);
  });

  it('merges consecutive same-role messages and puts a user turn before a leading assistant turn', () => {
    const body = bodyOf({
      messages: [
        { role: 'assistant', content: 'Hi, I am the bot.' },
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'c' },
        { role: 'assistant', content: 'd' },
        { role: 'user', content: 'e' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: LEADING_USER_PLACEHOLDER },
      { role: 'assistant', content: 'Hi, I am the bot.' },
      { role: 'user', content: 'a\n\nb' },
      { role: 'assistant', content: 'c\n\nd' },
      { role: 'user', content: 'e' },
    ]);
  });

  it('trims trailing whitespace off a final assistant (prefill) turn only', () => {
    const body = bodyOf({
      messages: [
        { role: 'user', content: 'Start with a greeting  ' },
        { role: 'assistant', content: 'Dear reader, \n' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Start with a greeting  ' },
      { role: 'assistant', content: 'Dear reader,' },
    ]);
  });
});

describe('anthropicAdapter.validate', () => {
  it('rejects a temperature above 1 with a clear message', () => {
    const message = anthropicAdapter.validate(chatRequest({ temperature: 1.2, model: 'c-sonnet-4-20250514' }));
    expect(message).toMatch(/temperature/);
    expect(message).toMatch(/between 0 and 1/);
    expect(message).toContain('1.2');
  });

  it('accepts temperature 1 and rejects a conversation without turns', () => {
    expect(anthropicAdapter.validate(chatRequest({ temperature: 1 }))).toBeUndefined();
    expect(anthropicAdapter.validate(chatRequest({ messages: [{ role: 'system', content: 'x' }] }))).toMatch(
      /at least one user or assistant message/,
    );
  });

  it('cannot return several choices per call', () => {
    expect(anthropicAdapter.supportsMultipleChoices).toBe(false);
  });
});

describe('anthropicAdapter.parseResponse', () => {
  it('joins the text blocks and maps stop reason and usage', () => {
    const parsed = anthropicAdapter.parseResponse({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 's' },
        { type: 'text', text: 'Hello, ' },
        { type: 'text', text: 'world.' },
      ],
      stop_reason: 'max_tokens',
      usage: { input_tokens: 10, output_tokens: 4, cache_creation_input_tokens: 2, cache_read_input_tokens: 3 },
    });
    expect(parsed.choices).toEqual([{ index: 0, content: 'Hello, world.', finish_reason: 'length' }]);
    // Cached prompt tokens count as prompt tokens, as OpenAI counts them.
    expect(parsed.usage).toEqual({ prompt_tokens: 15, completion_tokens: 4, total_tokens: 19 });
  });

  it.each([
    ['a non-object', null],
    ['no content', { stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }],
    ['no usage', { content: [], stop_reason: 'end_turn' }],
    ['usage without output_tokens', { content: [], usage: { input_tokens: 1 } }],
  ])('throws UpstreamProtocolError on %s', (_name, body) => {
    expect(() => anthropicAdapter.parseResponse(body)).toThrow(UpstreamProtocolError);
  });
});

describe('mapAnthropicStopReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'content_filter'],
    ['tool_use', 'tool_calls'],
    [null, 'stop'],
  ])('%s -> %s', (reason, expected) => {
    expect(mapAnthropicStopReason(reason)).toBe(expected);
  });
});

describe('anthropicAdapter.extractErrorMessage', () => {
  it('reads {type: error, error: {message}}', () => {
    expect(
      anthropicAdapter.extractErrorMessage({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ).toBe('Overloaded');
    expect(anthropicAdapter.extractErrorMessage({ detail: 'x' })).toBeUndefined();
  });
});

describe('Anthropic stream decoder', () => {
  const messageStart = named('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'c',
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 25, output_tokens: 1 },
    },
  });

  it('decodes a realistic event sequence', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    const events = [
      messageStart,
      named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      named('ping'),
      named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
      named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: '!' } }),
      named('content_block_stop', { index: 0 }),
      named('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 15 } }),
    ].flatMap((event) => decoder.push(event));
    expect(decoder.finished).toBe(false);
    expect(decoder.push(named('message_stop'))).toEqual([]);
    expect(decoder.finished).toBe(true);

    expect(events[0]).toEqual({ kind: 'usage', usage: { prompt_tokens: 25, completion_tokens: 1, total_tokens: 26 } });
    expect(accumulate(events)).toEqual({
      texts: ['Hello!'],
      finishReasons: ['stop'],
      usage: { prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 },
      errors: [],
    });
  });

  it('skips thinking and tool-input deltas and unknown events', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    expect(decoder.push(named('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }))).toEqual([]);
    expect(decoder.push(named('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } }))).toEqual([]);
    expect(decoder.push(named('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{' } }))).toEqual([]);
    expect(decoder.push(named('brand_new_event', { whatever: true }))).toEqual([]);
    expect(decoder.finished).toBe(false);
  });

  it('maps a refusal and keeps the input tokens of message_start', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    decoder.push(messageStart);
    const events = decoder.push(named('message_delta', { delta: { stop_reason: 'refusal' }, usage: { output_tokens: 3 } }));
    expect(events).toEqual([
      { kind: 'delta', choice: 0, finish_reason: 'content_filter' },
      { kind: 'usage', usage: { prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 } },
    ]);
  });

  it('yields an error event for an error event', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    expect(decoder.push(named('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }))).toEqual([
      { kind: 'error', message: 'overloaded_error: Overloaded' },
    ]);
    expect(decoder.finished).toBe(false);
  });

  it('throws UpstreamProtocolError on malformed JSON and on a known event of the wrong shape', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    expect(() => decoder.push({ event: 'content_block_delta', data: '{"type": "content_block_delta", "delta": ' })).toThrow(
      UpstreamProtocolError,
    );
    expect(() => decoder.push(named('message_start', { message: 'nope' }))).toThrow(UpstreamProtocolError);
  });
});

describe('Anthropic round trip against the fake upstream', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ format: 'anthropic', apiKey: 'ak-fake' });
  });
  beforeEach(() => upstream.reset());
  afterAll(() => upstream.close());

  const live = () => ({ baseUrl: upstream.url, apiKey: 'ak-fake' });

  it('completes a non-streamed call', async () => {
    const req = chatRequest({
      messages: [
        { role: 'system', content: 'Echo.' },
        { role: 'assistant', content: 'Ready.' },
        { role: 'user', content: 'alpha beta' },
      ],
    });
    const result = await callNonStreamed(anthropicAdapter, req, live());
    expect(result.status).toBe(200);
    expect(result.completion?.choices).toEqual([{ index: 0, content: 'Echo: alpha beta', finish_reason: 'stop' }]);
    // Echo. + placeholder "." + Ready. + alpha beta = 5 words.
    expect(result.completion?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(upstream.requests[0]?.path).toBe('/v1/messages');
    expect(upstream.requests[0]?.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
  });

  it('streams named events to message_stop', async () => {
    const result = await callStreamed(anthropicAdapter, chatRequest({ stream: true }), live());
    expect(result.sse.map((e) => e.event)).toContain('ping');
    expect(result.finished).toBe(true);
    const acc = accumulate(result.events);
    expect(acc.texts).toEqual(['Echo: hello there']);
    expect(acc.finishReasons).toEqual(['stop']);
    expect(acc.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
  });

  it('surfaces the upstream message of a 401', async () => {
    const result = await callNonStreamed(anthropicAdapter, chatRequest(), { baseUrl: upstream.url, apiKey: 'bad' });
    expect(result.status).toBe(401);
    expect(result.errorMessage).toBe('Invalid API key.');
  });
});
