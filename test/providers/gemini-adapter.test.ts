import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AssistantMessage, ChatMessage, FunctionTool, ToolCall, ToolChoice } from '../../src/chat/types.ts';
import { LEADING_USER_PLACEHOLDER } from '../../src/providers/conversation-turns.ts';
import { geminiAdapter } from '../../src/providers/gemini/adapter.ts';
import { SKIPPED_THOUGHT_SIGNATURE } from '../../src/providers/gemini/contents.ts';
import { mapGeminiFinishReason } from '../../src/providers/gemini/wire.ts';
import { UpstreamProtocolError, type SseEvent, type StreamDelta, type StreamEvent } from '../../src/providers/types.ts';
import { accumulate, callNonStreamed, callStreamed, chatRequest } from '../support/adapter-round-trip.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import type { Untyped } from '../support/untyped.ts';

const endpoint = { baseUrl: 'https://gemini.example/v1beta', apiKey: 'g-key' };

function bodyOf(overrides: Parameters<typeof chatRequest>[0] = {}): Record<string, unknown> {
  return JSON.parse(geminiAdapter.buildRequest(chatRequest(overrides), endpoint, { stream: false }).body) as Record<
    string,
    unknown
  >;
}

function data(value: unknown): SseEvent {
  return { data: JSON.stringify(value) };
}

function textCandidate(text: string, extra: Record<string, unknown> = {}) {
  return { content: { parts: [{ text }], role: 'model' }, ...extra };
}

describe('geminiAdapter.buildRequest', () => {
  it('calls generateContent with the key in a header only', () => {
    const request = geminiAdapter.buildRequest(chatRequest({ model: 'b-2.5-flash' }), endpoint, { stream: false });
    expect(request.url).toBe('https://gemini.example/v1beta/models/b-2.5-flash:generateContent');
    expect(request.headers['x-goog-api-key']).toBe('g-key');
    expect(request.url).not.toContain('g-key');
    expect(request.headers['content-type']).toBe('application/json');
  });

  it('calls streamGenerateContent with alt=sse when streaming', () => {
    const request = geminiAdapter.buildRequest(chatRequest({ model: 'b-2.5-pro' }), endpoint, { stream: true });
    expect(request.url).toBe('https://gemini.example/v1beta/models/b-2.5-pro:streamGenerateContent?alt=sse');
    expect(request.url).not.toContain('key=');
  });

  it('moves system and developer messages to systemInstruction and renames assistant to model', () => {
    const body = bodyOf({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
        { role: 'developer', content: 'Answer in French.' },
        { role: 'assistant', content: 'salut' },
        { role: 'user', content: 'again' },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.\n\nAnswer in French.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ text: 'salut' }] },
      { role: 'user', parts: [{ text: 'again' }] },
    ]);
  });

  it('merges consecutive same-role turns, drops empty ones, and starts with a user turn', () => {
    const body = bodyOf({
      messages: [
        { role: 'assistant', content: 'Welcome!' },
        { role: 'assistant', content: 'How can I help?' },
        { role: 'user', content: 'first' },
        { role: 'user', content: '   ' },
        { role: 'user', content: 'second' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: LEADING_USER_PLACEHOLDER }] },
      { role: 'model', parts: [{ text: 'Welcome!\n\nHow can I help?' }] },
      { role: 'user', parts: [{ text: 'first\n\nsecond' }] },
    ]);
    expect(body).not.toHaveProperty('systemInstruction');
  });

  it('maps every parameter into generationConfig', () => {
    const body = bodyOf({
      temperature: 1.7,
      top_p: 0.8,
      max_tokens: 256,
      n: 3,
      stop: ['END'],
      seed: 7,
      presence_penalty: 0.25,
      frequency_penalty: -0.25,
    });
    expect(body.generationConfig).toEqual({
      temperature: 1.7,
      topP: 0.8,
      maxOutputTokens: 256,
      candidateCount: 3,
      stopSequences: ['END'],
      seed: 7,
      presencePenalty: 0.25,
      frequencyPenalty: -0.25,
    });
  });

  it('sends no generationConfig when nothing is set', () => {
    expect(bodyOf()).not.toHaveProperty('generationConfig');
  });
});

describe('geminiAdapter.validate', () => {
  it('rejects a conversation with no user or assistant text', () => {
    expect(
      geminiAdapter.validate(chatRequest({ messages: [{ role: 'system', content: 'only instructions' }] })),
    ).toMatch(/at least one user or assistant message/);
    expect(geminiAdapter.validate(chatRequest())).toBeUndefined();
  });
});

describe('geminiAdapter.parseResponse', () => {
  it('reads candidates, finish reasons and usage', () => {
    const parsed = geminiAdapter.parseResponse({
      candidates: [
        textCandidate('second', { finishReason: 'MAX_TOKENS', index: 1 }),
        {
          content: { parts: [{ text: 'thinking...', thought: true }, { text: 'fir' }, { text: 'st' }], role: 'model' },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 6, thoughtsTokenCount: 4, totalTokenCount: 21 },
      modelVersion: 'gemini-x',
    });
    expect(parsed.choices).toEqual([
      // The thought part is not answer text: an unsigned reasoning block.
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'first',
          thinking: [{ type: 'thinking', thinking: 'thinking...', signature: '' }],
        },
        finish_reason: 'stop',
      },
      { index: 1, message: { role: 'assistant', content: 'second' }, finish_reason: 'length' },
    ]);
    // Thinking tokens are completion tokens.
    expect(parsed.usage).toEqual({
      prompt_tokens: 11,
      completion_tokens: 10,
      total_tokens: 21,
      completion_tokens_details: { reasoning_tokens: 4 },
    });
  });

  it('falls back to positions when candidates leave out every index', () => {
    const parsed = geminiAdapter.parseResponse({
      candidates: [textCandidate('a', { finishReason: 'STOP' }), textCandidate('b', { finishReason: 'STOP' })],
    });
    expect(parsed.choices.map((c) => [c.index, c.message.content])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ]);
    expect(parsed.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('counts a missing candidatesTokenCount as zero', () => {
    const parsed = geminiAdapter.parseResponse({
      candidates: [{ finishReason: 'SAFETY', index: 0 }],
      usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
    });
    expect(parsed.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' },
    ]);
    expect(parsed.usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('answers a blocked prompt with one filtered, empty choice', () => {
    const parsed = geminiAdapter.parseResponse({
      promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] },
      usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 },
    });
    expect(parsed.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' },
    ]);
    expect(parsed.usage.prompt_tokens).toBe(5);
  });

  it.each([
    ['a non-object', 42],
    ['no candidates and no block reason', { usageMetadata: { promptTokenCount: 1 } }],
    ['candidates that are not a list', { candidates: { text: 'x' } }],
    ['a non-string part text', { candidates: [{ content: { parts: [{ text: 5 }] } }] }],
  ])('throws UpstreamProtocolError on %s', (_name, body) => {
    expect(() => geminiAdapter.parseResponse(body)).toThrow(UpstreamProtocolError);
  });
});

describe('mapGeminiFinishReason', () => {
  it.each([
    ['STOP', 'stop'],
    ['MAX_TOKENS', 'length'],
    ['SAFETY', 'content_filter'],
    ['RECITATION', 'content_filter'],
    ['BLOCKLIST', 'content_filter'],
    ['PROHIBITED_CONTENT', 'content_filter'],
    ['SPII', 'content_filter'],
    ['IMAGE_SAFETY', 'content_filter'],
    ['LANGUAGE', 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', 'stop'],
    ['OTHER', 'stop'],
    ['SOMETHING_NEW', 'stop'],
  ])('%s -> %s', (reason, expected) => {
    expect(mapGeminiFinishReason(reason)).toBe(expected);
  });
});

describe('geminiAdapter.extractErrorMessage', () => {
  it('reads Google error envelopes, also wrapped in a list', () => {
    const envelope = { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } };
    expect(geminiAdapter.extractErrorMessage(envelope)).toBe('Resource has been exhausted');
    expect(geminiAdapter.extractErrorMessage([envelope])).toBe('Resource has been exhausted');
    expect(geminiAdapter.extractErrorMessage({ error: 'x' })).toBeUndefined();
  });
});

describe('Gemini stream decoder', () => {
  it('decodes text chunks, cumulative usage and finishes on the finish reason', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    const first = decoder.push(
      data({ candidates: [textCandidate('The')], usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 } }),
    );
    expect(first).toEqual([
      { kind: 'delta', choice: 0, content: 'The' },
      { kind: 'usage', usage: { prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 } },
    ]);
    expect(decoder.finished).toBe(false);
    const last = decoder.push(
      data({
        candidates: [textCandidate(' end.', { finishReason: 'STOP' })],
        usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2, totalTokenCount: 6 },
      }),
    );
    expect(decoder.finished).toBe(true);
    const acc = accumulate([...first, ...last]);
    expect(acc.texts).toEqual(['The end.']);
    expect(acc.finishReasons).toEqual(['stop']);
    expect(acc.usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
  });

  it('is finished only once every candidate has a finish reason', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    decoder.push(data({ candidates: [textCandidate('a'), textCandidate('b', { index: 1 })] }));
    decoder.push(
      data({ candidates: [textCandidate('a2', { finishReason: 'STOP' }), textCandidate('b2', { index: 1 })] }),
    );
    expect(decoder.finished).toBe(false);
    const events = decoder.push(data({ candidates: [{ finishReason: 'MAX_TOKENS', index: 1 }] }));
    expect(events).toEqual([{ kind: 'delta', choice: 1, finish_reason: 'length' }]);
    expect(decoder.finished).toBe(true);
  });

  it('treats FINISH_REASON_UNSPECIFIED as still running', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    expect(
      decoder.push(data({ candidates: [textCandidate('x', { finishReason: 'FINISH_REASON_UNSPECIFIED' })] })),
    ).toEqual([{ kind: 'delta', choice: 0, content: 'x' }]);
    expect(decoder.finished).toBe(false);
  });

  it('ends a blocked prompt with a filtered choice', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    const events = decoder.push(
      data({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 3 } }),
    );
    expect(events[0]).toEqual({ kind: 'delta', choice: 0, finish_reason: 'content_filter' });
    expect(decoder.finished).toBe(true);
  });

  it('turns an in-stream error into an error event and skips unknown fields', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    expect(
      decoder.push(data({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })),
    ).toEqual([{ kind: 'error', message: 'UNAVAILABLE: The model is overloaded.' }]);
    expect(decoder.push(data({ modelVersion: 'x', responseId: 'r', somethingNew: { a: 1 } }))).toEqual([]);
  });

  it('throws UpstreamProtocolError on malformed JSON or a non-object event', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    expect(() => decoder.push({ data: '{"candidates": [' })).toThrow(UpstreamProtocolError);
    expect(() => decoder.push({ data: '[1, 2]' })).toThrow(UpstreamProtocolError);
  });
});

describe('Gemini round trip against the fake upstream', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ format: 'gemini', apiKey: 'g-fake' });
  });
  beforeEach(() => upstream.reset());
  afterAll(() => upstream.close());

  const live = () => ({ baseUrl: upstream.url, apiKey: 'g-fake' });

  it('completes a non-streamed call with two candidates', async () => {
    const req = chatRequest({
      model: 'b-2.5-flash',
      n: 2,
      messages: [
        { role: 'system', content: 'Echo please.' },
        { role: 'user', content: 'red green' },
      ],
    });
    const result = await callNonStreamed(geminiAdapter, req, live());
    expect(result.completion?.choices.map((c) => c.message.content)).toEqual([
      '[0] Echo: red green',
      '[1] Echo: red green',
    ]);
    expect(result.completion?.usage).toEqual({ prompt_tokens: 4, completion_tokens: 8, total_tokens: 12 });
    const recorded = upstream.requests[0];
    expect(recorded?.path).toBe('/v1beta/models/b-2.5-flash:generateContent');
    expect(recorded?.headers['x-goog-api-key']).toBe('g-fake');
  });

  it('streams with alt=sse until every candidate finished', async () => {
    const result = await callStreamed(geminiAdapter, chatRequest({ n: 2, stream: true }), live());
    expect(upstream.requests[0]?.path).toBe('/v1beta/models/test-model:streamGenerateContent?alt=sse');
    expect(result.finished).toBe(true);
    const acc = accumulate(result.events);
    expect(acc.texts).toEqual(['[0] Echo: hello there', '[1] Echo: hello there']);
    expect(acc.finishReasons).toEqual(['stop', 'stop']);
    expect(acc.usage).toEqual({ prompt_tokens: 2, completion_tokens: 8, total_tokens: 10 });
  });

  it('surfaces the upstream message of a 401', async () => {
    const result = await callStreamed(geminiAdapter, chatRequest(), { baseUrl: upstream.url, apiKey: 'nope' });
    expect(result.status).toBe(401);
    expect(result.errorMessage).toBe('Invalid API key.');
  });
});

// --- tools, images, structured outputs -------------------------------------------------------

const PNG = 'iVBORw0KGgo=';

const weatherTool: FunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'] } },
      required: ['city'],
    },
  },
};
const timeTool: FunctionTool = { type: 'function', function: { name: 'get_time' } };

/** A conversation where the assistant called two tools and got both results. */
function toolHistory(results: [string, string] = ['{"temp": 21}', 'noon']): ChatMessage[] {
  return [
    { role: 'user', content: 'weather and time in Paris?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_a', content: results[0] },
    { role: 'tool', tool_call_id: 'call_b', content: results[1] },
  ];
}

function callCandidate(calls: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  return { content: { parts: calls.map((functionCall) => ({ functionCall })), role: 'model' }, ...extra };
}

describe('geminiAdapter.buildRequest: tools', () => {
  it('declares tools as functionDeclarations with their parameters as JSON Schema', () => {
    const body = bodyOf({ tools: [weatherTool, timeTool] });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'Weather of a city',
            parametersJsonSchema: {
              type: 'object',
              properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['C', 'F'] } },
              required: ['city'],
              propertyOrdering: ['city', 'unit'],
            },
          },
          { name: 'get_time' },
        ],
      },
    ]);
    expect(body).not.toHaveProperty('toolConfig');
  });

  it.each([
    ['none', { mode: 'NONE' }],
    ['auto', { mode: 'AUTO' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'get_time' } },
      { mode: 'ANY', allowedFunctionNames: ['get_time'] },
    ],
  ] as Array<[ToolChoice, unknown]>)('maps tool_choice %j to functionCallingConfig', (choice, config) => {
    expect(bodyOf({ tools: [weatherTool, timeTool], tool_choice: choice }).toolConfig).toEqual({
      functionCallingConfig: config,
    });
  });

  it('sends calls as model functionCall parts and results as user functionResponse parts', () => {
    const body = bodyOf({ messages: [...toolHistory(), { role: 'assistant', content: 'Sunny, 21 degrees, noon.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'weather and time in Paris?' }] },
      {
        role: 'model',
        parts: [
          // The first call of a turn carries the documented skip signature for Gemini 3.
          {
            functionCall: { name: 'get_weather', args: { city: 'Paris' } },
            thoughtSignature: SKIPPED_THOUGHT_SIGNATURE,
          },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          // A JSON object result is the response itself; other text goes under `output`.
          { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
          { functionResponse: { name: 'get_time', response: { output: 'noon' } } },
        ],
      },
      { role: 'model', parts: [{ text: 'Sunny, 21 degrees, noon.' }] },
    ]);
  });

  it('keeps the text of an assistant turn that also calls a tool, before the call', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'time?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '[1, 2]' },
      { role: 'user', content: 'and?' },
    ];
    expect(bodyOf({ messages }).contents).toEqual([
      { role: 'user', parts: [{ text: 'time?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me check.' },
          { functionCall: { name: 'get_time', args: {} }, thoughtSignature: SKIPPED_THOUGHT_SIGNATURE },
        ],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'get_time', response: { output: '[1, 2]' } } }, { text: 'and?' }],
      },
    ]);
  });
});

describe('geminiAdapter.buildRequest: images and structured outputs', () => {
  it('sends data: images as inlineData and https images as fileData with the type of their extension', () => {
    const body = bodyOf({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'compare' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'image_url', image_url: { url: 'https://img.example/cat.JPG?size=large' } },
          ],
        },
      ],
    });
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'compare' },
          { inlineData: { mimeType: 'image/png', data: PNG } },
          { fileData: { fileUri: 'https://img.example/cat.JPG?size=large', mimeType: 'image/jpeg' } },
        ],
      },
    ]);
  });

  it('asks for JSON with responseMimeType for json_object', () => {
    expect(bodyOf({ response_format: { type: 'json_object' } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
    });
  });

  it('sends a json_schema as responseJsonSchema, with the format description and rewrites Gemini needs', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        kind: { const: 'pet' },
        color: { type: ['string', 'null'], enum: ['red', 'blue', null], description: 'fur' },
        owner: { $ref: '#/definitions/person', description: 'who feeds it' },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'integer', minimum: 0 }] },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1, default: [] },
      },
      required: ['kind', 'color', 'owner'],
      additionalProperties: false,
      definitions: { person: { type: 'object', properties: { name: { type: 'string', format: 'email' } } } },
    };
    const body = bodyOf({
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'pet', description: 'A pet record', schema, strict: true },
      },
    });
    expect(body.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: {
        type: 'object',
        properties: {
          kind: { enum: ['pet'] },
          color: { anyOf: [{ type: 'string', enum: ['red', 'blue'] }, { type: 'null' }], description: 'fur' },
          owner: { description: 'who feeds it', anyOf: [{ $ref: '#/$defs/person' }] },
          pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer', minimum: 0 }] },
          tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
        },
        required: ['kind', 'color', 'owner'],
        additionalProperties: false,
        $defs: {
          person: {
            type: 'object',
            properties: { name: { type: 'string', format: 'email' } },
            propertyOrdering: ['name'],
          },
        },
        propertyOrdering: ['kind', 'color', 'owner', 'pair', 'tags'],
        description: 'A pet record',
      },
    });
  });

  it('takes the token budget from max_completion_tokens before max_tokens', () => {
    expect(bodyOf({ max_tokens: 100, max_completion_tokens: 50 }).generationConfig).toEqual({ maxOutputTokens: 50 });
    expect(bodyOf({ max_completion_tokens: 70 }).generationConfig).toEqual({ maxOutputTokens: 70 });
  });
});

describe('geminiAdapter.unsupportedParams', () => {
  it('reports the fields generateContent cannot honour', () => {
    const req = chatRequest({
      tools: [timeTool],
      logprobs: true,
      top_logprobs: 3,
      user: 'u-1',
      metadata: { a: 'b' },
      store: true,
      parallel_tool_calls: false,
      reasoning_effort: 'low',
      service_tier: 'flex',
    });
    expect(geminiAdapter.unsupportedParams(req).sort()).toEqual(
      ['logprobs', 'metadata', 'parallel_tool_calls', 'reasoning_effort', 'store', 'top_logprobs', 'user'].sort(),
    );
  });

  it('reports nothing for what Gemini does anyway or can express', () => {
    const req = chatRequest({
      tools: [timeTool],
      tool_choice: 'required',
      parallel_tool_calls: true,
      store: false,
      service_tier: 'flex',
      seed: 1,
      n: 2,
      stop: ['x'],
      response_format: { type: 'json_object' },
      max_completion_tokens: 10,
    });
    expect(geminiAdapter.unsupportedParams(req)).toEqual([]);
  });
});

describe('geminiAdapter.validate: what provider_b cannot express', () => {
  const validate = (overrides: Parameters<typeof chatRequest>[0]) => geminiAdapter.validate(chatRequest(overrides));
  const schemaRequest = (schema: Record<string, unknown>) => ({
    response_format: { type: 'json_schema' as const, json_schema: { name: 'x', schema } },
  });

  it('accepts a complete tool conversation', () => {
    expect(validate({ tools: [weatherTool, timeTool], messages: toolHistory() })).toBeUndefined();
  });

  it('rejects a tool result that answers no earlier call', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'tool', tool_call_id: 'call_ghost', content: 'x' },
    ];
    expect(validate({ messages })).toMatch(/tool_call_id 'call_ghost', which no earlier assistant message called/);
  });

  it.each([
    ['not JSON', '{"city":'],
    ['a JSON array', '["Paris"]'],
  ])('rejects call arguments that are %s', (_name, args) => {
    const messages = toolHistory();
    const assistant = messages[1] as AssistantMessage;
    assistant.tool_calls = [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: args } },
      ...(assistant.tool_calls ?? []).slice(1),
    ];
    expect(validate({ messages })).toBe(
      "the arguments of tool call 'call_a' are not a JSON object; provider_b needs them as one.",
    );
  });

  it('rejects a call left without a result', () => {
    const messages = toolHistory().slice(0, 3);
    expect(validate({ messages })).toMatch(/tool call 'call_b' has no 'tool' message answering it/);
  });

  it('rejects a result that does not directly follow its call', () => {
    const messages: ChatMessage[] = [
      ...toolHistory(),
      { role: 'assistant', content: 'done' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'ok' },
      { role: 'tool', tool_call_id: 'call_a', content: 'late' },
    ];
    expect(validate({ messages })).toMatch(/'tool' message for tool_call_id 'call_a' must directly follow/);
  });

  it('rejects image types Gemini does not read and URLs whose type is unknowable', () => {
    const image = (url: string): ChatMessage[] => [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ];
    expect(validate({ messages: image(`data:image/gif;base64,${PNG}`) })).toMatch(
      /provider_b does not read image\/gif images/,
    );
    expect(validate({ messages: image('https://img.example/cat.gif') })).toMatch(
      /provider_b needs to know the type of image URL/,
    );
    expect(validate({ messages: image('https://img.example/render?id=7') })).toMatch(
      /send the image bytes as a data: URL/,
    );
    expect(validate({ messages: image('https://img.example/cat.webp') })).toBeUndefined();
  });

  it.each([
    [
      'pattern',
      { type: 'object', properties: { zip: { type: 'string', pattern: '^[0-9]{5}$' } } },
      "'pattern' (at properties.zip)",
    ],
    [
      'patternProperties',
      { type: 'object', patternProperties: { '^x': { type: 'string' } } },
      "'patternProperties' (at the root)",
    ],
    ['allOf', { allOf: [{ type: 'object' }] }, "'allOf' (at the root)"],
    [
      'a boolean const',
      { type: 'object', properties: { ok: { const: true } } },
      "'const' with a value that is not a string or a number (at properties.ok)",
    ],
    ['a boolean enum', { type: 'boolean', enum: [true] }, "'enum' with values that are not strings or numbers"],
    [
      'minLength in $defs',
      { $defs: { s: { type: 'string', minLength: 2 } }, $ref: '#/$defs/s' },
      "'minLength' (at $defs.s)",
    ],
    [
      '$ref beside anyOf',
      { $defs: { s: { type: 'string' } }, $ref: '#/$defs/s', anyOf: [{ type: 'string' }] },
      "'$ref' beside 'anyOf' or 'oneOf' (at the root)",
    ],
  ])('rejects a response schema using %s, naming the keyword', (_name, schema, detail) => {
    const message = validate(schemaRequest(schema));
    expect(message).toContain(`response_format.json_schema.schema uses ${detail}`);
    expect(message).toMatch(/which provider_b cannot express\.$/);
  });

  it('keeps root $defs where a root $ref with siblings can still find them', () => {
    const body = bodyOf(schemaRequest({ $defs: { s: { type: 'string' } }, $ref: '#/$defs/s', description: 'a name' }));
    expect((body.generationConfig as Record<string, unknown>).responseJsonSchema).toEqual({
      $defs: { s: { type: 'string' } },
      description: 'a name',
      anyOf: [{ $ref: '#/$defs/s' }],
    });
  });

  it('does not mistake a property named like a keyword for the keyword', () => {
    expect(
      validate(
        schemaRequest({ type: 'object', properties: { pattern: { type: 'string' }, not: { type: 'boolean' } } }),
      ),
    ).toBeUndefined();
  });

  it('checks tool parameter schemas and names too', () => {
    const tool = (name: string, parameters?: Record<string, unknown>): FunctionTool => ({
      type: 'function',
      function: parameters === undefined ? { name } : { name, parameters },
    });
    expect(validate({ tools: [timeTool, tool('t', { type: 'object', allOf: [{ type: 'object' }] })] })).toBe(
      "tools[1].function.parameters uses 'allOf' (at the root), which provider_b cannot express.",
    );
    expect(validate({ tools: [tool('2fa_code')] })).toBe(
      "tool name '2fa_code' must start with a letter or an underscore for provider_b.",
    );
  });

  it("sends Gemini's own constraints in tool parameters, turns an integer's exclusive bounds into inclusive ones, and leaves out and names the rest", () => {
    const parameters = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        // Claude Code's Read tool and its string limits.
        limit: { type: 'integer', exclusiveMinimum: 0, maximum: 9007199254740991 },
        offset: { type: 'integer', minimum: 3, exclusiveMinimum: 1 },
        top: { type: 'integer', maximum: 5, exclusiveMaximum: 10 },
        ratio: { type: 'number', exclusiveMinimum: 0 },
        cursor: { type: 'string', maxLength: 256, minLength: 1, pattern: '^[a-z]+$' },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, maxItems: 3 },
        even: { type: 'integer', multipleOf: 2, not: { const: 4 } },
      },
      minProperties: 1,
      additionalProperties: false,
    };
    const req = chatRequest({ tools: [{ type: 'function', function: { name: 'Read', parameters } }] });
    expect(geminiAdapter.validate(req)).toBeUndefined();
    expect(geminiAdapter.leftOut?.(req)).toEqual([
      'tools[].parameters.exclusiveMinimum',
      'tools[].parameters.uniqueItems',
      'tools[].parameters.multipleOf',
      'tools[].parameters.not',
    ]);
    const body = bodyOf({ tools: [{ type: 'function', function: { name: 'Read', parameters } }] }) as Untyped;
    expect(body.tools[0].functionDeclarations[0].parametersJsonSchema).toEqual({
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
        offset: { type: 'integer', minimum: 3 },
        top: { type: 'integer', maximum: 5 },
        ratio: { type: 'number' },
        cursor: { type: 'string', maxLength: 256, minLength: 1, pattern: '^[a-z]+$' },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
        even: { type: 'integer' },
      },
      minProperties: 1,
      additionalProperties: false,
      propertyOrdering: ['limit', 'offset', 'top', 'ratio', 'cursor', 'tags', 'even'],
    });
    // A response schema still refuses what Gemini would not hold its reply to.
    expect(
      geminiAdapter.validate(
        chatRequest({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: parameters } } }),
      ),
    ).toMatch(/response_format\.json_schema\.schema uses 'exclusiveMinimum' \(at properties\.limit\)/);
    expect(geminiAdapter.leftOut?.(chatRequest({ tools: [weatherTool] }))).toEqual([]);
  });
});

describe('geminiAdapter.parseResponse: function calls', () => {
  it('turns functionCall parts into tool calls, with Gemini ids when sent and made-up ones otherwise', () => {
    const parsed = geminiAdapter.parseResponse({
      candidates: [
        callCandidate([{ id: 'g-1', name: 'get_weather', args: { city: 'Paris' } }, { name: 'get_time' }], {
          finishReason: 'STOP',
        }),
      ],
      usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 5, totalTokenCount: 12 },
    });
    const choice = parsed.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const calls = choice?.message.tool_calls ?? [];
    expect(calls).toHaveLength(2);
    expect(calls[0]).toEqual({
      id: 'g-1',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(calls[1]?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(calls[1]?.function).toEqual({ name: 'get_time', arguments: '{}' });
  });

  it('keeps text said alongside a call, skips thoughts, and keeps a cut-off reason', () => {
    const parsed = geminiAdapter.parseResponse({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'pondering', thought: true },
              { text: 'Checking.' },
              { functionCall: { name: 'get_time', args: {} }, thoughtSignature: 'c2ln' },
            ],
          },
          finishReason: 'STOP',
        },
        { ...callCandidate([{ name: 'get_time' }]), finishReason: 'MAX_TOKENS', index: 1 },
      ],
    });
    expect(parsed.choices[0]?.message.content).toBe('Checking.');
    expect(parsed.choices[0]?.message.tool_calls?.[0]?.function.name).toBe('get_time');
    expect(parsed.choices[0]?.finish_reason).toBe('tool_calls');
    expect(parsed.choices[1]?.finish_reason).toBe('length');
  });

  it('throws UpstreamProtocolError on a functionCall without a name', () => {
    expect(() => geminiAdapter.parseResponse({ candidates: [callCandidate([{ args: {} }])] })).toThrow(
      UpstreamProtocolError,
    );
  });
});

describe('Gemini stream decoder: function calls', () => {
  it('emits each call whole, numbered per candidate across the stream, and finishes with tool_calls', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    const first = decoder.push(
      data({
        candidates: [
          callCandidate([
            { id: 'g-1', name: 'get_weather', args: { city: 'Paris' } },
            { name: 'get_time', args: {} },
          ]),
        ],
      }),
    );
    expect(first).toHaveLength(1);
    const delta = first[0] as StreamDelta;
    expect(delta.tool_calls?.[0]).toEqual({
      index: 0,
      id: 'g-1',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(delta.tool_calls?.[1]).toMatchObject({
      index: 1,
      type: 'function',
      function: { name: 'get_time', arguments: '{}' },
    });
    expect(delta.tool_calls?.[1]?.id).toMatch(/^call_/);
    expect(delta).not.toHaveProperty('finish_reason');
    expect(decoder.finished).toBe(false);

    const second = decoder.push(data({ candidates: [callCandidate([{ name: 'get_time', args: { tz: 'UTC' } }])] }));
    expect((second[0] as StreamDelta).tool_calls?.map((call) => call.index)).toEqual([2]);

    const last = decoder.push(
      data({
        candidates: [{ finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 9, totalTokenCount: 12 },
      }),
    );
    expect(last).toEqual([
      { kind: 'delta', choice: 0, finish_reason: 'tool_calls' },
      { kind: 'usage', usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } },
    ]);
    expect(decoder.finished).toBe(true);
  });

  it('counts calls per candidate and keeps stop for a candidate that only wrote text', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    const events = decoder.push(
      data({
        candidates: [
          textCandidate('plain', { finishReason: 'STOP' }),
          callCandidate([{ name: 'get_time' }], { finishReason: 'STOP', index: 1 }),
        ],
      }),
    );
    expect(events).toEqual([
      { kind: 'delta', choice: 0, content: 'plain', finish_reason: 'stop' },
      {
        kind: 'delta',
        choice: 1,
        tool_calls: [
          {
            index: 0,
            id: expect.stringMatching(/^call_/) as unknown as string,
            type: 'function',
            function: { name: 'get_time', arguments: '{}' },
          },
        ],
        finish_reason: 'tool_calls',
      },
    ]);
  });
});

/** Folds streamed tool-call deltas per choice the way a client does. */
function streamedCalls(events: readonly StreamEvent[]): Array<Array<{ id: string; name: string; arguments: string }>> {
  const out: Array<Array<{ id: string; name: string; arguments: string }>> = [];
  for (const event of events) {
    if (event.kind !== 'delta') continue;
    for (const piece of event.tool_calls ?? []) {
      const calls = (out[event.choice] ??= []);
      const call = (calls[piece.index] ??= { id: '', name: '', arguments: '' });
      call.id ||= piece.id ?? '';
      call.name += piece.function?.name ?? '';
      call.arguments += piece.function?.arguments ?? '';
    }
  }
  return out;
}

describe('Gemini round trip against the fake upstream: tools, schemas, images', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ format: 'gemini', apiKey: 'g-fake' });
  });
  beforeEach(() => upstream.reset());
  afterAll(() => upstream.close());

  const live = () => ({ baseUrl: upstream.url, apiKey: 'g-fake' });
  const recordedBody = () => upstream.requests.at(-1)?.body as Record<string, unknown>;

  it('gets a tool call, then answers from the tool result', async () => {
    const ask: ChatMessage = { role: 'user', content: 'weather in Paris' };
    const first = await callNonStreamed(
      geminiAdapter,
      chatRequest({ tools: [weatherTool, timeTool], messages: [ask] }),
      live(),
    );
    expect(first.status).toBe(200);
    const choice = first.completion?.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const call = choice?.message.tool_calls?.[0];
    expect(call?.function).toEqual({ name: 'get_weather', arguments: JSON.stringify({ input: 'weather in Paris' }) });
    expect(call?.id).toMatch(/^call_/);

    // The client runs the tool and sends the call and its result back.
    const followUp = chatRequest({
      tools: [weatherTool, timeTool],
      messages: [
        ask,
        { role: 'assistant', content: null, tool_calls: [call as ToolCall] },
        { role: 'tool', tool_call_id: call?.id ?? '', content: 'sunny, 21C' },
      ],
    });
    expect(geminiAdapter.validate(followUp)).toBeUndefined();
    const second = await callNonStreamed(geminiAdapter, followUp, live());
    expect(second.status).toBe(200);
    expect(second.completion?.choices[0]?.message).toEqual({ role: 'assistant', content: 'Tool said: sunny, 21C' });
    expect(second.completion?.choices[0]?.finish_reason).toBe('stop');
    const contents = recordedBody().contents as Array<{ role: string; parts: unknown[] }>;
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(contents[2]?.parts).toEqual([
      { functionResponse: { name: 'get_weather', response: { output: 'sunny, 21C' } } },
    ]);
  });

  it('streams forced calls of a named tool, then a stop on tool results', async () => {
    const req = chatRequest({
      stream: true,
      tools: [weatherTool, timeTool],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const result = await callStreamed(geminiAdapter, req, live());
    expect(result.finished).toBe(true);
    expect(accumulate(result.events).finishReasons).toEqual(['tool_calls']);
    const [calls] = streamedCalls(result.events);
    expect(calls?.map((c) => [c.name, c.arguments])).toEqual([['get_time', '{"input":"hello there"}']]);
    expect((recordedBody().toolConfig as Record<string, unknown>).functionCallingConfig).toEqual({
      mode: 'ANY',
      allowedFunctionNames: ['get_time'],
    });
  });

  it('answers a json_schema request with JSON that follows the schema', async () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, temp: { type: 'number' }, unit: { type: 'string', enum: ['C', 'F'] } },
      required: ['city', 'temp', 'unit'],
      additionalProperties: false,
    };
    const req = chatRequest({
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
    });
    const result = await callNonStreamed(geminiAdapter, req, live());
    const text = result.completion?.choices[0]?.message.content ?? '';
    expect(JSON.parse(text)).toEqual({ city: 'hello there', temp: 42, unit: 'C' });
    expect((recordedBody().generationConfig as Record<string, unknown>).responseMimeType).toBe('application/json');
  });

  it('sends images inline and by URL', async () => {
    const req = chatRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'image_url', image_url: { url: 'https://img.example/cat.png' } },
          ],
        },
      ],
    });
    const result = await callNonStreamed(geminiAdapter, req, live());
    expect(result.completion?.choices[0]?.message.content).toBe('Echo: what is this (+2 images)');
  });

  it('is refused by the fake as by Gemini when a call lacks its thought signature or sits in a user turn', async () => {
    const post = async (contents: unknown[]) => {
      const res = await fetch(`${upstream.url}/models/m:generateContent`, {
        method: 'POST',
        headers: { 'x-goog-api-key': 'g-fake', 'content-type': 'application/json' },
        body: JSON.stringify({ contents }),
      });
      return { status: res.status, body: (await res.json()) as { error: { message: string } } };
    };
    const call = { functionCall: { name: 'f', args: {} } };
    const unsigned = await post([
      { role: 'user', parts: [{ text: 'x' }] },
      { role: 'model', parts: [call] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
    ]);
    expect(unsigned.status).toBe(400);
    expect(unsigned.body.error.message).toMatch(/thought_signature/);
    const inUserTurn = await post([{ role: 'user', parts: [call] }]);
    expect(inUserTurn.status).toBe(400);
    expect(inUserTurn.body.error.message).toMatch(/only appear in model turns/);
  });
});
