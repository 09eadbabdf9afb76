import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * `POST /v1/responses` and the stored responses through the real API and
 * worker processes, with the official `openai` client (create, stream and
 * its final response, parse with zod, retrieve, delete, input_items),
 * against loopback upstreams of all three wire formats; the bodies the
 * upstreams receive are checked (instructions as each format's system
 * instruction, earlier turns of previous_response_id, tool results paired
 * with their calls, images).
 */

const KEY = 'gw_e2e_responses_key_0123456789';
const OTHER_KEY = 'gw_e2e_responses_other_0123456789';
const prefix = uniquePrefix('responses');
const redis = testRedis();
let gateway: Gateway;
let client: OpenAI;
let other: OpenAI;
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;

const MODELS = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4' } as const;
type Letter = keyof typeof MODELS;

/** A 1x1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
/** A minimal PDF. */
const PDF = 'JVBERi0xLjQKMSAwIG9iaiA8PD4+IGVuZG9iagp0cmFpbGVyIDw8Pj4KJSVFT0YK';

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: {
    type: 'object',
    properties: { input: { type: 'string' } },
    required: ['input'],
    additionalProperties: false,
  },
  strict: true,
};

beforeAll(async () => {
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY, OTHER_KEY],
    models: MODELS,
    provider: { timeout_ms: 3000, stream_idle_timeout_ms: 2000, queue_timeout_ms: 5000, max_retries: 1 },
  });
  ({ gateway, upstreams } = trio);
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
  other = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: OTHER_KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

function lastBody(letter: Letter): Record<string, unknown> {
  return upstreams[letter].requests.at(-1)?.body as Record<string, unknown>;
}

/** The system instruction and the conversation texts of an upstream body, whatever its format. */
function upstreamView(letter: Letter): { system: string | undefined; texts: string[] } {
  const body = lastBody(letter);
  if (letter === 'a') {
    const messages = body.messages as Array<{ role: string; content: unknown }>;
    const system = messages.find((m) => m.role === 'system')?.content as string | undefined;
    return { system, texts: messages.filter((m) => m.role !== 'system').map((m) => JSON.stringify(m.content)) };
  }
  if (letter === 'b') {
    const system = (body.systemInstruction as { parts: Array<{ text: string }> } | undefined)?.parts
      .map((p) => p.text)
      .join('');
    return { system, texts: (body.contents as Array<{ parts: unknown[] }>).map((c) => JSON.stringify(c.parts)) };
  }
  const system =
    typeof body.system === 'string'
      ? body.system
      : (body.system as Array<{ text: string }> | undefined)?.map((b) => b.text).join('');
  return { system, texts: (body.messages as Array<{ content: unknown }>).map((m) => JSON.stringify(m.content)) };
}

function unique(label: string): string {
  return `${label} ${Math.random().toString(36).slice(2, 8)}`;
}

describe.each(Object.entries(MODELS) as Array<[Letter, string]>)('provider_%s', (letter, model) => {
  it('creates a response, instructions as the system instruction, and stores it for retrieve and input_items', async () => {
    const text = unique('hello there');
    const response = await client.responses.create({
      model,
      input: text,
      instructions: 'Answer briefly.',
      metadata: { case: 'create' },
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model,
      output_text: `Echo: ${text}`,
      metadata: { case: 'create' },
    });
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.output_tokens).toBeGreaterThan(0);
    const view = upstreamView(letter);
    expect(view.system).toBe('Answer briefly.');
    expect(view.texts).toHaveLength(1);
    expect(view.texts[0]).toContain(text);

    const stored = await client.responses.retrieve(response.id);
    expect(stored).toMatchObject({ id: response.id, output_text: `Echo: ${text}`, status: 'completed' });
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toMatchObject([{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }]);
  });

  it('streams the event grammar; the SDK assembles the final response, which is stored', async () => {
    const text = unique('stream me');
    const stream = client.responses.stream({ model, input: text });
    const types: string[] = [];
    const deltas: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe(`Echo: ${text}`);
    expect(deltas.join('')).toBe(`Echo: ${text}`);
    expect(types.slice(0, 4)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.at(-1)).toBe('response.completed');
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    expect((await client.responses.retrieve(final.id)).output_text).toBe(`Echo: ${text}`);
  });

  it('parses structured output with a zod schema (text.format json_schema reaches the upstream)', async () => {
    const City = z.object({ name: z.string(), population: z.number(), capital: z.boolean() });
    const response = await client.responses.parse({
      model,
      input: unique('a city'),
      text: { format: zodTextFormat(City, 'city') },
    });
    expect(response.output_parsed).toEqual({ name: expect.any(String), population: 42, capital: true });
  });

  it('runs a function-tool round trip with previous_response_id: the upstream sees the call and its output paired', async () => {
    const text = unique('weather in Paris');
    const first = await client.responses.create({ model, input: text, tools: [weatherTool] });
    const call = first.output.find((item) => item.type === 'function_call');
    if (call?.type !== 'function_call')
      throw new Error(`expected a function call, got ${JSON.stringify(first.output)}`);
    expect(call.name).toBe('get_weather');
    expect(JSON.parse(call.arguments)).toEqual({ input: text });

    const second = await client.responses.create({
      model,
      previous_response_id: first.id,
      tools: [weatherTool],
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny, 21 C' }],
    });
    expect(second.output_text).toBe('Tool said: sunny, 21 C');
    expect(second.previous_response_id).toBe(first.id);
    const view = upstreamView(letter);
    // The first turn's question, the call, and its result: three turns at the upstream.
    expect(view.texts).toHaveLength(3);
    expect(view.texts[0]).toContain(text);
    expect(view.texts[2]).toContain('sunny, 21 C');
  });

  it('continues a conversation by previous_response_id: the upstream sees the earlier turns', async () => {
    const one = unique('first question');
    const first = await client.responses.create({ model, input: one, instructions: 'Old instructions.' });
    const two = unique('second question');
    const second = await client.responses.create({ model, input: two, previous_response_id: first.id });
    expect(second.output_text).toBe(`Echo: ${two}`);
    const view = upstreamView(letter);
    // Instructions are not carried over, as at OpenAI.
    expect(view.system).toBeUndefined();
    expect(view.texts).toHaveLength(3);
    expect(view.texts[0]).toContain(one);
    expect(view.texts[1]).toContain(`Echo: ${one}`);
    expect(view.texts[2]).toContain(two);
  });

  it('reads an image input', async () => {
    const response = await client.responses.create({
      model,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
          ],
        },
      ],
    });
    expect(response.output_text).toBe('Echo: what is this? (+1 images)');
    expect(JSON.stringify(lastBody(letter))).toContain(PNG);
  });

  it('reads a PDF input_file, as the document part of each format', async () => {
    const response = await client.responses.create({
      model,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'summarize this' },
            { type: 'input_file', filename: 'tiny.pdf', file_data: `data:application/pdf;base64,${PDF}` },
          ],
        },
      ],
    });
    expect(response.output_text).toBe('Echo: summarize this (+1 files)');
    expect(JSON.stringify(lastBody(letter))).toContain(PDF);
    const items = await client.responses.inputItems.list(response.id);
    expect(items.data).toMatchObject([
      {
        type: 'message',
        content: [
          { type: 'input_text' },
          { type: 'input_file', filename: 'tiny.pdf', file_data: `data:application/pdf;base64,${PDF}` },
        ],
      },
    ]);
  });

  it('reads the same PDF through the chat door, as a file part', async () => {
    const completion = await client.chat.completions.create({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'summarize that' },
            { type: 'file', file: { filename: 'tiny.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0]?.message.content).toBe('Echo: summarize that (+1 files)');
    expect(JSON.stringify(lastBody(letter))).toContain(PDF);
  });

  it('says incomplete with max_output_tokens when the budget cut the reply, streamed or not', async () => {
    const text = unique('one two three four five six seven');
    const cut = await client.responses.create({ model, input: text, max_output_tokens: 3 });
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(cut.output_text.split(' ')).toHaveLength(3);
    const stream = client.responses.stream({ model, input: text, max_output_tokens: 3 });
    const types: string[] = [];
    stream.on('event', (event) => types.push(event.type));
    await stream.done().catch(() => {});
    expect(types.at(-1)).toBe('response.incomplete');
  });
});

describe('the pipeline around the door', () => {
  it('answers a repeated request from the exact cache, in the Responses shape, streamed or not, with a new stored response', async () => {
    const text = unique('cache me');
    const first = await client.responses.create({ model: MODELS.c, input: text });
    const calls = upstreams.c.requests.length;
    const { data: again, response: raw } = await client.responses
      .create({ model: MODELS.c, input: text })
      .withResponse();
    expect(raw.headers.get('x-cache')).toBe('HIT');
    expect(again.output_text).toBe(first.output_text);
    expect(again.id).not.toBe(first.id);
    expect((await client.responses.retrieve(again.id)).output_text).toBe(first.output_text);
    const streamed = await client.responses.stream({ model: MODELS.c, input: text }).finalResponse();
    expect(streamed.output_text).toBe(first.output_text);
    expect(upstreams.c.requests.length).toBe(calls);
  });
});

describe('DLP', () => {
  it('redacts personal data before the upstream, and stores the input as the upstream saw it', async () => {
    const response = await client.responses.create({
      model: MODELS.b,
      input: 'please email jane.doe@example.com the notes',
    });
    expect(JSON.stringify(lastBody('b'))).not.toContain('jane.doe@example.com');
    const items = await client.responses.inputItems.list(response.id);
    expect(JSON.stringify(items.data)).not.toContain('jane.doe@example.com');
    expect(JSON.stringify(items.data)).toContain('please email');
  });
});

describe('storage and errors', () => {
  it('keeps nothing with store: false', async () => {
    const response = await client.responses.create({ model: MODELS.a, input: unique('forget me'), store: false });
    expect(response).toMatchObject({ store: false });
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('deletes a response; another key cannot see, delete or continue it', async () => {
    const response = await client.responses.create({ model: MODELS.b, input: unique('mine') });
    await expect(other.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(other.responses.delete(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      other.responses.create({ model: MODELS.b, input: 'x', previous_response_id: response.id }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await client.responses.delete(response.id);
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.inputItems.list(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('pages input items', async () => {
    const input = ['one', 'two', 'three'].map((text) => ({ role: 'user' as const, content: text }));
    const response = await client.responses.create({ model: MODELS.c, input });
    const page = await client.responses.inputItems.list(response.id, { limit: 2, order: 'asc' });
    expect(page.data.map((item) => (item.type === 'message' ? item.content[0] : undefined))).toMatchObject([
      { text: 'one' },
      { text: 'two' },
    ]);
    expect(page.has_more).toBe(true);
    const all = [];
    for await (const item of client.responses.inputItems.list(response.id, { limit: 1 })) all.push(item);
    expect(all.map((item) => (item.type === 'message' ? item.content[0] : undefined))).toMatchObject([
      { text: 'three' },
      { text: 'two' },
      { text: 'one' },
    ]);
  });

  it.each([
    [{ model: MODELS.a, input: 'x', tools: [{ type: 'web_search' }] }, /built-in tool 'web_search'/],
    [{ model: MODELS.a, input: 'x', surprise: true }, /unrecognized field/],
    [
      { model: MODELS.a, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] },
      /input_file needs 'file_data'/,
    ],
    [
      {
        model: MODELS.a,
        input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'data:text/plain;base64,aGk=' }] }],
      },
      /data:application\/pdf/,
    ],
    [{ model: MODELS.a, input: 42 }, /input/],
    [{ model: 'no-such-model', input: 'x' }, /not supported by this gateway/],
  ])('answers %j with a clear 400, the upstream untouched', async (body, message) => {
    const before = upstreams.a.requests.length;
    const err = await client.responses.create(body as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(message);
    expect(upstreams.a.requests.length).toBe(before);
  });

  it('answers an unknown response id with 404, and a malformed JSON body with 400', async () => {
    await expect(client.responses.retrieve('resp_unknown')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      client.responses.create({ model: MODELS.a, input: 'x', previous_response_id: 'resp_unknown' }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const res = await fetch(`${gateway.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"model": "a-4o", "input": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } });
  });
});

describe('reasoning', () => {
  const thinkingOf = (letter: Letter) =>
    (lastBody(letter).messages as Array<{ role: string; content: unknown }>).map((m) =>
      Array.isArray(m.content) ? m.content.filter((b: { type: string }) => b.type === 'thinking') : [],
    );

  it('asks an Anthropic-format upstream for thinking when a summary is asked, and answers its thinking as a reasoning item that carries the signed block', async () => {
    const response = await client.responses.create({
      model: MODELS.c,
      input: 'think first',
      reasoning: { effort: 'low', summary: 'auto' },
    });
    const sent = lastBody('c');
    // The budget follows the effort; the answer's room comes on top of it.
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(sent.max_tokens).toBe(1024 + 4096);
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'Thinking about: think first' }]);
    expect(reasoning.encrypted_content).toMatch(/^gwr1\./);
    expect(response.output_text).toBe('Echo: think first');
  });

  it('streams the thinking as reasoning summary deltas, then the answer', async () => {
    const stream = client.responses.stream({
      model: MODELS.c,
      input: 'stream my thoughts',
      reasoning: { summary: 'detailed' },
    });
    let summary = '';
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
    }
    const final = await stream.finalResponse();
    expect(summary).toBe('Thinking about: stream my thoughts');
    expect(types.indexOf('response.reasoning_summary_text.done')).toBeLessThan(
      types.indexOf('response.output_text.delta'),
    );
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect((final.output[0] as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toMatch(/^gwr1\./);
    expect(final.output_text).toBe('Echo: stream my thoughts');
  });

  it('gives the signed thinking block back to the Anthropic-format upstream when the client replays the reasoning item, and through previous_response_id', async () => {
    const first = await client.responses.create({ model: MODELS.c, input: 'turn one', reasoning: { summary: 'auto' } });
    const signed = {
      type: 'thinking',
      thinking: 'Thinking about: turn one',
      signature: `sig_${Buffer.from('Thinking about: turn one').toString('base64')}`,
    };
    // Replayed by the client (store: false clients such as Codex do so).
    await client.responses.create({
      model: MODELS.c,
      input: [...(first.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'turn two' }],
      reasoning: { summary: 'auto' },
    });
    expect(thinkingOf('c')[1]).toEqual([signed]);
    // Kept with the stored turn.
    await client.responses.create({
      model: MODELS.c,
      previous_response_id: first.id,
      input: 'turn two',
      reasoning: { summary: 'auto' },
    });
    expect(thinkingOf('c')[1]).toEqual([signed]);
  });

  it("answers an OpenAI-compatible upstream's reasoning_content as a reasoning item, never given back to another upstream", async () => {
    upstreams.a.setBehavior({ reasoning: true });
    try {
      const response = await client.responses.create({ model: MODELS.a, input: 'reason openly' });
      const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
      expect(reasoning).toMatchObject({
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Thinking about: reason openly' }],
      });
      // Unsigned: nothing for an upstream to check, so nothing to carry back.
      expect(reasoning.encrypted_content ?? undefined).toBeUndefined();
      const stream = client.responses.stream({ model: MODELS.a, input: 'reason in a stream' });
      let summary = '';
      for await (const event of stream)
        if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
      expect(summary).toBe('Thinking about: reason in a stream');
      expect((await stream.finalResponse()).output.map((item) => item.type)).toEqual(['reasoning', 'message']);
      await client.responses.create({
        model: MODELS.c,
        input: [...(response.output as OpenAI.Responses.ResponseInputItem[]), { role: 'user', content: 'next' }],
      });
      expect(thinkingOf('c').flat()).toEqual([]);
    } finally {
      upstreams.a.setBehavior({ reasoning: undefined });
    }
  });

  it('asks a Gemini-format upstream for its thought summaries, answered as unsigned reasoning items, streamed too', async () => {
    const response = await client.responses.create({
      model: MODELS.b,
      input: 'gemini thinks',
      reasoning: { effort: 'high', summary: 'auto' },
    });
    expect((lastBody('b').generationConfig as Record<string, unknown>).thinkingConfig).toEqual({
      thinkingBudget: 16_384,
      includeThoughts: true,
    });
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    const reasoning = response.output[0] as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'Thinking about: gemini thinks' }]);
    expect(reasoning.encrypted_content ?? undefined).toBeUndefined();
    expect(response.output_text).toBe('Echo: gemini thinks');
    const stream = client.responses.stream({
      model: MODELS.b,
      input: 'gemini streams thoughts',
      reasoning: { summary: 'auto' },
    });
    let summary = '';
    for await (const event of stream)
      if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
    expect(summary).toBe('Thinking about: gemini streams thoughts');
    expect((await stream.finalResponse()).output_text).toBe('Echo: gemini streams thoughts');
    // No summary asked: no thinking asked.
    await client.responses.create({ model: MODELS.b, input: 'no thoughts wanted', reasoning: { effort: 'high' } });
    expect(lastBody('b').generationConfig ?? {}).not.toHaveProperty('thinkingConfig');
  });

  it("drops reasoning items of another API (OpenAI's encrypted reasoning) for a translated upstream", async () => {
    await client.responses.create({
      model: MODELS.c,
      input: [
        { role: 'user', content: 'earlier' },
        {
          type: 'reasoning',
          id: 'rs_openai',
          summary: [{ type: 'summary_text', text: 'their thoughts' }],
          encrypted_content: 'gAAAAopaque',
        },
        { role: 'assistant', content: 'an answer' },
        { role: 'user', content: 'now' },
      ],
    });
    expect(JSON.stringify(lastBody('c'))).not.toContain('their thoughts');
    expect(thinkingOf('c').flat()).toEqual([]);
  });
});
