import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, Usage } from '../../src/chat/types.ts';
import { ProviderError } from '../../src/errors/catalog.ts';
import { ResponsesDoor } from '../../src/doors/responses/responses-door.ts';
import { ResponseJson, responseObject, type ResponseFacts } from '../../src/doors/responses/response-object.ts';
import { ResponseStore } from '../../src/doors/responses/response-store.ts';
import { ChunkEmitter } from '../../src/execution/chunk-emitter.ts';
import type { DoorRequest } from '../../src/pipeline/door.ts';

/**
 * The Responses door's codec without a server: requests decoded into the
 * canonical chat request, chat replies encoded as `response` objects and as
 * the Responses event grammar. The streams are read back by the official
 * `openai` client (its ResponseStream checks the grammar: item identities,
 * indexes, the final response), through a fetch that answers the frames.
 */

const door = new ResponsesDoor({
  formatOf: (model) => (model.startsWith('a-') ? 'openai' : model.startsWith('b-') ? 'gemini' : 'anthropic'),
});

function doorRequest(body: unknown): DoorRequest {
  return { body, headers: {}, owner: 'alice' };
}

async function decode(body: unknown): Promise<ChatRequest> {
  return door.decode(doorRequest(body));
}

function completion(
  message: ChatCompletion['choices'][number]['message'],
  finish: ChatCompletion['choices'][number]['finish_reason'] = 'stop',
): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'a-4o',
    choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
    usage: {
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  });
}

function chunk(
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
): string {
  return JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'a-4o',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  });
}

const usageChunk = JSON.stringify({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'a-4o',
  choices: [],
  usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
});

/** An `openai` client whose every call is answered with `body` (SSE when `sse`). */
function clientAnswering(body: string, sse: boolean): OpenAI {
  return new OpenAI({
    apiKey: 'k',
    baseURL: 'http://gateway.invalid/v1',
    maxRetries: 0,
    fetch: async () =>
      new Response(body, { status: 200, headers: { 'content-type': sse ? 'text/event-stream' : 'application/json' } }),
  });
}

async function encodeStream(
  body: Record<string, unknown>,
  chunks: string[],
): Promise<{ frames: string; types: string[] }> {
  const from = doorRequest({ ...body, stream: true });
  const request = await door.decode(from);
  const codec = door.reply(request, from);
  let frames = '';
  for (const c of chunks) frames += codec.chunk(c);
  frames += codec.end();
  const types = [...frames.matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { type: string }).type);
  return { frames, types };
}

describe('decoding', () => {
  it('reads a string input, instructions as the system message, and the sampling fields', async () => {
    const req = await decode({
      model: 'c-sonnet-4-20250514',
      input: 'hello',
      instructions: 'Be brief.',
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
    });
    expect(req.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello' },
    ]);
    expect(req).toMatchObject({
      model: 'c-sonnet-4-20250514',
      n: 1,
      stream: false,
      max_completion_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
    });
  });

  it('pairs function calls and their outputs by call_id, joins parallel calls into one assistant turn, drops reasoning items', async () => {
    const req = await decode({
      model: 'a-4o',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'weather in Paris and Rome?' }] },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        {
          type: 'message',
          role: 'assistant',
          id: 'msg_1',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Checking.', annotations: [] }],
        },
        {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_a',
          name: 'weather',
          arguments: '{"city":"Paris"}',
          status: 'completed',
        },
        { type: 'function_call', call_id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_a', output: '18C' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: '24C' }] },
      ],
      tools: [
        {
          type: 'function',
          name: 'weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
      ],
      tool_choice: 'required',
      parallel_tool_calls: true,
    });
    expect(req.messages).toEqual([
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '18C' },
      { role: 'tool', tool_call_id: 'call_b', content: '24C' },
    ]);
    expect(req.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
          strict: true,
        },
      },
    ]);
    expect(req).toMatchObject({ tool_choice: 'required', parallel_tool_calls: true });
  });

  it('keeps images of a user message as image parts', async () => {
    const req = await decode({
      model: 'b-2.5-flash',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
          ],
        },
      ],
    });
    expect(req.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
      ],
    });
  });

  it('turns text.format into response_format, and a function tool_choice into the chat shape', async () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
      additionalProperties: false,
    };
    const req = await decode({
      model: 'a-4o',
      input: 'a number',
      text: { format: { type: 'json_schema', name: 'num', schema, strict: true } },
      tools: [{ type: 'function', name: 'f', parameters: {} }],
      tool_choice: { type: 'function', name: 'f' },
    });
    expect(req.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'num', schema, strict: true } });
    expect(req.tool_choice).toEqual({ type: 'function', function: { name: 'f' } });
    expect(
      (await decode({ model: 'a-4o', input: 'x', text: { format: { type: 'json_object' } } })).response_format,
    ).toEqual({ type: 'json_object' });
    expect(
      (await decode({ model: 'a-4o', input: 'x', text: { format: { type: 'text' } } })).response_format,
    ).toBeUndefined();
  });

  it('forwards reasoning.effort to OpenAI-format upstreams only, and never store, metadata or user', async () => {
    const body = {
      input: 'x',
      reasoning: { effort: 'low', summary: 'auto' },
      store: true,
      metadata: { k: 'v' },
      user: 'u1',
      prompt_cache_key: 'p',
      safety_identifier: 's',
      include: ['reasoning.encrypted_content'],
      truncation: 'auto',
    };
    const openai = await decode({ ...body, model: 'a-4o' });
    expect(openai.reasoning_effort).toBe('low');
    const gemini = await decode({ ...body, model: 'b-2.5-flash' });
    expect(gemini.reasoning_effort).toBeUndefined();
    for (const req of [openai, gemini]) {
      expect(req.store).toBeUndefined();
      expect(req.metadata).toBeUndefined();
      expect(req.user).toBeUndefined();
    }
  });

  it.each([
    [
      { model: 'a-4o', input: 'x', tools: [{ type: 'web_search' }] },
      /tools\.0: the built-in tool 'web_search' is not served/,
    ],
    [
      {
        model: 'a-4o',
        input: 'x',
        tool_choice: { type: 'function', name: 'nope' },
        tools: [{ type: 'function', name: 'f' }],
      },
      /tool_choice: names 'nope'/,
    ],
    [{ model: 'a-4o', input: 'x', tool_choice: { type: 'file_search' } }, /tool_choice: 'file_search' is not served/],
    [
      { model: 'a-4o', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] },
      /input\.0\.content\.0: input_file needs 'file_data'/,
    ],
    [
      { model: 'a-4o', input: [{ type: 'item_reference', id: 'msg_1' }] },
      /input\.0: items of type 'item_reference' are not supported/,
    ],
    [{ model: 'a-4o', input: 'x', bogus: 1 }, /unrecognized field\(s\) 'bogus'/],
    [{ model: 'a-4o' }, /input: /],
    [{ model: 'a-4o', input: [] }, /input: needs at least one/],
    [{ model: 'a-4o', input: 'x', temperature: 3 }, /temperature/],
    [
      {
        model: 'a-4o',
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://plain.example/x.png' }] }],
      },
      /image_url: must be an https: URL/,
    ],
    [[1, 2], /must be a JSON object/],
    [{ model: 'a-4o', input: '' }, /input/],
    [
      { model: 'a-4o', input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function' } },
      /tool_choice: a function choice needs its 'name'/,
    ],
    [{ model: 'a-4o', input: 'x', background: true }, /background/],
    [
      {
        model: 'a-4o',
        input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }],
      },
      /only read in a user message/,
    ],
  ])('answers a clear 400 for %j', async (body, message) => {
    const err = await decode(body).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'invalid_request', status: 400 });
    expect((err as Error).message).toMatch(message);
  });

  it('keeps a reply it could not store to itself: the failure goes to onStoreError, keep() resolves', async () => {
    const failing = {
      all: async () => [],
      run: async () => Promise.reject(new Error('database down')),
      runMany: async () => {},
      close: async () => {},
    };
    const seen: Array<[string, string]> = [];
    const storing = new ResponsesDoor({
      store: new ResponseStore({ db: failing, ttlSeconds: 60 }),
      onStoreError: (err, id) => seen.push([err.message, id]),
    });
    const from = doorRequest({ model: 'a-4o', input: 'hi' });
    const codec = storing.reply(await storing.decode(from), from);
    const { id } = JSON.parse(codec.completion(completion({ role: 'assistant', content: 'Hello!' }))) as { id: string };
    await expect(codec.keep?.()).resolves.toBeUndefined();
    expect(seen).toEqual([['database down', id]]);
  });

  it('refuses previous_response_id without a store', async () => {
    await expect(decode({ model: 'a-4o', input: 'x', previous_response_id: 'resp_1' })).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe('non-streamed replies', () => {
  it('encode text, tool calls and usage details as a response object the SDK reads', async () => {
    const from = doorRequest({ model: 'a-4o', input: 'hi', metadata: { topic: 't' }, instructions: 'Be brief.' });
    const codec = door.reply(await door.decode(from), from);
    const body = codec.completion(
      completion(
        {
          role: 'assistant',
          content: 'Hello!',
          tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        'tool_calls',
      ),
    );
    const response = await clientAnswering(body, false).responses.create({ model: 'a-4o', input: 'hi' });
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'a-4o',
      instructions: 'Be brief.',
      metadata: { topic: 't' },
      output_text: 'Hello!',
      usage: {
        input_tokens: 11,
        output_tokens: 7,
        total_tokens: 18,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens_details: { reasoning_tokens: 2 },
      },
    });
    expect(response.output).toMatchObject([
      { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello!' }] },
      { type: 'function_call', call_id: 'call_9', name: 'f', arguments: '{"a":1}', status: 'completed' },
    ]);
    expect((response.output[0] as { id: string }).id).toMatch(/^msg_/);
    expect((response.output[1] as { id: string }).id).toMatch(/^fc_/);
  });

  it('names the model that answered (a fallback), JSON and streamed', async () => {
    const from = doorRequest({ model: 'a-4o', input: 'hi' });
    const codec = door.reply(await door.decode(from), from);
    const fallback = JSON.parse(completion({ role: 'assistant', content: 'Hi' })) as Record<string, unknown>;
    expect(JSON.parse(codec.completion(JSON.stringify({ ...fallback, model: 'b-2.5-flash' })))).toMatchObject({
      model: 'b-2.5-flash',
    });
    const { frames } = await encodeStream({ model: 'a-4o', input: 'hi' }, [
      chunk({ content: 'Hi' }).replace('"model":"a-4o"', '"model":"b-2.5-flash"'),
      chunk({}, 'stop'),
    ]);
    const models = [...frames.matchAll(/"response":\{[^]*?"model":"([^"]+)"/g)].map((m) => m[1]);
    expect(models.length).toBeGreaterThan(0);
    expect(new Set(models)).toEqual(new Set(['b-2.5-flash']));
  });

  it('says incomplete with max_output_tokens when the budget cut the reply', async () => {
    const from = doorRequest({ model: 'a-4o', input: 'long story', max_output_tokens: 5 });
    const codec = door.reply(await door.decode(from), from);
    const response = JSON.parse(
      codec.completion(completion({ role: 'assistant', content: 'Once upon' }, 'length')),
    ) as Record<string, unknown>;
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 5,
      output_text: 'Once upon',
    });
  });

  it('gives errors in the envelope with a param, at the error status', () => {
    const { status, body } = door.error(new ProviderError('upstream failed'), 'req-1');
    expect(status).toBe(502);
    expect(body).toMatchObject({
      error: { code: 'provider_error', type: 'provider_error', message: 'upstream failed', param: null },
      request_id: 'req-1',
    });
  });
});

describe('streamed replies', () => {
  it('write the same events for text chunks as the worker writes them (read without a parse) as for any other spelling', async () => {
    const texts = [
      'He said "hi"',
      ' back\\slash',
      ' "},"finish_reason":null,"logprobs":null}],"usage":null}',
      ' 🙂 \t\u0001',
      '',
      ' end',
    ];
    const emitted: string[] = [];
    const emitter = new ChunkEmitter('chatcmpl-x', 1, 'a-4o', true, (json) => emitted.push(json));
    for (const text of texts) emitter.delta(0, { content: text });
    emitter.delta(0, { finish_reason: 'stop' });
    emitter.usage({ prompt_tokens: 3, completion_tokens: 6, total_tokens: 9 });
    const reordered = emitted.map((json) => {
      const { choices, ...rest } = JSON.parse(json);
      return JSON.stringify({ choices, ...rest });
    });
    // Ids and times differ between two replies; everything else must not.
    const normalize = (frames: string) =>
      frames.replace(/(resp|msg)_[0-9a-f]+/g, '$1_X').replace(/"created_at":\d+/g, '"created_at":0');
    const fast = await encodeStream({ model: 'a-4o', input: 'hi' }, emitted);
    const slow = await encodeStream({ model: 'a-4o', input: 'hi' }, reordered);
    expect(normalize(fast.frames)).toBe(normalize(slow.frames));
    const deltas = [...fast.frames.matchAll(/^data: (.*)$/gm)]
      .map((m) => JSON.parse(m[1]!))
      .filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.map((e) => e.delta)).toEqual(texts.filter((t) => t !== ''));
  });

  it('write the same events for the first, finish and usage chunks read without a parse as for any other spelling', async () => {
    const replies: Array<{ deltas: Array<Parameters<ChunkEmitter['delta']>[1]>; usage?: Usage; model?: string }> = [
      {
        deltas: [{ content: '' }, { content: 'Hi' }, { finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
      { deltas: [{ content: 'First "x"' }, { refusal: 'no' }, { content: ' then' }, { finish_reason: 'length' }] },
      {
        deltas: [{ content: 'a' }, { content: 'b', finish_reason: 'content_filter' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, prompt_tokens_details: { cached_tokens: 2 } },
      },
      { deltas: [{ finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } },
      { deltas: [{ content: 'x' }, { finish_reason: 'stop' }], model: 'fallback "é"' },
    ];
    const normalize = (frames: string) =>
      frames.replace(/(resp|msg)_[0-9a-f]+/g, '$1_X').replace(/"created_at":\d+/g, '"created_at":0');
    const body = {
      model: 'a-4o',
      input: 'hi',
      instructions: ',"status":"in_progress",',
      metadata: { k: ',"usage":null,"metadata":' },
    };
    for (const { deltas, usage, model = 'a-4o' } of replies) {
      for (const includeUsage of [true, false]) {
        const emitted: string[] = [];
        const emitter = new ChunkEmitter('chatcmpl-x', 1, model, includeUsage, (json) => emitted.push(json));
        for (const delta of deltas) emitter.delta(0, delta);
        if (usage) emitter.usage(usage);
        const reordered = emitted.map((json) => {
          const { choices, ...rest } = JSON.parse(json);
          return JSON.stringify({ choices, ...rest });
        });
        const fast = await encodeStream(body, emitted);
        const slow = await encodeStream(body, reordered);
        expect(normalize(fast.frames)).toBe(normalize(slow.frames));
        const last = [...fast.frames.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!)).at(-1);
        expect(last.response.model).toBe(model);
        expect(last.response.metadata).toEqual(body.metadata);
      }
    }
  });

  it('follow the event grammar with sequence numbers, read back by the SDK into the final response', async () => {
    const { frames, types } = await encodeStream({ model: 'a-4o', input: 'hi' }, [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk,
    ]);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const seqs = [...frames.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
    expect(seqs).toEqual(types.map((_, i) => i));
    expect(frames).toMatch(/^event: response\.created\ndata: /);

    const stream = clientAnswering(frames, true).responses.stream({ model: 'a-4o', input: 'hi' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Hello');
    expect(final.output).toMatchObject([
      { type: 'message', content: [{ type: 'output_text', text: 'Hello' }] },
      { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' },
      { type: 'function_call', call_id: 'call_2', name: 'g', arguments: '{}' },
    ]);
    expect(final.usage).toMatchObject({
      input_tokens: 5,
      output_tokens: 3,
      total_tokens: 8,
      input_tokens_details: { cached_tokens: 0 },
    });
  });

  it('ends with response.incomplete when the budget cut the stream', async () => {
    const { frames, types } = await encodeStream({ model: 'a-4o', input: 'hi', max_output_tokens: 2 }, [
      chunk({ content: 'Once' }),
      chunk({}, 'length'),
      usageChunk,
    ]);
    expect(types.at(-1)).toBe('response.incomplete');
    const last = JSON.parse([...frames.matchAll(/^data: (.*)$/gm)].at(-1)![1]!) as {
      response: Record<string, unknown>;
    };
    expect(last.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output_text: 'Once',
    });
  });

  it('ends a stream that fails after its first event with an error event, which the SDK raises', async () => {
    const from = doorRequest({ model: 'a-4o', input: 'hi', stream: true });
    const codec = door.reply(await door.decode(from), from);
    const frames =
      codec.chunk(chunk({ content: 'Hel' })) + codec.fail(new ProviderError('the upstream cut the stream'), 'req-2');
    expect(frames).not.toMatch(/response\.completed/);
    const last = JSON.parse([...frames.matchAll(/^data: (.*)$/gm)].at(-1)![1]!) as Record<string, unknown>;
    expect(last).toMatchObject({
      type: 'error',
      code: 'provider_error',
      message: 'the upstream cut the stream',
      param: null,
    });
    const stream = clientAnswering(frames, true).responses.stream({ model: 'a-4o', input: 'hi' });
    await expect(stream.finalResponse()).rejects.toThrow(/the upstream cut the stream/);
  });

  it('write the response objects of its events as JSON.stringify writes responseObject(), for any facts and state', () => {
    const plain: ResponseFacts = {
      id: 'resp_1',
      created_at: 1_764_265_000,
      model: 'a-4o',
      instructions: null,
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      temperature: null,
      top_p: null,
      max_output_tokens: null,
      metadata: {},
      user: undefined,
      store: false,
      previous_response_id: null,
      text: { format: { type: 'text' } },
      reasoning: { effort: null, summary: null },
      service_tier: 'default',
      truncation: 'disabled',
    };
    const full: ResponseFacts = {
      ...plain,
      model: 'c-"sonnet"\n',
      instructions: 'Be brief. "Quoted" \u2028',
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' }, strict: true, description: null }],
      tool_choice: { type: 'function', name: 'f' },
      parallel_tool_calls: false,
      temperature: 0.5,
      top_p: 1,
      max_output_tokens: 64,
      metadata: { a: 'b' },
      user: 'u-1',
      store: true,
      previous_response_id: 'resp_0',
      text: { format: { type: 'json_schema', name: 's', schema: {}, strict: true }, verbosity: 'low' },
      reasoning: { effort: 'high', summary: 'auto' },
    };
    const output = [
      {
        type: 'message' as const,
        id: 'msg_1',
        status: 'incomplete' as const,
        role: 'assistant' as const,
        content: [{ type: 'output_text' as const, text: 'a "b"', annotations: [], logprobs: [] }],
      },
    ];
    const usage = {
      input_tokens: 3,
      input_tokens_details: { cached_tokens: 1 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 5,
    };
    for (const facts of [plain, full]) {
      const json = new ResponseJson(facts);
      expect(json.opening).toBe(JSON.stringify(responseObject(facts, { status: 'in_progress', output: [] })));
      for (const state of [
        { status: 'completed' as const, incomplete_details: null, output: [], usage },
        { status: 'incomplete' as const, incomplete_details: { reason: 'max_output_tokens' }, output, usage },
        { status: 'failed' as const, output, error: { code: 'upstream_error', message: 'x' } },
      ]) {
        const response = responseObject(facts, state);
        expect(json.closing(response, JSON.stringify(state.output))).toBe(JSON.stringify(response));
      }
    }
  });

  it('opens with response.created even when the stream ends without a chunk', async () => {
    const { types } = await encodeStream({ model: 'a-4o', input: 'hi' }, []);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.completed']);
  });
});
