import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest, FunctionTool, ToolCall } from '../../src/chat/types.ts';
import {
  ANTHROPIC_VERSION,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  anthropicAdapter,
} from '../../src/providers/anthropic/adapter.ts';
import { JSON_MODE_TOOL } from '../../src/providers/anthropic/structured-output.ts';
import { mapAnthropicStopReason } from '../../src/providers/anthropic/wire.ts';
import { LEADING_USER_PLACEHOLDER } from '../../src/providers/conversation-turns.ts';
import { UpstreamProtocolError, type SseEvent, type StreamEvent } from '../../src/providers/types.ts';
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

function tool(name: string, parameters?: Record<string, unknown>, description?: string): FunctionTool {
  const fn: FunctionTool['function'] = { name };
  if (description !== undefined) fn.description = description;
  if (parameters !== undefined) fn.parameters = parameters;
  return { type: 'function', function: fn };
}

function call(id: string, name: string, args: string): ToolCall {
  return { id, type: 'function', function: { name, arguments: args } };
}

const WEATHER = tool(
  'get_weather',
  { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  'Weather of a city.',
);
const TIME = tool('get_time');

/** A 1x1 PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Folds streamed tool-call pieces by index, as an OpenAI client does. */
function foldToolCalls(events: readonly StreamEvent[]): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const event of events) {
    if (event.kind !== 'delta') continue;
    for (const piece of event.tool_calls ?? []) {
      const existing = calls[piece.index] ?? { id: '', type: 'function', function: { name: '', arguments: '' } };
      calls[piece.index] = existing;
      if (piece.id !== undefined) existing.id = piece.id;
      if (piece.function?.name !== undefined) existing.function.name += piece.function.name;
      if (piece.function?.arguments !== undefined) existing.function.arguments += piece.function.arguments;
    }
  }
  return calls;
}

/** A tool-calling exchange: the question, the calls, their results. */
const TOOL_HISTORY: ChatMessage[] = [
  { role: 'user', content: 'Weather and time in Oslo?' },
  {
    role: 'assistant',
    content: 'Let me look.',
    tool_calls: [call('call_1', 'get_weather', '{"city":"Oslo"}'), call('call_2', 'get_time', '')],
  },
  { role: 'tool', tool_call_id: 'call_1', content: '12 C, rain' },
  { role: 'tool', tool_call_id: 'call_2', content: '' },
];

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

  it('maps the parameters it can express and sends none of the ones it cannot', () => {
    const body = bodyOf(
      {
        max_tokens: 99,
        temperature: 0.3,
        top_p: 0.7,
        stop: ['END', '  ', 'STOP'],
        seed: 1,
        presence_penalty: 1,
        frequency_penalty: 1,
        user: 'user-42',
        metadata: { team: 'a' },
        service_tier: 'flex',
        reasoning_effort: 'high',
        store: true,
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
      metadata: { user_id: 'user-42' },
      stream: true,
    });
  });

  it('takes max_completion_tokens before max_tokens', () => {
    expect(bodyOf({ max_tokens: 10, max_completion_tokens: 20 }).max_tokens).toBe(20);
    expect(bodyOf({ max_completion_tokens: 30 }).max_tokens).toBe(30);
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

describe('anthropicAdapter.buildRequest: tools', () => {
  it('declares function tools with an input schema, defaulting it when there are no parameters', () => {
    const body = bodyOf({
      tools: [
        WEATHER,
        TIME,
        tool('empty', {}),
        tool('untyped', { properties: { q: { type: 'string' } } }),
        {
          type: 'function',
          function: { name: 'strict_one', parameters: { type: 'object', properties: {} }, strict: true },
        },
      ],
    });
    expect(body.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather of a city.',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
      { name: 'empty', input_schema: { type: 'object', properties: {} } },
      { name: 'untyped', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
      // `strict` is not sent (see tools.ts).
      { name: 'strict_one', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(body).not.toHaveProperty('tool_choice');
  });

  it.each([
    ['auto', undefined, { type: 'auto' }],
    ['required', undefined, { type: 'any' }],
    ['none', undefined, { type: 'none' }],
    [{ type: 'function', function: { name: 'get_time' } }, undefined, { type: 'tool', name: 'get_time' }],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    ['auto', false, { type: 'auto', disable_parallel_tool_use: true }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    [
      { type: 'function', function: { name: 'get_time' } },
      false,
      { type: 'tool', name: 'get_time', disable_parallel_tool_use: true },
    ],
    ['none', false, { type: 'none' }],
    [undefined, true, undefined],
  ] as const)('tool_choice %j with parallel_tool_calls %j -> %j', (choice, parallel, expected) => {
    const overrides: Partial<ChatRequest> = { tools: [WEATHER, TIME] };
    if (choice !== undefined) overrides.tool_choice = structuredClone(choice) as ChatRequest['tool_choice'];
    if (parallel !== undefined) overrides.parallel_tool_calls = parallel;
    expect(bodyOf(overrides).tool_choice).toEqual(expected);
  });

  it('sends no tools nor tool_choice when the request has no tools', () => {
    const body = bodyOf({ parallel_tool_calls: false });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
  });

  it('turns tool calls into tool_use blocks and tool messages into tool_result blocks', () => {
    const body = bodyOf({
      tools: [WEATHER, TIME],
      messages: [...TOOL_HISTORY, { role: 'user', content: 'Thanks. Umbrella?' }],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather and time in Oslo?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } },
          // Empty arguments are an empty input.
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '12 C, rain' },
          // An empty result has no content: the API rejects empty text.
          { type: 'tool_result', tool_use_id: 'call_2' },
          { type: 'text', text: 'Thanks. Umbrella?' },
        ],
      },
    ]);
  });

  it('puts tool results first in their user message even when the client sent a user message before them', () => {
    const body = bodyOf({
      tools: [TIME],
      messages: [
        { role: 'user', content: 'Time?' },
        { role: 'assistant', content: null, tool_calls: [call('call_9', 'get_time', '{}')] },
        { role: 'user', content: 'Hurry.' },
        { role: 'tool', tool_call_id: 'call_9', content: '10:00' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Time?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_9', name: 'get_time', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_9', content: '10:00' },
          { type: 'text', text: 'Hurry.' },
        ],
      },
    ]);
  });
});

describe('anthropicAdapter.buildRequest: images and response_format', () => {
  it('sends data: URLs as base64 sources and https URLs as url sources, in order with the text', () => {
    const body = bodyOf({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'low' } },
            { type: 'text', text: 'Compare with' },
            { type: 'image_url', image_url: { url: 'https://images.example/cat.jpg' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
          { type: 'text', text: 'Compare with' },
          { type: 'image', source: { type: 'url', url: 'https://images.example/cat.jpg' } },
        ],
      },
    ]);
  });

  it('sends a json_schema as output_config.format, keeping the client tools', () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const body = bodyOf({
      tools: [TIME],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(body.tools).toEqual([{ name: 'get_time', input_schema: { type: 'object', properties: {} } }]);
    expect(body).not.toHaveProperty('tool_choice');
  });

  it.each([
    ['json_object', { type: 'json_object' }],
    ['json_schema without a schema', { type: 'json_schema', json_schema: { name: 'anything' } }],
  ] as const)('expresses %s as a forced JSON-mode tool', (_name, format) => {
    const body = bodyOf({ response_format: structuredClone(format) as ChatRequest['response_format'] });
    expect(body.tools).toEqual([
      { name: JSON_MODE_TOOL, description: expect.any(String), input_schema: { type: 'object' } },
    ]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: JSON_MODE_TOOL, disable_parallel_tool_use: true });
    expect(body).not.toHaveProperty('output_config');
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

  it('accepts a well-formed tool exchange', () => {
    expect(anthropicAdapter.validate(chatRequest({ tools: [WEATHER, TIME], messages: TOOL_HISTORY }))).toBeUndefined();
  });

  it('rejects a tool result that answers no earlier call', () => {
    const message = anthropicAdapter.validate(
      chatRequest({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'call_nope', content: 'r' },
        ],
      }),
    );
    expect(message).toMatch(/call_nope/);
    expect(message).toMatch(/no earlier assistant message called/);
  });

  it('rejects a tool result sent after a later assistant message, and a call left unanswered', () => {
    const late = anthropicAdapter.validate(
      chatRequest({
        tools: [TIME],
        messages: [
          { role: 'user', content: 'Time?' },
          { role: 'assistant', content: null, tool_calls: [call('call_1', 'get_time', '{}')] },
          { role: 'tool', tool_call_id: 'call_1', content: '10:00' },
          { role: 'assistant', content: 'It is ten.' },
          { role: 'tool', tool_call_id: 'call_1', content: '10:01' },
        ],
      }),
    );
    expect(late).toMatch(/tool_call_id 'call_1' must come after the assistant message that made the call/);

    const unanswered = anthropicAdapter.validate(
      chatRequest({
        tools: [TIME],
        messages: [
          { role: 'user', content: 'Time?' },
          { role: 'assistant', content: null, tool_calls: [call('call_1', 'get_time', '{}')] },
          { role: 'user', content: 'Never mind.' },
        ],
      }),
    );
    expect(unanswered).toMatch(/tool call 'call_1' \(function 'get_time'\) has no 'tool' message answering it/);
  });

  it.each([
    ['not JSON', '{"city": '],
    ['not an object', '["Oslo"]'],
  ])('rejects call arguments that are %s, naming the call', (_name, args) => {
    const message = anthropicAdapter.validate(
      chatRequest({
        tools: [WEATHER],
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [call('call_bad', 'get_weather', args)] },
          { role: 'tool', tool_call_id: 'call_bad', content: 'sunny' },
        ],
      }),
    );
    expect(message).toMatch(/tool call 'call_bad' \(function 'get_weather'\) are not a JSON object/);
  });

  it('rejects function parameters that are not an object schema', () => {
    expect(anthropicAdapter.validate(chatRequest({ tools: [tool('listy', { type: 'array' })] }))).toMatch(
      /parameters of function 'listy' must be a JSON schema of type 'object'/,
    );
  });

  it('rejects an inline image of a type the API does not read', () => {
    const message = anthropicAdapter.validate(
      chatRequest({
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,AAAA' } }] },
        ],
      }),
    );
    expect(message).toMatch(/image type 'image\/bmp' is not supported/);
  });

  it('rejects JSON mode with client tools, and a client tool named like the JSON-mode tool', () => {
    expect(anthropicAdapter.validate(chatRequest({ tools: [TIME], response_format: { type: 'json_object' } }))).toMatch(
      /json_object .*cannot be combined with 'tools' for provider_c/,
    );
    expect(anthropicAdapter.validate(chatRequest({ tools: [tool(JSON_MODE_TOOL)] }))).toMatch(
      /is reserved by the gateway/,
    );
    const schema = { type: 'object', properties: {} };
    expect(
      anthropicAdapter.validate(
        chatRequest({ tools: [TIME], response_format: { type: 'json_schema', json_schema: { name: 's', schema } } }),
      ),
    ).toBeUndefined();
  });
});

describe('anthropicAdapter.unsupportedParams', () => {
  it('lists nothing for a request it can express whole', () => {
    const req = chatRequest({
      max_tokens: 5,
      temperature: 0.5,
      top_p: 0.9,
      stop: ['x'],
      n: 3,
      service_tier: 'flex',
      user: 'u',
      store: false,
      tools: [TIME],
      tool_choice: 'required',
      parallel_tool_calls: false,
      response_format: { type: 'json_object' },
    });
    expect(anthropicAdapter.unsupportedParams(req)).toEqual([]);
  });

  it('lists the fields the Messages API cannot honour', () => {
    const req = chatRequest({
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      logprobs: true,
      top_logprobs: 3,
      metadata: { team: 'a' },
      store: true,
      reasoning_effort: 'low',
    });
    expect(anthropicAdapter.unsupportedParams(req).sort()).toEqual(
      [
        'frequency_penalty',
        'logprobs',
        'metadata',
        'presence_penalty',
        'reasoning_effort',
        'seed',
        'store',
        'top_logprobs',
      ].sort(),
    );
  });
});

describe('anthropicAdapter.parseResponse', () => {
  it('joins the text blocks, keeps thinking blocks verbatim, and maps stop reason and usage', () => {
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
    expect(parsed.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Hello, world.',
          thinking: [{ type: 'thinking', thinking: 'hmm', signature: 's' }],
        },
        finish_reason: 'length',
      },
    ]);
    // Cached prompt tokens count as prompt tokens, as OpenAI counts them, and are its details.
    expect(parsed.usage).toEqual({
      prompt_tokens: 15,
      completion_tokens: 4,
      total_tokens: 19,
      prompt_tokens_details: { cached_tokens: 3, cache_write_tokens: 2 },
    });
  });

  const usage = { input_tokens: 3, output_tokens: 2 };

  it('turns tool_use blocks into tool calls, with null content when there is no text', () => {
    const parsed = anthropicAdapter.parseResponse({
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      usage,
    });
    expect(parsed.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('keeps the text that comes with tool calls', () => {
    const parsed = anthropicAdapter.parseResponse({
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      usage,
    });
    expect(parsed.choices[0]?.message.content).toBe('Checking.');
    expect(parsed.choices[0]?.message.tool_calls).toHaveLength(1);
  });

  it('gives the JSON-mode tool input as content, finished, without a tool call', () => {
    const parsed = anthropicAdapter.parseResponse({
      content: [{ type: 'tool_use', id: 'toolu_j', name: JSON_MODE_TOOL, input: { answer: 42, tags: ['a'] } }],
      stop_reason: 'tool_use',
      usage,
    });
    expect(parsed.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '{"answer":42,"tags":["a"]}' }, finish_reason: 'stop' },
    ]);
  });

  it('reads a native JSON output as text', () => {
    const parsed = anthropicAdapter.parseResponse({
      content: [{ type: 'text', text: '{"answer":"yes"}' }],
      stop_reason: 'end_turn',
      usage,
    });
    expect(JSON.parse(parsed.choices[0]?.message.content ?? '')).toEqual({ answer: 'yes' });
  });

  it.each([
    ['a non-object', null],
    ['no content', { stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }],
    ['no usage', { content: [], stop_reason: 'end_turn' }],
    ['usage without output_tokens', { content: [], usage: { input_tokens: 1 } }],
    [
      'a tool_use block without id',
      { content: [{ type: 'tool_use', name: 'f', input: {} }], usage: { input_tokens: 1, output_tokens: 1 } },
    ],
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
      anthropicAdapter.extractErrorMessage({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Overloaded' },
      }),
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
      toolCalls: [[]],
      finishReasons: ['stop'],
      usage: { prompt_tokens: 25, completion_tokens: 15, total_tokens: 40 },
      errors: [],
    });
  });

  it('passes thinking and signature deltas on as reasoning pieces, numbered among the reasoning blocks', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    expect(
      decoder.push(
        named('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      ),
    ).toEqual([{ kind: 'delta', choice: 0, thinking: { index: 0, type: 'thinking' } }]);
    expect(
      decoder.push(named('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } })),
    ).toEqual([{ kind: 'delta', choice: 0, thinking: { index: 0, thinking: 'hm' } }]);
    expect(
      decoder.push(named('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQB' } })),
    ).toEqual([{ kind: 'delta', choice: 0, thinking: { index: 0, signature: 'EqQB' } }]);
    expect(
      decoder.push(
        named('content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } }),
      ),
    ).toEqual([{ kind: 'delta', choice: 0, thinking: { index: 1, type: 'redacted_thinking', data: 'opaque' } }]);
  });

  it('skips input of blocks that are not client tool calls, and unknown events', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    expect(
      decoder.push(
        named('content_block_start', {
          index: 1,
          content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
        }),
      ),
    ).toEqual([]);
    expect(
      decoder.push(named('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{' } })),
    ).toEqual([]);
    expect(decoder.push(named('brand_new_event', { whatever: true }))).toEqual([]);
    expect(decoder.finished).toBe(false);
  });

  it('streams two tool calls with interleaved input fragments in OpenAI shape', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    const push = (event: SseEvent) => decoder.push(event);
    const fragment = (index: number, partial: string) =>
      named('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } });
    const events = [
      messageStart,
      named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'On it.' } }),
      named('content_block_stop', { index: 0 }),
      named('content_block_start', {
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: {} },
      }),
      fragment(1, ''),
      fragment(1, '{"city":'),
      named('content_block_start', {
        index: 2,
        content_block: { type: 'tool_use', id: 'toolu_b', name: 'get_time', input: {} },
      }),
      fragment(2, '{"tz":"CET'),
      fragment(1, ' "Oslo"}'),
      fragment(2, '"}'),
      named('content_block_stop', { index: 1 }),
      named('content_block_stop', { index: 2 }),
      named('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } }),
      named('message_stop'),
    ].flatMap(push);

    const deltas = events.filter((event) => event.kind === 'delta' && event.tool_calls !== undefined);
    expect(deltas.map((event) => event.kind === 'delta' && event.tool_calls)).toEqual([
      [{ index: 0, id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      [{ index: 0, function: { arguments: '{"city":' } }],
      [{ index: 1, id: 'toolu_b', type: 'function', function: { name: 'get_time', arguments: '' } }],
      [{ index: 1, function: { arguments: '{"tz":"CET' } }],
      [{ index: 0, function: { arguments: ' "Oslo"}' } }],
      [{ index: 1, function: { arguments: '"}' } }],
    ]);
    expect(foldToolCalls(events)).toEqual([
      { id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } },
      { id: 'toolu_b', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } },
    ]);
    const acc = accumulate(events);
    // The gateway's own accumulator reads the pieces the same way.
    expect(acc.toolCalls).toEqual([foldToolCalls(events)]);
    expect(acc.texts).toEqual(['On it.']);
    expect(acc.finishReasons).toEqual(['tool_calls']);
    expect(decoder.finished).toBe(true);
  });

  it('streams the JSON-mode tool input as content and finishes with stop', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    const events = [
      messageStart,
      named('content_block_start', {
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_j', name: JSON_MODE_TOOL, input: {} },
      }),
      named('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"answer"' } }),
      named('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: ': 42}' } }),
      named('content_block_stop', { index: 0 }),
      named('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
    ].flatMap((event) => decoder.push(event));
    expect(foldToolCalls(events)).toEqual([]);
    const acc = accumulate(events);
    expect(JSON.parse(acc.texts[0] ?? '')).toEqual({ answer: 42 });
    expect(acc.finishReasons).toEqual(['stop']);
  });

  it('throws UpstreamProtocolError on a tool_use block start without index or id', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    expect(() =>
      decoder.push(
        named('content_block_start', { content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } }),
      ),
    ).toThrow(UpstreamProtocolError);
    expect(() =>
      decoder.push(
        named('content_block_start', { index: 0, content_block: { type: 'tool_use', name: 'f', input: {} } }),
      ),
    ).toThrow(UpstreamProtocolError);
  });

  it('reads a text delta, and refuses a malformed one whichever check reads it first', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    expect(decoder.push(named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }))).toEqual(
      [{ kind: 'delta', choice: 0, content: 'Hi' }],
    );
    for (const body of [
      { index: -1, delta: { type: 'text_delta', text: 'x' } },
      { index: null, delta: { type: 'text_delta', text: 'x' } },
      { index: 0, delta: ['x'] },
      { index: 0, delta: { type: 'text_delta', text: 'x', thinking: 7 } },
      { index: 0, delta: { text: 'x' } },
    ])
      expect(() => decoder.push(named('content_block_delta', body)), JSON.stringify(body)).toThrow(
        UpstreamProtocolError,
      );
  });

  it('maps a refusal and keeps the input tokens of message_start', () => {
    const decoder = anthropicAdapter.createStreamDecoder();
    decoder.push(messageStart);
    const events = decoder.push(
      named('message_delta', { delta: { stop_reason: 'refusal' }, usage: { output_tokens: 3 } }),
    );
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
    expect(() =>
      decoder.push({ event: 'content_block_delta', data: '{"type": "content_block_delta", "delta": ' }),
    ).toThrow(UpstreamProtocolError);
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
    expect(result.completion?.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'Echo: alpha beta' }, finish_reason: 'stop' },
    ]);
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

  it('asks for a tool call and reads it back, streamed and not', async () => {
    const req = chatRequest({ tools: [WEATHER, TIME], messages: [{ role: 'user', content: 'Weather in Oslo?' }] });
    const result = await callNonStreamed(anthropicAdapter, req, live());
    expect(result.status).toBe(200);
    expect(result.completion?.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_fake_0_get_weather',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"input":"Weather in Oslo?"}' },
            },
          ],
        },
        finish_reason: 'tool_calls',
      },
    ]);
    expect(upstream.requests[0]?.body).toMatchObject({ tools: [{ name: 'get_weather' }, { name: 'get_time' }] });

    const streamed = await callStreamed(anthropicAdapter, { ...req, stream: true }, live());
    expect(streamed.finished).toBe(true);
    expect(foldToolCalls(streamed.events)).toEqual(result.completion?.choices[0]?.message.tool_calls);
    expect(accumulate(streamed.events).finishReasons).toEqual(['tool_calls']);
  });

  it('calls two tools in parallel unless parallel calls are off, and honours a forced tool', async () => {
    const base = chatRequest({
      tools: [WEATHER, TIME],
      messages: [{ role: 'user', content: 'Both please [parallel]' }],
    });
    const parallel = await callStreamed(anthropicAdapter, { ...base, stream: true }, live());
    expect(foldToolCalls(parallel.events).map((c) => c.function.name)).toEqual(['get_weather', 'get_time']);

    const single = await callNonStreamed(anthropicAdapter, { ...base, parallel_tool_calls: false }, live());
    expect(single.completion?.choices[0]?.message.tool_calls?.map((c) => c.function.name)).toEqual(['get_weather']);

    const forced = await callNonStreamed(
      anthropicAdapter,
      { ...base, tool_choice: { type: 'function', function: { name: 'get_time' } } },
      live(),
    );
    expect(forced.completion?.choices[0]?.message.tool_calls?.map((c) => c.function.name)).toEqual(['get_time']);
    // A forced tool gets an input that follows its schema, streamed or not.
    const forcedWeather = { ...base, tool_choice: { type: 'function', function: { name: 'get_weather' } } } as const;
    const sync = await callNonStreamed(anthropicAdapter, forcedWeather, live());
    expect(JSON.parse(sync.completion?.choices[0]?.message.tool_calls?.[0]?.function.arguments ?? '')).toEqual({
      city: 'Both please [parallel]',
    });
    const streamedForced = await callStreamed(anthropicAdapter, { ...forcedWeather, stream: true }, live());
    expect(JSON.parse(foldToolCalls(streamedForced.events)[0]?.function.arguments ?? '')).toEqual({
      city: 'Both please [parallel]',
    });

    const none = await callNonStreamed(anthropicAdapter, { ...base, tool_choice: 'none' }, live());
    expect(none.completion?.choices[0]).toMatchObject({
      message: { content: 'Echo: Both please [parallel]' },
      finish_reason: 'stop',
    });
  });

  it('sends the tool results of a follow-up, which the upstream answers from', async () => {
    const first = await callNonStreamed(
      anthropicAdapter,
      chatRequest({ tools: [WEATHER], messages: [{ role: 'user', content: 'Oslo?' }] }),
      live(),
    );
    const reply = first.completion?.choices[0]?.message;
    const calls = reply?.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    const followUp = chatRequest({
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Oslo?' },
        { role: 'assistant', content: reply?.content ?? null, tool_calls: calls },
        ...calls.map((c): ChatMessage => ({ role: 'tool', tool_call_id: c.id, content: '12 C and rain' })),
      ],
    });
    expect(anthropicAdapter.validate(followUp)).toBeUndefined();
    const second = await callNonStreamed(anthropicAdapter, followUp, live());
    expect(second.status).toBe(200);
    expect(second.completion?.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Tool said: 12 C and rain' },
      finish_reason: 'stop',
    });
    const streamed = await callStreamed(anthropicAdapter, { ...followUp, stream: true }, live());
    expect(accumulate(streamed.events).texts).toEqual(['Tool said: 12 C and rain']);
  });

  it('returns JSON that follows a json_schema, streamed and not', async () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        celsius: { type: 'number' },
        rainy: { type: 'boolean' },
        kind: { enum: ['rain', 'sun'] },
      },
      required: ['city', 'celsius', 'rainy', 'kind'],
      additionalProperties: false,
    };
    const req = chatRequest({
      messages: [{ role: 'user', content: 'Oslo weather as JSON' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    const result = await callNonStreamed(anthropicAdapter, req, live());
    expect(result.status).toBe(200);
    expect(upstream.requests[0]?.body).toMatchObject({ output_config: { format: { type: 'json_schema', schema } } });
    const expected = { city: 'Oslo weather as JSON', celsius: 42, rainy: true, kind: 'rain' };
    expect(result.completion?.choices[0]?.finish_reason).toBe('stop');
    expect(JSON.parse(result.completion?.choices[0]?.message.content ?? '')).toEqual(expected);

    const streamed = await callStreamed(anthropicAdapter, { ...req, stream: true }, live());
    expect(JSON.parse(accumulate(streamed.events).texts[0] ?? '')).toEqual(expected);
  });

  it('returns a JSON object as content in JSON mode, never the tool call behind it', async () => {
    const req = chatRequest({
      messages: [{ role: 'user', content: 'Reply in JSON' }],
      response_format: { type: 'json_object' },
    });
    const result = await callNonStreamed(anthropicAdapter, req, live());
    expect(result.status).toBe(200);
    const choice = result.completion?.choices[0];
    expect(choice?.finish_reason).toBe('stop');
    expect(choice?.message.tool_calls).toBeUndefined();
    expect(JSON.parse(choice?.message.content ?? '')).toEqual({ echo: 'Reply in JSON' });

    const streamed = await callStreamed(anthropicAdapter, { ...req, stream: true }, live());
    expect(foldToolCalls(streamed.events)).toEqual([]);
    const acc = accumulate(streamed.events);
    expect(JSON.parse(acc.texts[0] ?? '')).toEqual({ echo: 'Reply in JSON' });
    expect(acc.finishReasons).toEqual(['stop']);
  });

  it('sends inline and URL images the upstream accepts', async () => {
    const req = chatRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What differs?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
            { type: 'image_url', image_url: { url: 'https://images.example/b.png' } },
          ],
        },
      ],
    });
    const result = await callNonStreamed(anthropicAdapter, req, live());
    expect(result.status).toBe(200);
    expect(result.completion?.choices[0]?.message.content).toBe('Echo: What differs? (+2 images)');
  });

  it('is refused by the fake as by the real API when images, tool results or fields are wrong', async () => {
    const post = async (body: Record<string, unknown>) => {
      const res = await fetch(`${upstream.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'ak-fake', 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'c', max_tokens: 10, ...body }),
      });
      return { status: res.status, message: anthropicAdapter.extractErrorMessage(await res.json()) };
    };
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    const callTurn = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] };
    const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' };

    expect(await post({ seed: 1, messages: [{ role: 'user', content: 'x' }] })).toEqual({
      status: 400,
      message: 'seed: Extra inputs are not permitted',
    });
    expect(
      (
        await post({
          messages: [
            {
              role: 'user',
              content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'not base64!' } }],
            },
          ],
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await post({
          messages: [
            {
              role: 'user',
              content: [{ type: 'image', source: { type: 'url', url: 'http://insecure.example/a.png' } }],
            },
          ],
        })
      ).status,
    ).toBe(400);
    const textFirst = { role: 'user', content: [{ type: 'text', text: 'hi' }, result] };
    const notFirst = await post({ tools, messages: [{ role: 'user', content: 'go' }, callTurn, textFirst] });
    expect(notFirst.message).toMatch(/tool_result blocks must come first/);
    const unanswered = await post({
      tools,
      messages: [{ role: 'user', content: 'go' }, callTurn, { role: 'user', content: 'hi' }],
    });
    expect(unanswered.message).toMatch(
      /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/,
    );
    const stray = await post({ tools, messages: [{ role: 'user', content: [result] }] });
    expect(stray.message).toMatch(/unexpected `tool_use_id` found in `tool_result` blocks: toolu_1/);
    expect(
      (
        await post({
          tools,
          messages: [{ role: 'user', content: 'go' }, callTurn, { role: 'user', content: [result] }],
        })
      ).status,
    ).toBe(200);
  });
});

describe('prompt-cache marks on whole system messages (the Messages door)', () => {
  it('become system blocks, each mark on its own block', () => {
    const body = bodyOf({
      messages: [
        { role: 'system', content: 'You are a careful assistant.', cache_control: { type: 'ephemeral' } },
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(body.system).toEqual([
      { type: 'text', text: 'You are a careful assistant.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Answer briefly.' },
    ]);
  });
});
