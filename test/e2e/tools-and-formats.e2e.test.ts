import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * Tool calling, structured outputs, images and the newer parameters through
 * the real API and worker processes, in all three wire formats, with the
 * official `openai` client (its tool runner, its stream accumulator and its
 * zod `parse()`), against loopback upstreams that answer with tool calls and
 * JSON and check image parts.
 */

const KEY = 'gw_e2e_tools_key_0123456789';
const prefix = uniquePrefix('tools');
const redis = testRedis();
let gateway: Gateway;
let client: OpenAI;
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;

const MODELS = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4' } as const;
type Letter = keyof typeof MODELS;

/** A 1x1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] },
  },
};
const timeTool = {
  type: 'function' as const,
  function: {
    name: 'get_time',
    description: 'The time in a city.',
    parameters: { type: 'object', properties: { input: { type: 'string' } } },
  },
};

beforeAll(async () => {
  const fast = { timeout_ms: 3000, stream_idle_timeout_ms: 2000, queue_timeout_ms: 5000, max_retries: 2 };
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: MODELS,
    provider: fast,
    moreProviders: (upstreams) => [
      // The same Anthropic upstream, with the operator's opt-in to dropping what it cannot honour.
      {
        name: 'provider_c_lenient',
        format: 'anthropic',
        api_key_env: 'PROVIDER_C_API_KEY',
        base_url: upstreams.c.url,
        models: ['c-lenient'],
        drop_unsupported_params: true,
        ...fast,
      },
    ],
  });
  ({ gateway, upstreams } = trio);
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** Unique text per test, so no cache answers for another test. */
function prompt(label: string): string {
  return `${label} ${Math.random().toString(36).slice(2, 8)}`;
}

function lastBody(letter: Letter): Record<string, unknown> {
  return upstreams[letter].requests.at(-1)?.body as Record<string, unknown>;
}

describe.each(Object.entries(MODELS) as Array<[Letter, string]>)('provider_%s', (letter, model) => {
  it('asks for a tool, takes its result and answers (sync), as OpenAI shapes it', async () => {
    const text = prompt('weather in Paris');
    const first = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: text }],
      tools: [weatherTool, timeTool],
    });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toHaveLength(1);
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    expect(call?.id).toMatch(/\S/);
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ input: text });

    const second = await client.chat.completions.create({
      model,
      tools: [weatherTool, timeTool],
      messages: [
        { role: 'user', content: text },
        choice!.message,
        { role: 'tool', tool_call_id: call.id, content: 'sunny, 21 C' },
      ],
    });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe('Tool said: sunny, 21 C');
  });

  it('runs a whole tool loop streamed with the SDK tool runner', async () => {
    const text = prompt('streamed weather');
    const seen: unknown[] = [];
    const runner = client.chat.completions.runTools({
      model,
      stream: true,
      messages: [{ role: 'user', content: text }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: weatherTool.function.description,
            parameters: weatherTool.function.parameters,
            parse: JSON.parse,
            function: (args: unknown) => {
              seen.push(args);
              return 'rain';
            },
          },
        },
      ],
    });
    const final = await runner.finalChatCompletion();
    expect(seen).toEqual([{ input: text }]);
    expect(final.choices[0]?.message.content).toBe('Tool said: rain');
    // The streamed tool call arrived in pieces and was put together by the SDK's own accumulator.
    const calls = runner.messages.flatMap((m) => ('tool_calls' in m && m.tool_calls ? m.tool_calls : []));
    expect(calls).toHaveLength(1);
  });

  it('honours tool_choice (named, none) and parallel_tool_calls', async () => {
    const forced = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: prompt('time please') }],
      tools: [weatherTool, timeTool],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const forcedCall = forced.choices[0]?.message.tool_calls?.[0];
    expect(forcedCall?.type === 'function' && forcedCall.function.name).toBe('get_time');

    const none = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: prompt('no tools') }],
      tools: [weatherTool],
      tool_choice: 'none',
    });
    expect(none.choices[0]?.message.tool_calls ?? []).toHaveLength(0);
    expect(none.choices[0]?.message.content).toMatch(/^Echo: no tools/);

    const parallel = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: prompt('[parallel] both') }],
      tools: [weatherTool, timeTool],
    });
    expect(parallel.choices[0]?.message.tool_calls?.map((c) => c.type === 'function' && c.function.name)).toEqual([
      'get_weather',
      'get_time',
    ]);
  });

  it('streams parallel tool calls as OpenAI streams them (index, id and name, then argument fragments)', async () => {
    const stream = await client.chat.completions.create({
      model,
      stream: true,
      messages: [{ role: 'user', content: prompt('[parallel] stream') }],
      tools: [weatherTool, timeTool],
    });
    const pieces: OpenAI.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        pieces.push(...(choice.delta.tool_calls ?? []));
        finish = choice.finish_reason ?? finish;
      }
    }
    expect(finish).toBe('tool_calls');
    for (const index of [0, 1]) {
      const own = pieces.filter((p) => p.index === index);
      expect(own[0]?.id).toMatch(/\S/);
      expect(own[0]?.function?.name).toBe(index === 0 ? 'get_weather' : 'get_time');
      expect(own.slice(1).every((p) => p.id === undefined && p.function?.name === undefined)).toBe(true);
      expect(JSON.parse(own.map((p) => p.function?.arguments ?? '').join(''))).toHaveProperty('input');
    }
  });

  it('returns structured outputs that client.chat.completions.parse() validates with zod', async () => {
    const Weather = z.object({ city: z.string(), celsius: z.number(), sunny: z.boolean(), tags: z.array(z.string()) });
    const text = prompt('structured');
    const completion = await client.chat.completions.parse({
      model,
      messages: [{ role: 'user', content: text }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect(completion.choices[0]?.message.parsed).toEqual({ city: text, celsius: 42, sunny: true, tags: [text] });

    const stream = client.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: text + ' s' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect((await stream.finalChatCompletion()).choices[0]?.message.parsed).toEqual({
      city: `${text} s`,
      celsius: 42,
      sunny: true,
      tags: [`${text} s`],
    });

    const json = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: prompt('json please') }],
      response_format: { type: 'json_object' },
    });
    // JSON mode promises a JSON object, not a shape.
    const parsed: unknown = JSON.parse(json.choices[0]?.message.content ?? '');
    expect(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)).toBe(true);
  });

  it('sends an inline image to the provider as its own image block', async () => {
    const text = prompt('what is in this image');
    const reply = await client.chat.completions.create({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          ],
        },
      ],
    });
    // The fake decodes and checks the image in its own format before counting it.
    expect(reply.choices[0]?.message.content).toBe(`Echo: ${text} (+1 images)`);
    expect(JSON.stringify(lastBody(letter))).toContain(PNG);
  });

  it('forwards max_completion_tokens under the name the format uses', async () => {
    await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: prompt('budget') }],
      max_completion_tokens: 33,
    });
    const body = lastBody(letter);
    if (letter === 'a') {
      expect(body.max_completion_tokens).toBe(33);
      expect(body).not.toHaveProperty('max_tokens');
    } else if (letter === 'b') expect((body.generationConfig as Record<string, unknown>).maxOutputTokens).toBe(33);
    else expect(body.max_tokens).toBe(33);
  });
});

describe('parameters a provider cannot honour', () => {
  it('answers 400 naming the parameter and the provider', async () => {
    const error = await client.chat.completions
      .create({ model: MODELS.c, messages: [{ role: 'user', content: 'hi' }], presence_penalty: 0.5 })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain("'presence_penalty'");
    expect((error as Error).message).toContain('provider_c');
    expect((error as Error).message).toContain('drop_unsupported_params');
  });

  it('drops quietly, for every provider, the ones whose value changes nothing (user, seed, a penalty of 0, parallel_tool_calls false with one forced tool)', async () => {
    for (const letter of ['b', 'c'] as const) {
      upstreams[letter].reset();
      const { data, response } = await client.chat.completions
        .create({
          model: MODELS[letter],
          messages: [{ role: 'user', content: prompt(`inert ${letter}`) }],
          user: 'u-1',
          seed: 7,
          frequency_penalty: 0,
        })
        .withResponse();
      expect(data.choices[0]?.message.content).toMatch(/^Echo: inert/);
      const dropped = (response.headers.get('x-gateway-dropped-params') ?? '').split(', ');
      // Gemini has a seed and penalties but no user; Anthropic has a user but no seed or penalties.
      expect(dropped).toEqual(letter === 'b' ? ['user'] : ['seed', 'frequency_penalty']);
      const body = JSON.stringify(lastBody(letter));
      // Anthropic takes the user as metadata.user_id; Gemini has nowhere to put it.
      if (letter === 'b') expect(body).not.toContain('u-1');
      else expect(body).not.toContain('"seed"');
    }
    // LangChain's with_structured_output(method="function_calling") on a Gemini model.
    const forced = await client.chat.completions.create({
      model: MODELS.b,
      messages: [{ role: 'user', content: prompt('weather please') }],
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    const call = forced.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function.name : undefined).toBe('get_weather');
    // Without a forced tool it would change the answer: still refused, by name.
    const open = await client.chat.completions
      .create({
        model: MODELS.b,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [weatherTool, timeTool],
        parallel_tool_calls: false,
      })
      .catch((err: unknown) => err);
    expect(open).toBeInstanceOf(OpenAI.BadRequestError);
    expect((open as Error).message).toContain("'parallel_tool_calls'");
  });

  it('drops them for a provider configured to, and says so in a header', async () => {
    upstreams.c.reset();
    const { data, response } = await client.chat.completions
      .create({
        model: 'c-lenient',
        messages: [{ role: 'user', content: prompt('lenient') }],
        seed: 7,
        presence_penalty: 0.5,
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toMatch(/^Echo: lenient/);
    expect(response.headers.get('x-gateway-dropped-params')).toBe('seed, presence_penalty');
    expect(lastBody('c')).not.toHaveProperty('seed');
  });

  it('forwards them where the format has them', async () => {
    await client.chat.completions.create({
      model: MODELS.a,
      messages: [{ role: 'user', content: prompt('params') }],
      seed: 7,
      user: 'u-1',
      metadata: { team: 'x' },
      store: false,
      reasoning_effort: 'low',
      logprobs: true,
      top_logprobs: 2,
      stop: ['END'],
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
    });
    expect(lastBody('a')).toMatchObject({
      seed: 7,
      user: 'u-1',
      metadata: { team: 'x' },
      store: false,
      reasoning_effort: 'low',
      logprobs: true,
      top_logprobs: 2,
      stop: ['END'],
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
    });
  });
});

describe('retries the client can live with', () => {
  it('one SDK call at its default settings costs at most 1 + max_retries upstream calls', async () => {
    upstreams.a.reset();
    upstreams.a.setBehavior({ failNext: { count: 10, status: 500 } });
    // Default maxRetries (2): the SDK would retry a 502 twice unless told not to.
    const sdk = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, timeout: 20_000 });
    const error = await sdk.chat.completions
      .create({ model: MODELS.a, messages: [{ role: 'user', content: prompt('failing') }] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe('false');
    expect(upstreams.a.requests).toHaveLength(3);
    upstreams.a.reset();
  });
});

describe('caches and DLP follow the new model', () => {
  it('caches a tool-call reply and replays it as JSON and as SSE; tools are part of the key', async () => {
    upstreams.a.reset();
    const messages = [{ role: 'user' as const, content: prompt('cache me') }];
    const miss = await client.chat.completions
      .create({ model: MODELS.a, messages, tools: [weatherTool] })
      .withResponse();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    const hit = await client.chat.completions
      .create({ model: MODELS.a, messages, tools: [weatherTool] })
      .withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.data.choices[0]?.message.tool_calls).toEqual(miss.data.choices[0]?.message.tool_calls);
    expect(hit.data.choices[0]?.finish_reason).toBe('tool_calls');

    const replayed = await client.chat.completions
      .stream({ model: MODELS.a, messages, tools: [weatherTool] })
      .finalChatCompletion();
    expect(replayed.choices[0]?.message.tool_calls).toEqual(miss.data.choices[0]?.message.tool_calls);
    expect(replayed.choices[0]?.finish_reason).toBe('tool_calls');
    expect(upstreams.a.requests).toHaveLength(1);

    // Another tool list, another tool_choice or a response_format is another question.
    const other = await client.chat.completions.create({ model: MODELS.a, messages, tools: [timeTool] }).withResponse();
    expect(other.response.headers.get('x-cache')).toBe('MISS');
    const noTools = await client.chat.completions.create({ model: MODELS.a, messages }).withResponse();
    expect(noTools.response.headers.get('x-cache')).toBe('MISS');
    const json = await client.chat.completions
      .create({ model: MODELS.a, messages, response_format: { type: 'json_object' } })
      .withResponse();
    expect(json.response.headers.get('x-cache')).toBe('MISS');
  });

  it('redacts personal data in tool-call arguments and tool results before the upstream sees them', async () => {
    upstreams.a.reset();
    const call = {
      id: 'call_1',
      type: 'function' as const,
      function: { name: 'lookup', arguments: '{"email":"jane.doe@example.com"}' },
    };
    await client.chat.completions.create({
      model: MODELS.a,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      messages: [
        { role: 'user', content: prompt('find her') },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: 'Her card is 4111 1111 1111 1111.' },
      ],
    });
    const sent = JSON.stringify(lastBody('a'));
    expect(sent).not.toContain('jane.doe@example.com');
    expect(sent).not.toContain('4111 1111 1111 1111');
    expect(sent).toContain('<EMAIL_ADDRESS_1>');
    expect(sent).toContain('<CREDIT_CARD_1>');
  });
});
