import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The Anthropic Messages door end to end: real API and worker processes,
 * loopback upstreams of the three wire formats, and the official
 * `@anthropic-ai/sdk` client. Each test checks what the client got and what
 * the upstream was sent (system instruction where the format keeps it, token
 * limit, stop sequences, tools, thinking blocks).
 */

const KEY = 'messages-door-key';
const prefix = uniquePrefix('messages-door');
const redis = testRedis();
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;
let gateway: Gateway;

const MODELS: Record<ProviderLetter, string> = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4-20250514' };
const LETTERS: ProviderLetter[] = ['a', 'b', 'c'];
const LENIENT = 'b-lenient';

const client = (options: { apiKey?: string | null; authToken?: string | null } = { apiKey: KEY }) =>
  new Anthropic({
    baseURL: gateway.baseUrl,
    apiKey: options.apiKey ?? null,
    authToken: options.authToken ?? null,
    maxRetries: 0,
  });

/** The body of the last model call an upstream received. */
function lastBody(letter: ProviderLetter): Untyped {
  const calls = upstreams[letter].requests.filter((r) => r.method === 'POST');
  return calls.at(-1)?.body;
}

/**
 * Sampling fields older API versions document and clients still send
 * (`temperature`, `top_k`), which the SDK's current types no longer list.
 */
function withSampling<T extends object>(params: T, sampling: { temperature?: number; top_k?: number }): T {
  return { ...params, ...sampling };
}

/** A 1x1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

beforeAll(async () => {
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: MODELS,
    env: { DLP_ENABLED: 'false', RATE_LIMIT_REQUESTS: '1000', CACHE_ENABLED: 'true' },
    moreProviders: (upstreams) => [
      // The same Gemini upstream, with the operator's opt-in to dropping what it cannot honour.
      {
        name: 'provider_b_lenient',
        format: 'gemini',
        api_key_env: 'PROVIDER_B_API_KEY',
        base_url: upstreams.b.url,
        models: [LENIENT],
        drop_unsupported_params: true,
      },
    ],
    config: { model_aliases: { 'claude-*haiku*': MODELS.b, 'claude-*': MODELS.c } },
  });
  ({ gateway, upstreams } = trio);
}, 90_000);

afterAll(async () => {
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe.each(LETTERS)('Messages door to provider_%s', (letter) => {
  const model = MODELS[letter];

  it('answers a message, with the system instruction, max_tokens and stop sequences where the format keeps them', async () => {
    const message = await client().messages.create({
      model,
      max_tokens: 77,
      system: [{ type: 'text', text: 'Be terse.' }],
      stop_sequences: ['STOP-HERE'],
      messages: [{ role: 'user', content: 'hello door' }],
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: hello door' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBe(3);
    const body = lastBody(letter);
    if (letter === 'a') {
      expect(body.messages[0]).toEqual({ role: 'system', content: 'Be terse.' });
      expect(body.max_tokens).toBe(77);
      expect(body.stop).toEqual(['STOP-HERE']);
    } else if (letter === 'b') {
      expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be terse.' }] });
      expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'hello door' }] }]);
      expect(body.generationConfig).toMatchObject({ maxOutputTokens: 77, stopSequences: ['STOP-HERE'] });
    } else {
      expect(body.system).toBe('Be terse.');
      expect(body.messages).toEqual([{ role: 'user', content: 'hello door' }]);
      expect(body.max_tokens).toBe(77);
      expect(body.stop_sequences).toEqual(['STOP-HERE']);
    }
  });

  it("streams through the SDK's stream helper to the same final message", async () => {
    const stream = client().messages.stream({
      model,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'stream me please' }],
    });
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    expect(text).toBe('Echo: stream me please');
    expect(final.content).toEqual([{ type: 'text', text: 'Echo: stream me please' }]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBe(4);
    expect(final.usage.input_tokens).toBeGreaterThan(0);
  });

  it('runs a tool round trip, streamed and not', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_weather',
        description: 'Weather of a city',
        input_schema: { type: 'object', properties: { input: { type: 'string' } } },
      },
    ];
    const first = await client().messages.create({
      model,
      max_tokens: 50,
      tools,
      messages: [{ role: 'user', content: 'weather in Paris' }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((b) => b.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { input: 'weather in Paris' } });
    const streamed = await client()
      .messages.stream({ model, max_tokens: 50, tools, messages: [{ role: 'user', content: 'weather in Paris' }] })
      .finalMessage();
    expect(streamed.content.find((b) => b.type === 'tool_use')).toMatchObject({
      name: 'get_weather',
      input: { input: 'weather in Paris' },
    });
    const second = await client().messages.create({
      model,
      max_tokens: 50,
      tools,
      messages: [
        { role: 'user', content: 'weather in Paris' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: (call as Anthropic.ToolUseBlock).id, content: '21C and sunny' },
          ],
        },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Tool said: 21C and sunny' }]);
    expect(second.stop_reason).toBe('end_turn');
  });

  it('stops at a stop sequence, and at max_tokens with stop_reason max_tokens, streamed and not', async () => {
    upstreams[letter].setBehavior({ honorLimits: true });
    try {
      const stopped = await client().messages.create({
        model,
        max_tokens: 50,
        stop_sequences: ['HALT'],
        messages: [{ role: 'user', content: 'one two HALT three' }],
      });
      expect(stopped.content).toEqual([{ type: 'text', text: 'Echo: one two ' }]);
      // Only the Anthropic format says which stop sequence ended a reply; the others read as a natural end.
      if (letter === 'c') expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'HALT' });
      else expect(stopped).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
      const streamedStop = await client()
        .messages.stream({
          model,
          max_tokens: 50,
          stop_sequences: ['HALT'],
          messages: [{ role: 'user', content: 'one two HALT three' }],
        })
        .finalMessage();
      expect(streamedStop.stop_reason).toBe(stopped.stop_reason);
      expect(streamedStop.stop_sequence).toBe(stopped.stop_sequence);
      const params = { model, max_tokens: 3, messages: [{ role: 'user' as const, content: 'a b c d e f' }] };
      const cut = await client().messages.create(params);
      expect(cut.content).toEqual([{ type: 'text', text: 'Echo: a b' }]);
      expect(cut.stop_reason).toBe('max_tokens');
      expect(cut.usage.output_tokens).toBe(3);
      const streamed = await client().messages.stream(params).finalMessage();
      expect(streamed.content).toEqual(cut.content);
      expect(streamed.stop_reason).toBe('max_tokens');
      expect(streamed.usage.output_tokens).toBe(3);
    } finally {
      upstreams[letter].setBehavior({ honorLimits: undefined });
    }
  });

  it('reads an image', async () => {
    const message = await client().messages.create({
      model,
      max_tokens: 50,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'text', text: 'what is this' },
          ],
        },
      ],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: what is this (+1 images)' }]);
  });

  it("counts tokens: the upstream's own count where its format has a counting endpoint, the gateway's estimate elsewhere", async () => {
    const params = {
      model,
      system: 'Be terse.',
      messages: [{ role: 'user' as const, content: 'a short question about tokens' }],
    };
    const calls = upstreams[letter].requests.length;
    const counted = await client().messages.countTokens(params).withResponse();
    const source = counted.response.headers.get('x-gateway-token-count');
    if (letter === 'a') {
      // The OpenAI format has no counting endpoint: nothing is asked of the upstream.
      expect(source).toBe('estimate');
      expect(upstreams.a.requests.length).toBe(calls);
      expect(counted.data.input_tokens).toBeGreaterThan(5);
      expect(counted.data.input_tokens).toBeLessThan(40);
      return;
    }
    expect(source).toBe('upstream');
    const call = upstreams[letter].requests.at(-1)!;
    if (letter === 'c') {
      expect(call.path).toBe('/v1/messages/count_tokens');
      expect(call.body).toEqual({ model, system: 'Be terse.', messages: params.messages });
    } else {
      expect(call.path).toBe(`/v1beta/models/${model}:countTokens`);
      expect((call.body as Untyped).generateContentRequest).toMatchObject({
        model: `models/${model}`,
        systemInstruction: { parts: [{ text: 'Be terse.' }] },
      });
    }
    // The upstream counts what it bills: the same request's reply reports the same input tokens.
    const message = await client().messages.create({ ...params, max_tokens: 20 });
    expect(counted.data.input_tokens).toBe(message.usage.input_tokens);
    // When the upstream cannot count, the estimate answers.
    upstreams[letter].setBehavior({ failNext: { count: 1, status: 500 } });
    try {
      const estimated = await client().messages.countTokens(params).withResponse();
      expect(estimated.response.headers.get('x-gateway-token-count')).toBe('estimate');
      expect(estimated.data.input_tokens).toBeGreaterThan(5);
    } finally {
      upstreams[letter].setBehavior({ failNext: undefined });
    }
  });
});

describe('Messages door: errors, auth, models, aliases', () => {
  it('answers a malformed body with a 400 in Anthropic shape, request id included', async () => {
    const res = await fetch(`${gateway.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Untyped;
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('raises the SDK typed errors: a bad field, an unknown model, a wrong key', async () => {
    await expect(
      client().messages.create(
        withSampling(
          { model: MODELS.a, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] },
          { temperature: 3 },
        ),
      ),
    ).rejects.toMatchObject({
      status: 400,
      error: {
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('temperature') },
      },
    });
    await expect(
      client().messages.create({ model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(
      client({ apiKey: 'wrong' }).messages.create({
        model: MODELS.a,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(
      client().messages.countTokens({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('takes the key as x-api-key and as Authorization: Bearer (ANTHROPIC_AUTH_TOKEN)', async () => {
    const viaBearer = await client({ authToken: KEY }).messages.create({
      model: MODELS.c,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'bearer auth' }],
    });
    expect(viaBearer.content).toEqual([{ type: 'text', text: 'Echo: bearer auth' }]);
    const viaHeader = await client({ apiKey: KEY }).messages.create({
      model: MODELS.c,
      max_tokens: 10,
      messages: [{ role: 'user', content: 'header auth' }],
    });
    expect(viaHeader.content).toEqual([{ type: 'text', text: 'Echo: header auth' }]);
  });

  it("lists models in Anthropic's shape and finds an alias", async () => {
    const page = await client().models.list();
    expect(page.data.map((m) => m.id).sort()).toEqual([...Object.values(MODELS), LENIENT].sort());
    expect(page.data[0]).toMatchObject({
      type: 'model',
      display_name: expect.any(String),
      created_at: expect.any(String),
    });
    expect((await client().models.retrieve('claude-sonnet-4-5-20250929')).id).toBe('claude-sonnet-4-5-20250929');
    // OpenAI's shape without anthropic-version.
    const openAiShape = (await (
      await fetch(`${gateway.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as Untyped;
    expect(openAiShape.object).toBe('list');
  });

  it('answers a repeated request from the exact cache, in Anthropic shape, streamed or not', async () => {
    const params = {
      model: MODELS.b,
      max_tokens: 20,
      messages: [{ role: 'user' as const, content: 'cache me through the door' }],
    };
    const before = upstreams.b.requests.length;
    const miss = await client().messages.create(params).withResponse();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    const hit = await client().messages.create(params).withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.data.content).toEqual(miss.data.content);
    // The same counts, marked as the gateway cache's (nothing was charged for the hit).
    expect(hit.data.usage).toEqual({ ...miss.data.usage, gateway_cache: { hit: true, type: 'exact' } });
    const replayed = await client().messages.stream(params).finalMessage();
    expect(replayed.content).toEqual(miss.data.content);
    expect(replayed.stop_reason).toBe('end_turn');
    expect(upstreams.b.requests.length).toBe(before + 1);
  });

  it("routes Claude Code's own model names through model_aliases", async () => {
    const before = upstreams.b.requests.length;
    const message = await client().messages.create({
      model: 'claude-haiku-4-5-20251001',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'alias please' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: alias please' }]);
    expect(upstreams.b.requests.length).toBe(before + 1);
  });

  it('sends cache_control where the client put it to an Anthropic-format upstream: on system blocks and on message blocks', async () => {
    await client().messages.create({
      model: MODELS.c,
      max_tokens: 20,
      system: [
        { type: 'text', text: 'A long and stable instruction.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'text', text: 'Today is Friday.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A pasted document.', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'cache marks please' },
          ],
        },
      ],
    });
    const body = lastBody('c');
    expect(body.system).toEqual([
      { type: 'text', text: 'A long and stable instruction.', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'Today is Friday.' },
    ]);
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'A pasted document.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'cache marks please' },
    ]);
  });

  it('passes anthropic-beta, anthropic-version and the fields it does not model unchanged to an Anthropic-format upstream', async () => {
    const unmodelled = {
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      container: 'container_011CQ',
      inference_geo: 'us',
      service_tier: 'standard_only',
    };
    const before = upstreams.c.requests.length;
    const message = await client().beta.messages.create(
      {
        model: MODELS.c,
        max_tokens: 20,
        betas: ['context-management-2025-06-27', 'a-future-beta-2027-01-01'],
        messages: [{ role: 'user', content: 'beta please' }],
        ...unmodelled,
      } as Untyped,
      { headers: { 'anthropic-version': '2023-06-01' } },
    );
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: beta please' }]);
    const call = upstreams.c.requests.slice(before).find((r) => r.method === 'POST')!;
    expect(call.headers['anthropic-beta']).toBe('context-management-2025-06-27,a-future-beta-2027-01-01');
    expect(call.headers['anthropic-version']).toBe('2023-06-01');
    expect(call.body).toMatchObject({
      ...unmodelled,
      model: MODELS.c,
      max_tokens: 20,
      messages: [{ role: 'user', content: 'beta please' }],
    });
    // A tool's own Anthropic fields go with it; another format is sent the tool alone.
    const tools = [
      {
        name: 'get_weather',
        input_schema: { type: 'object' as const },
        cache_control: { type: 'ephemeral' as const },
        strict: true,
        defer_loading: false,
        eager_input_streaming: true,
      },
    ];
    await client().messages.create({
      model: MODELS.c,
      max_tokens: 20,
      tools,
      messages: [{ role: 'user', content: 'tool fields' }],
    } as Untyped);
    expect(lastBody('c').tools).toEqual(tools);
    await client().messages.create({
      model: MODELS.a,
      max_tokens: 20,
      tools,
      messages: [{ role: 'user', content: 'tool fields' }],
    } as Untyped);
    expect(lastBody('a').tools).toEqual([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: true } },
    ]);
    // A version the client pins reaches the upstream as it is, not the adapter's own.
    await client().messages.create(
      { model: MODELS.c, max_tokens: 20, messages: [{ role: 'user', content: 'pinned version' }] },
      { headers: { 'anthropic-version': '2099-12-31' } },
    );
    expect(upstreams.c.requests.at(-1)!.headers['anthropic-version']).toBe('2099-12-31');
  });

  it('refuses fields it does not model for OpenAI and Gemini formats naming them, or drops and names them when the provider is configured to', async () => {
    const params = {
      max_tokens: 20,
      messages: [{ role: 'user' as const, content: 'unmodelled fields' }],
      container: 'container_011CQ',
      inference_geo: 'us',
    };
    for (const [model, provider] of [
      [MODELS.a, 'provider_a'],
      [MODELS.b, 'provider_b'],
    ]) {
      await expect(client().messages.create({ ...params, model } as Untyped)).rejects.toMatchObject({
        status: 400,
        error: {
          error: {
            type: 'invalid_request_error',
            message: expect.stringContaining(`'container', 'inference_geo' are not supported by ${provider}`),
          },
        },
      });
    }
    const before = upstreams.b.requests.length;
    const dropped = await client()
      .messages.create({ ...params, model: LENIENT, context_management: { edits: [] } } as Untyped, {
        headers: { 'anthropic-beta': 'context-management-2025-06-27' },
      })
      .withResponse();
    expect(dropped.data.content).toEqual([{ type: 'text', text: 'Echo: unmodelled fields' }]);
    // Context editing and the beta header go quietly (named) for every provider; the fields need the opt-in.
    expect(dropped.response.headers.get('x-gateway-dropped-params')).toBe(
      'context_management, anthropic-beta, container, inference_geo',
    );
    const call = upstreams.b.requests.slice(before).find((r) => r.method === 'POST')!;
    expect(JSON.stringify(call.body)).not.toMatch(/container|inference_geo|context_management/);
    expect(call.headers['anthropic-beta']).toBeUndefined();
    // A field's name is the client's: it is named safely in a header, and a flood of them is counted.
    const hostile = Object.fromEntries([['bad\r\nname é', 1], ...Array.from({ length: 20 }, (_, i) => [`f${i}`, i])]);
    const named = await client()
      .messages.create({
        max_tokens: 20,
        messages: [{ role: 'user', content: 'odd fields' }],
        model: LENIENT,
        ...hostile,
      } as Untyped)
      .withResponse();
    expect(named.response.headers.get('x-gateway-dropped-params')).toBe(
      `bad??name??, ${Array.from({ length: 15 }, (_, i) => `f${i}`).join(', ')}, 5 more fields`,
    );
  });

  it('passes blocks of types and block and tool fields it does not model unchanged to an Anthropic-format upstream, and names them for the other formats', async () => {
    // A web-search turn as Anthropic's API returns it, sent back by the client with citations; then a search result.
    const messages = [
      { role: 'user', content: 'Who won?' },
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'winner' } },
          {
            type: 'web_search_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: [{ type: 'web_search_result', url: 'https://e.x/a', title: 'A', encrypted_content: 'enc' }],
          },
          {
            type: 'text',
            text: 'Ann won.',
            citations: [{ type: 'web_search_result_location', url: 'https://e.x/a', cited_text: 'Ann' }],
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'search_result', source: 'https://s.x', title: 'S', content: [{ type: 'text', text: 'found' }] },
          { type: 'text', text: 'And then?', cache_control: { type: 'ephemeral' }, a_future_field: { x: 1 } },
        ],
      },
    ];
    const tools = [{ name: 'lookup', input_schema: { type: 'object' }, input_examples: [{ q: 'x' }] }];
    const params = { max_tokens: 20, messages, tools } as Untyped;
    const message = await client().messages.create({ ...params, model: MODELS.c });
    // The fake model calls the tool it was given; what matters is what the upstream was sent.
    expect(message.content.length).toBeGreaterThan(0);
    expect(lastBody('c').messages).toEqual(messages);
    expect(lastBody('c').tools).toEqual(tools);
    const names =
      "'server_tool_use', 'web_search_tool_result', 'messages.1.content.2.citations', 'search_result', " +
      "'messages.2.content.1.a_future_field', 'tools.0.input_examples'";
    for (const [model, provider] of [
      [MODELS.a, 'provider_a'],
      [MODELS.b, 'provider_b'],
    ]) {
      await expect(client().messages.create({ ...params, model })).rejects.toMatchObject({
        status: 400,
        error: {
          error: {
            type: 'invalid_request_error',
            message: expect.stringContaining(`${names} are not supported by ${provider}`),
          },
        },
      });
    }
    const before = upstreams.b.requests.length;
    const dropped = await client()
      .messages.create({ ...params, model: LENIENT })
      .withResponse();
    expect(dropped.data.content.length).toBeGreaterThan(0);
    expect(dropped.response.headers.get('x-gateway-dropped-params')).toBe(names.replaceAll("'", ''));
    const call = upstreams.b.requests.slice(before).find((r) => r.method === 'POST')!;
    expect(JSON.stringify(call.body)).not.toMatch(
      /srvtoolu_1|encrypted_content|citations|a_future_field|input_examples|found/,
    );
    // count_tokens takes the same blocks and unknown top-level fields, for an estimate.
    const count = await client().messages.countTokens({
      ...params,
      max_tokens: undefined,
      model: MODELS.c,
      container: 'container_011CQ',
    } as Untyped);
    expect(count.input_tokens).toBeGreaterThan(10);
  });

  it("sends Anthropic's own tools, Files API sources, tool results made of blocks and unmodelled system fields to an Anthropic-format upstream unchanged, and names them for the other formats", async () => {
    const system = [{ type: 'text', text: 'Be brief.', a_system_field: { x: 1 } }];
    const tools = [
      { name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
    ];
    const messages = [
      { role: 'user', content: 'Find it.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'it' } }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'a chart and a source' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
              { type: 'search_result', source: 'https://s.x', title: 'S', content: [{ type: 'text', text: 'found' }] },
            ],
          },
          { type: 'document', source: { type: 'file', file_id: 'file_011' }, title: 'Report' },
          { type: 'text', text: 'Now search the web.' },
        ],
      },
    ];
    const params = {
      max_tokens: 30,
      system,
      tools,
      messages,
      tool_choice: { type: 'tool', name: 'web_search' },
    } as Untyped;
    const beta = { headers: { 'anthropic-beta': 'files-api-2025-04-14' } };
    const message = await client().messages.create({ ...params, model: MODELS.c }, beta);
    expect(message.content.length).toBeGreaterThan(0);
    const body = lastBody('c');
    expect(body.system).toEqual(system);
    expect(body.tools).toEqual(tools);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'web_search' });
    expect(body.messages).toEqual(messages);
    expect(upstreams.c.requests.at(-1)!.headers['anthropic-beta']).toBe('files-api-2025-04-14');
    const names =
      "'system.0.a_system_field', 'search_result', 'messages.2.content.1.source.file_id', 'web_search_20250305'";
    for (const [model, provider] of [
      [MODELS.a, 'provider_a'],
      [MODELS.b, 'provider_b'],
    ]) {
      await expect(client().messages.create({ ...params, model }, beta)).rejects.toMatchObject({
        status: 400,
        error: {
          error: {
            type: 'invalid_request_error',
            message: expect.stringMatching(
              new RegExp(
                `^'tool_choice', ${names} are not supported by ${provider}|^${names}, 'tool_choice' are not supported by ${provider}`,
              ),
            ),
          },
        },
      });
    }
  });

  it("reads a tool result's image on every format: in the result for Anthropic, after the turn's results for OpenAI, beside the function responses for Gemini", async () => {
    const messages = [
      { role: 'user' as const, content: 'What is in the screenshot?' },
      {
        role: 'assistant' as const,
        content: [{ type: 'tool_use' as const, id: 'toolu_9', name: 'screenshot', input: {} }],
      },
      {
        role: 'user' as const,
        content: [
          {
            type: 'tool_result' as const,
            tool_use_id: 'toolu_9',
            content: [
              { type: 'text' as const, text: 'Screenshot taken.' },
              {
                type: 'image' as const,
                source: { type: 'base64' as const, media_type: 'image/png' as const, data: PNG },
              },
            ],
          },
        ],
      },
    ];
    const tools = [{ name: 'screenshot', input_schema: { type: 'object' as const, properties: {} } }];
    for (const letter of LETTERS) {
      const message = await client().messages.create({ model: MODELS[letter], max_tokens: 30, messages, tools });
      expect(message.type).toBe('message');
    }
    expect(lastBody('c').messages[2]).toEqual(messages[2]);
    expect(lastBody('a').messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'screenshot', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_9', content: 'Screenshot taken.' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
    ]);
    expect(lastBody('b').contents.at(-1)).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'screenshot', response: { output: 'Screenshot taken.' } } },
        { inlineData: { mimeType: 'image/png', data: PNG } },
      ],
    });
  });

  it("passes an Anthropic-format upstream's server-tool blocks and citations on to the client, and no other door sees them", async () => {
    upstreams.c.setBehavior({ webSearch: true });
    try {
      const params = { model: MODELS.c, max_tokens: 50, messages: [{ role: 'user' as const, content: 'Search it' }] };
      const expected = [
        { type: 'server_tool_use', id: 'srvtoolu_fake', name: 'web_search', input: { query: 'fake search' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_fake',
          content: [
            {
              type: 'web_search_result',
              url: 'https://example.com/fake',
              title: 'A fake result',
              encrypted_content: 'ZmFrZQ==',
              page_age: null,
            },
          ],
        },
        {
          type: 'text',
          text: 'Echo: Search it',
          citations: [
            {
              type: 'web_search_result_location',
              url: 'https://example.com/fake',
              title: 'A fake result',
              encrypted_index: 'ZmFrZQ==',
              cited_text: 'fake',
            },
          ],
        },
      ];
      const message = await client().messages.create(params);
      expect(message.content).toEqual(expected);
      expect(message.stop_reason).toBe('end_turn');
      // Such a reply is not cached (a replay would lose the blocks): asked again, the upstream answers again.
      const calls = upstreams.c.requests.length;
      expect((await client().messages.create(params)).content).toEqual(expected);
      expect(upstreams.c.requests.length).toBe(calls + 1);
      // Streamed: the blocks start, their deltas (the server tool's input, citations_delta) and stops, in order.
      // (Another prompt than the sync call's, which the exact cache would answer.)
      const stream = client().messages.stream({
        ...params,
        messages: [{ role: 'user', content: 'Search it streamed' }],
      });
      const citations: unknown[] = [];
      stream.on('citation', (citation) => citations.push(citation));
      const final = await stream.finalMessage();
      expect(final.content).toEqual([expected[0], expected[1], { ...expected[2], text: 'Echo: Search it streamed' }]);
      expect(citations).toEqual(expected[2]!.citations);
      expect(final.stop_reason).toBe('end_turn');
      // The chat door reads the same reply as text alone.
      const chat = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODELS.c, messages: [{ role: 'user', content: 'Search it via chat' }] }),
      });
      const completion = (await chat.json()) as Untyped;
      expect(completion.choices[0].message).toEqual({ role: 'assistant', content: 'Echo: Search it via chat' });
    } finally {
      upstreams.c.setBehavior({ webSearch: undefined });
    }
  });

  it('falls back from an Anthropic-format model past a format that cannot carry unmodelled block fields, to one that drops them', async () => {
    const params = (text: string) =>
      ({
        max_tokens: 20,
        model: MODELS.c,
        messages: [{ role: 'user', content: [{ type: 'text', text, a_future_field: 1 }] }],
      }) as Untyped;
    // The first try and the worker's two retries fail.
    upstreams.c.setBehavior({ failNext: { count: 3, status: 500 } });
    const failed = await client()
      .messages.create(params('fall back, refused'), { headers: { 'x-gateway-fallbacks': MODELS.a } })
      .catch((err: unknown) => err as Untyped);
    // The OpenAI-format fallback is skipped (its attempt says why); the client gets the upstream's failure.
    expect(failed).toBeInstanceOf(Anthropic.APIError);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.headers.get('server-timing')).toMatch(/attempt-2;desc="a-4o provider_a invalid_request"/);
    upstreams.c.setBehavior({ failNext: { count: 3, status: 500 } });
    const answered = await client()
      .messages.create(params('fall back, dropped'), { headers: { 'x-gateway-fallbacks': LENIENT } })
      .withResponse();
    expect(answered.data.content).toEqual([{ type: 'text', text: 'Echo: fall back, dropped' }]);
    expect(answered.response.headers.get('x-gateway-dropped-params')).toBe('messages.0.content.0.a_future_field');
  });

  it("sends a tool's string limits to Gemini as its own keywords, and names the constraints it leaves out", async () => {
    const input_schema = {
      type: 'object' as const,
      properties: {
        path: { type: 'string', maxLength: 256, pattern: '^/' },
        limit: { type: 'integer', exclusiveMinimum: 0 },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      },
    };
    const tools: Anthropic.Tool[] = [{ name: 'read_file', description: 'Reads a file', input_schema }];
    const reply = await client()
      .messages.create({ model: MODELS.b, max_tokens: 50, tools, messages: [{ role: 'user', content: 'read it' }] })
      .withResponse();
    expect(reply.data.stop_reason).toBe('tool_use');
    expect(reply.response.headers.get('x-gateway-dropped-params')).toBe('tools[].parameters.uniqueItems');
    expect(lastBody('b').tools[0].functionDeclarations[0].parametersJsonSchema.properties).toEqual({
      path: { type: 'string', maxLength: 256, pattern: '^/' },
      limit: { type: 'integer', minimum: 1 },
      tags: { type: 'array', items: { type: 'string' } },
    });
    // What would change the parameters' shape is still a 400 naming it.
    await expect(
      client().messages.create({
        model: MODELS.b,
        max_tokens: 50,
        tools: [{ name: 'f', input_schema: { type: 'object', allOf: [{ type: 'object' }] } }],
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      error: {
        error: { message: expect.stringContaining("uses 'allOf' (at the root), which provider_b cannot express") },
      },
    });
  });

  it('sends thinking blocks with their signatures, top_k and thinking unchanged to an Anthropic-format upstream, and refuses them for OpenAI naming them', async () => {
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'first' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'pondering', signature: 'EqQBsig==' },
          { type: 'redacted_thinking', data: 'ENCRYPTED' },
          { type: 'text', text: 'an answer' },
        ],
      },
      { role: 'user', content: 'second' },
    ];
    await client().messages.create(
      withSampling(
        { model: MODELS.c, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages },
        { top_k: 5 },
      ),
    );
    const body = lastBody('c');
    expect(body.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'pondering', signature: 'EqQBsig==' },
      { type: 'redacted_thinking', data: 'ENCRYPTED' },
      { type: 'text', text: 'an answer' },
    ]);
    expect(body.top_k).toBe(5);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    await expect(
      client().messages.create(withSampling({ model: MODELS.a, max_tokens: 3000, messages }, { top_k: 5 })),
    ).rejects.toMatchObject({
      status: 400,
      error: {
        error: {
          type: 'invalid_request_error',
          message: expect.stringContaining("'top_k' is not supported by provider_a"),
        },
      },
    });
    // Adaptive thinking and effort change nothing an OpenAI-format model's answer means: dropped and named.
    const dropped = await client()
      .messages.create({
        model: MODELS.a,
        max_tokens: 3000,
        thinking: { type: 'adaptive' },
        output_config: { effort: 'high' },
        messages,
      })
      .withResponse();
    expect(dropped.response.headers.get('x-gateway-dropped-params')).toBe('thinking, effort');
    expect(lastBody('a')).not.toHaveProperty('thinking');
    expect(lastBody('a')).not.toHaveProperty('reasoning_effort');
    // Gemini takes top_k and a thinking budget in its own fields.
    await client().messages.create(
      withSampling(
        { model: MODELS.b, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages },
        { top_k: 5 },
      ),
    );
    expect(lastBody('b').generationConfig).toMatchObject({ topK: 5, thinkingConfig: { thinkingBudget: 1024 } });
  });
});
