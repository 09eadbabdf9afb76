import { describe, expect, it } from 'vitest';
import { parseChatRequest } from '../../src/chat/request-schema.ts';
import { InvalidRequestError } from '../../src/errors/catalog.ts';

const base = { model: 'a-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('chat request validation (the documented bounds)', () => {
  it('normalizes content parts, stop, max_completion_tokens and defaults', () => {
    const req = parseChatRequest({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ],
      stop: 'END',
      max_completion_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(req.messages[0]?.content).toBe('a\nb');
    expect(req.stop).toEqual(['END']);
    expect(req.max_completion_tokens).toBe(12);
    expect(req.max_tokens).toBeUndefined();
    expect(req.n).toBe(1);
    expect(req.stream).toBe(true);
    expect(req.include_usage).toBe(true);
  });

  it.each([
    [{ messages: [] }, 'messages'],
    [{ messages: Array.from({ length: 1001 }, () => ({ role: 'user', content: 'x' })) }, 'messages'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'tool_call_id'],
    [{ messages: [{ role: 'function', content: 'x', name: 'f' }] }, 'role'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: 1.5 }, 'max_tokens'],
    [{ temperature: -0.1 }, 'temperature'],
    [{ top_p: 1.1 }, 'top_p'],
    [{ n: 9 }, 'n'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [{ model: '' }, 'model'],
    [{ tools: [{ type: 'function', function: { name: 'has space' } }] }, 'tools.0.function.name'],
    [
      {
        tools: [
          { type: 'function', function: { name: 'f' } },
          { type: 'function', function: { name: 'f' } },
        ],
      },
      'duplicate tool name',
    ],
    [{ tool_choice: 'required' }, 'tool_choice'],
    [
      {
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: { type: 'function', function: { name: 'g' } },
      },
      "names 'g'",
    ],
    [{ response_format: { type: 'xml' } }, 'response_format'],
    [{ top_logprobs: 3 }, "needs 'logprobs'"],
    [
      {
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://example.com/a.png' } }] }],
      },
      'https: URL',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }] }] },
      'https: URL',
    ],
    [{ messages: [{ role: 'assistant' }] }, "needs 'content' or 'tool_calls'"],
    [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata'],
    [{ messages: [{ role: 'user' }] }, 'content'],
  ])('rejects %j naming %s', (patch, field) => {
    let error: unknown;
    try {
      parseChatRequest({ ...base, ...patch });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toContain(field);
  });

  it('accepts values that mean nothing and drops them', () => {
    const req = parseChatRequest({
      ...base,
      tools: [],
      tool_choice: 'none',
      logprobs: false,
      response_format: { type: 'text' },
      user: null,
      metadata: null,
      seed: null,
      stream_options: null,
      parallel_tool_calls: null,
      reasoning_effort: null,
      max_completion_tokens: null,
    });
    expect(req).toEqual({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'hi' }],
      n: 1,
      stream: false,
      include_usage: false,
    });
  });

  it('normalizes a tool round trip, images and structured outputs', () => {
    const tool = {
      type: 'function',
      function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: true },
    };
    const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } };
    const req = parseChatRequest({
      model: 'a-4o',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'look' }, image] },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', content: [{ type: 'text', text: 'sunny' }], tool_call_id: 'call_1' },
      ],
      tools: [tool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { type: 'object' }, strict: true } },
      logprobs: true,
      top_logprobs: 2,
      metadata: { team: 'a' },
      store: true,
      reasoning_effort: 'high',
      user: 'u',
    });
    expect(req.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }, image] },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
    ]);
    expect(req.tools).toEqual([tool]);
    expect(req.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(req.parallel_tool_calls).toBe(false);
    expect(req.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'w', schema: { type: 'object' }, strict: true },
    });
    expect([req.logprobs, req.top_logprobs, req.store, req.reasoning_effort, req.user]).toEqual([
      true,
      2,
      true,
      'high',
      'u',
    ]);
    expect(req.metadata).toEqual({ team: 'a' });
  });

  it('rejects a body that is not an object', () => {
    expect(() => parseChatRequest(undefined)).toThrowError(/JSON object/);
    expect(() => parseChatRequest([1])).toThrowError(/JSON object/);
  });
});
