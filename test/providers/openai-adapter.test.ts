import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openAiAdapter } from '../../src/providers/openai/adapter.ts';
import { UpstreamProtocolError, type SseEvent } from '../../src/providers/types.ts';
import { accumulate, callNonStreamed, callStreamed, chatRequest } from '../support/adapter-round-trip.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';

const endpoint = { baseUrl: 'https://upstream.example/v1', apiKey: 'sk-test' };

function bodyOf(stream: boolean, overrides: Parameters<typeof chatRequest>[0] = {}): Record<string, unknown> {
  return JSON.parse(openAiAdapter.buildRequest(chatRequest(overrides), endpoint, { stream }).body) as Record<
    string,
    unknown
  >;
}

function data(value: unknown): SseEvent {
  return { data: JSON.stringify(value) };
}

describe('openAiAdapter.buildRequest', () => {
  it('posts to {baseUrl}/chat/completions with a bearer key', () => {
    const request = openAiAdapter.buildRequest(chatRequest(), endpoint, { stream: false });
    expect(request.url).toBe('https://upstream.example/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(request.headers['content-type']).toBe('application/json');
  });

  it('maps every sampling parameter', () => {
    const body = bodyOf(false, {
      n: 3,
      stop: ['END', '###'],
      temperature: 1.5,
      top_p: 0.9,
      max_tokens: 123,
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
    });
    expect(body).toEqual({
      model: 'test-model',
      messages: [{ role: 'user', content: 'hello there' }],
      n: 3,
      stop: ['END', '###'],
      temperature: 1.5,
      top_p: 0.9,
      max_tokens: 123,
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
    });
  });

  it('leaves out parameters the client did not set, and n when it is 1', () => {
    const body = bodyOf(false);
    expect(Object.keys(body).sort()).toEqual(['messages', 'model']);
  });

  it('sends developer messages as system and keeps names', () => {
    const body = bodyOf(false, {
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'system', content: 'Be kind.' },
        { role: 'user', content: 'hi', name: 'alice' },
        { role: 'assistant', content: 'hello' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Be kind.' },
      { role: 'user', content: 'hi', name: 'alice' },
      { role: 'assistant', content: 'hello' },
    ]);
  });

  it('always asks for usage when streaming, even if the client did not', () => {
    const body = bodyOf(true, { include_usage: false, stream: true });
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
  });

  it('forwards tools, structured outputs, images and the newer parameters as they are', () => {
    const tools = [
      {
        type: 'function' as const,
        function: { name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: true },
      },
    ];
    const messages = [
      {
        role: 'user' as const,
        content: [
          { type: 'text' as const, text: 'what is this?' },
          { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png', detail: 'low' as const } },
        ],
      },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } }],
      },
      { role: 'tool' as const, content: 'sunny', tool_call_id: 'call_1' },
    ];
    const forwarded = {
      messages,
      tools,
      tool_choice: 'required' as const,
      parallel_tool_calls: false,
      response_format: {
        type: 'json_schema' as const,
        json_schema: { name: 'w', schema: { type: 'object' }, strict: true },
      },
      logprobs: true as const,
      top_logprobs: 2,
      max_completion_tokens: 9,
      user: 'u1',
      metadata: { team: 'a' },
      store: false,
      reasoning_effort: 'low' as const,
    };
    const body = bodyOf(false, forwarded);
    expect(body).toMatchObject(forwarded);
    // Reasoning models reject max_tokens: only the field the client used is sent.
    expect(body).not.toHaveProperty('max_tokens');
    expect(openAiAdapter.unsupportedParams(chatRequest({ seed: 1, logprobs: true, metadata: { a: 'b' } }))).toEqual([]);
  });

  it('does not forward service_tier', () => {
    expect(bodyOf(false, { service_tier: 'flex' })).not.toHaveProperty('service_tier');
  });

  it('accepts every request', () => {
    expect(openAiAdapter.validate(chatRequest({ temperature: 2, n: 8 }))).toBeUndefined();
  });
});

describe('openAiAdapter.parseResponse', () => {
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

  it('reads choices, finish reasons and usage', () => {
    const parsed = openAiAdapter.parseResponse({
      id: 'x',
      object: 'chat.completion',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'a' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: 'b' }, finish_reason: 'length' },
        { index: 2, message: { role: 'assistant', content: 'c' }, finish_reason: 'content_filter' },
        { index: 3, message: { role: 'assistant', content: null }, finish_reason: 'tool_calls' },
        { index: 4, message: { role: 'assistant', content: '' }, finish_reason: 'function_call' },
      ],
      usage,
      system_fingerprint: 'fp',
    });
    const text = (content: string) => ({ role: 'assistant', content });
    expect(parsed.choices).toEqual([
      { index: 0, message: text('a'), finish_reason: 'stop' },
      { index: 1, message: text('b'), finish_reason: 'length' },
      { index: 2, message: text('c'), finish_reason: 'content_filter' },
      { index: 3, message: text(''), finish_reason: 'tool_calls' },
      { index: 4, message: text(''), finish_reason: 'tool_calls' },
    ]);
    expect(parsed.usage).toEqual(usage);
  });

  it('keeps a refusal as a refusal, with null content', () => {
    const parsed = openAiAdapter.parseResponse({
      choices: [{ index: 0, message: { content: null, refusal: 'I cannot help.' }, finish_reason: 'stop' }],
      usage,
    });
    expect(parsed.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, refusal: 'I cannot help.' },
      finish_reason: 'stop',
    });
  });

  it('reads tool calls and logprobs', () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const logprobs = { content: [{ token: 'a', logprob: -0.1, bytes: [97], top_logprobs: [] }], refusal: null };
    const parsed = openAiAdapter.parseResponse({
      choices: [
        { index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' },
        { index: 1, message: { role: 'assistant', content: 'a' }, finish_reason: 'stop', logprobs },
      ],
      usage,
    });
    expect(parsed.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [call] },
      finish_reason: 'tool_calls',
    });
    expect(parsed.choices[1]?.logprobs).toEqual(logprobs);
  });

  it.each([
    ['a non-object', 'oops'],
    ['no choices', { usage }],
    ['no usage', { choices: [] }],
    ['a choice without message', { choices: [{ index: 0, finish_reason: 'stop' }], usage }],
    ['a numeric content', { choices: [{ index: 0, message: { content: 3 }, finish_reason: 'stop' }], usage }],
  ])('throws UpstreamProtocolError on %s', (_name, body) => {
    expect(() => openAiAdapter.parseResponse(body)).toThrow(UpstreamProtocolError);
  });
});

describe('openAiAdapter.extractErrorMessage', () => {
  it('reads {error: {message}}', () => {
    expect(openAiAdapter.extractErrorMessage({ error: { message: 'Rate limit reached', type: 'requests' } })).toBe(
      'Rate limit reached',
    );
  });

  it('reads a bare string error and gives up on anything else', () => {
    expect(openAiAdapter.extractErrorMessage({ error: 'boom' })).toBe('boom');
    expect(openAiAdapter.extractErrorMessage({ message: 'nope' })).toBeUndefined();
    expect(openAiAdapter.extractErrorMessage('text')).toBeUndefined();
  });
});

describe('OpenAI stream decoder', () => {
  const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm' };

  it('decodes interleaved choices, the usage chunk and [DONE]', () => {
    const decoder = openAiAdapter.createStreamDecoder();
    const events = [
      data({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        usage: null,
      }),
      data({
        ...base,
        choices: [{ index: 1, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        usage: null,
      }),
      data({ ...base, choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }], usage: null }),
      data({ ...base, choices: [{ index: 1, delta: { content: 'Bye' }, finish_reason: null }], usage: null }),
      data({ ...base, choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }], usage: null }),
      data({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }),
      data({ ...base, choices: [{ index: 1, delta: {}, finish_reason: 'length' }], usage: null }),
      data({ ...base, choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } }),
    ].flatMap((event) => decoder.push(event));
    expect(decoder.finished).toBe(false);
    expect(decoder.push({ data: '[DONE]' })).toEqual([]);
    expect(decoder.finished).toBe(true);

    expect(events[0]).toEqual({ kind: 'delta', choice: 0, content: 'Hel' });
    expect(accumulate(events)).toEqual({
      texts: ['Hello', 'Bye'],
      toolCalls: [[], []],
      finishReasons: ['stop', 'length'],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
      errors: [],
    });
  });

  it('turns an in-stream error object into an error event', () => {
    const decoder = openAiAdapter.createStreamDecoder();
    expect(decoder.push(data({ error: { message: 'server overloaded', type: 'server_error' } }))).toEqual([
      { kind: 'error', message: 'server overloaded' },
    ]);
    expect(decoder.finished).toBe(false);
  });

  it('ignores unknown fields and named events', () => {
    const decoder = openAiAdapter.createStreamDecoder();
    const events = decoder.push({
      event: 'something-new',
      data: JSON.stringify({
        ...base,
        choices: [{ index: 0, delta: { content: 'x', reasoning: 'hm' }, logprobs: null }],
        extra: 1,
      }),
    });
    expect(events).toEqual([{ kind: 'delta', choice: 0, content: 'x' }]);
  });

  it('passes tool-call pieces, refusals and logprobs through', () => {
    const decoder = openAiAdapter.createStreamDecoder();
    const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } };
    const events = [
      { index: 0, delta: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: null },
      { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }, finish_reason: null },
      { index: 0, delta: { refusal: 'no' }, finish_reason: null, logprobs: { content: null, refusal: [] } },
      { index: 0, delta: {}, finish_reason: 'tool_calls' },
    ].flatMap((choice) => decoder.push({ data: JSON.stringify({ ...base, choices: [choice] }) }));
    expect(events).toEqual([
      { kind: 'delta', choice: 0, tool_calls: [call] },
      { kind: 'delta', choice: 0, tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] },
      { kind: 'delta', choice: 0, refusal: 'no', logprobs: { content: null, refusal: [] } },
      { kind: 'delta', choice: 0, finish_reason: 'tool_calls' },
    ]);
  });

  it('throws UpstreamProtocolError on malformed JSON and on a chunk without choices', () => {
    const decoder = openAiAdapter.createStreamDecoder();
    expect(() => decoder.push({ data: '{"choices": [' })).toThrow(UpstreamProtocolError);
    expect(() => decoder.push(data({ id: 'x' }))).toThrow(UpstreamProtocolError);
    // Each of these is refused by the schema, whichever check reads it first.
    for (const choices of [
      [{ index: -1, delta: { content: 'x' } }],
      [{ index: 0.5, delta: { content: 'x' } }],
      [{ index: 0, delta: ['x'] }],
      [{ index: 0, delta: { content: 7 } }],
      [{ index: 0, delta: { tool_calls: [{ id: 'call_1' }] } }],
      [{ index: 0, delta: { content: 'x' }, finish_reason: 1 }],
      ['x'],
    ])
      expect(() => decoder.push(data({ ...base, choices })), JSON.stringify(choices)).toThrow(UpstreamProtocolError);
  });
});

describe('OpenAI round trip against the fake upstream', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ format: 'openai', apiKey: 'sk-fake' });
  });
  beforeEach(() => upstream.reset());
  afterAll(() => upstream.close());

  const live = () => ({ baseUrl: upstream.url, apiKey: 'sk-fake' });

  it('completes a non-streamed call with n choices and usage', async () => {
    const req = chatRequest({
      n: 2,
      messages: [
        { role: 'system', content: 'You echo.' },
        { role: 'user', content: 'one two three' },
      ],
    });
    const result = await callNonStreamed(openAiAdapter, req, live());
    expect(result.status).toBe(200);
    expect(result.completion?.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '[0] Echo: one two three' }, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: '[1] Echo: one two three' }, finish_reason: 'stop' },
    ]);
    // 5 input words; each choice is 5 words.
    expect(result.completion?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 10, total_tokens: 15 });
    expect(upstream.requests[0]?.path).toBe('/v1/chat/completions');
  });

  it('streams deltas, usage and [DONE]', async () => {
    const result = await callStreamed(openAiAdapter, chatRequest({ stream: true }), live());
    expect(result.finished).toBe(true);
    expect(result.sse.at(-1)?.data).toBe('[DONE]');
    const acc = accumulate(result.events);
    expect(acc.texts).toEqual(['Echo: hello there']);
    expect(acc.finishReasons).toEqual(['stop']);
    expect(acc.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    expect(result.events.filter((e) => e.kind === 'delta' && e.content !== undefined)).toHaveLength(3);
  });

  it('surfaces the upstream message of a 401', async () => {
    const result = await callNonStreamed(openAiAdapter, chatRequest(), { baseUrl: upstream.url, apiKey: 'wrong' });
    expect(result.status).toBe(401);
    expect(result.errorMessage).toBe('Invalid API key.');
  });
});
