import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { describe, expect, it } from 'vitest';
import { completionChunks } from '../../src/chat/completion-accumulator.ts';
import type { ChatCompletion, ChatRequest, Usage } from '../../src/chat/types.ts';
import { messagesReplyCodec } from '../../src/doors/messages/messages-door.ts';
import {
  ProviderError,
  ProviderTimeoutError,
  errorFromCode,
  ERROR_TABLE,
  type ErrorCode,
} from '../../src/errors/catalog.ts';
import { messagesError } from '../../src/doors/messages/errors.ts';
import { ChunkEmitter } from '../../src/execution/chunk-emitter.ts';
import { anthropicAdapter } from '../../src/providers/anthropic/adapter.ts';
import { geminiAdapter } from '../../src/providers/gemini/adapter.ts';
import { openAiAdapter } from '../../src/providers/openai/adapter.ts';
import type { ProviderAdapter, SseEvent } from '../../src/providers/types.ts';

/**
 * Chunk sequences as workers make them: upstream SSE events of each wire
 * format through the real adapter's decoder and the worker's chunk emitter.
 */
function chunksFrom(adapter: ProviderAdapter, events: SseEvent[], request?: ChatRequest): string[] {
  const out: string[] = [];
  const emitter = new ChunkEmitter('chatcmpl-abc123', 1_700_000_000, 'the-model', true, (json) => out.push(json));
  const decoder = adapter.createStreamDecoder(request);
  let usage;
  for (const event of events) {
    for (const e of decoder.push(event)) {
      if (e.kind === 'delta') emitter.delta(e.choice, e);
      else if (e.kind === 'usage') usage = e.usage;
    }
  }
  emitter.finishAll(1);
  if (usage) emitter.usage(usage);
  return out;
}

const named = (event: string, data: Record<string, unknown>): SseEvent => ({
  event,
  data: JSON.stringify({ type: event, ...data }),
});
const data = (value: unknown): SseEvent => ({ data: JSON.stringify(value) });

/** Splits SSE text into its events, checking each frame's `event:` names its `type`. */
function eventsOf(sse: string): Array<Record<string, unknown>> {
  return sse
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const [eventLine, dataLine, ...rest] = frame.split('\n');
      expect(rest).toEqual([]);
      const parsed = JSON.parse((dataLine ?? '').replace(/^data: /, '')) as Record<string, unknown>;
      expect(eventLine).toBe(`event: ${String(parsed.type)}`);
      return parsed;
    });
}

function streamed(chunks: string[]): { sse: string; events: Array<Record<string, unknown>> } {
  const codec = messagesReplyCodec();
  const sse = chunks.map((c) => codec.chunk(c)).join('') + codec.end();
  return { sse, events: eventsOf(sse) };
}

/** The official SDK's own accumulation of the events: it throws on a grammar it cannot follow. */
async function finalMessage(events: Array<Record<string, unknown>>) {
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(events.map((e) => JSON.stringify(e)).join('\n') + '\n'));
      controller.close();
    },
  });
  return MessageStream.fromReadableStream(body).finalMessage();
}

const completion = (
  message: ChatCompletion['choices'][number]['message'],
  finish: ChatCompletion['choices'][number]['finish_reason'],
): ChatCompletion => ({
  id: 'chatcmpl-xyz',
  object: 'chat.completion',
  created: 1,
  model: 'c-sonnet-4-20250514',
  choices: [{ index: 0, message, finish_reason: finish, logprobs: null }],
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
});

describe('Messages door: non-streamed replies', () => {
  it('encodes text with end_turn, usage and a msg_ id', () => {
    const body = JSON.parse(
      messagesReplyCodec().completion(JSON.stringify(completion({ role: 'assistant', content: 'Hello.' }, 'stop'))),
    );
    expect(body).toEqual({
      id: 'msg_xyz',
      type: 'message',
      role: 'assistant',
      model: 'c-sonnet-4-20250514',
      content: [{ type: 'text', text: 'Hello.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it('puts thinking first, then text, then tool_use blocks with parsed input; stop_reason tool_use', () => {
    const message = {
      role: 'assistant' as const,
      content: 'Checking.',
      thinking: [{ type: 'thinking' as const, thinking: 'need weather', signature: 'sig' }],
      tool_calls: [
        { id: 'toolu_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'toolu_2', type: 'function' as const, function: { name: 'noop', arguments: '' } },
      ],
    };
    const body = JSON.parse(messagesReplyCodec().completion(JSON.stringify(completion(message, 'tool_calls'))));
    expect(body.content).toEqual([
      { type: 'thinking', thinking: 'need weather', signature: 'sig' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_2', name: 'noop', input: {} },
    ]);
    expect(body.stop_reason).toBe('tool_use');
  });

  it('maps length to max_tokens and content_filter to refusal; cached tokens to cache_read_input_tokens', () => {
    const codec = messagesReplyCodec();
    expect(
      JSON.parse(codec.completion(JSON.stringify(completion({ role: 'assistant', content: 'Hel' }, 'length'))))
        .stop_reason,
    ).toBe('max_tokens');
    expect(
      JSON.parse(
        codec.completion(
          JSON.stringify(completion({ role: 'assistant', content: null, refusal: 'No.' }, 'content_filter')),
        ),
      ),
    ).toMatchObject({
      stop_reason: 'refusal',
      content: [{ type: 'text', text: 'No.' }],
    });
    const cached = {
      ...completion({ role: 'assistant', content: 'x' }, 'stop'),
      usage: {
        prompt_tokens: 100,
        completion_tokens: 1,
        total_tokens: 101,
        prompt_tokens_details: { cached_tokens: 80 },
      },
    };
    expect(JSON.parse(codec.completion(JSON.stringify(cached))).usage).toEqual({
      input_tokens: 20,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 80,
    });
    // Writes to the upstream's prompt cache are Anthropic's cache_creation, split by retention.
    const written = {
      ...cached,
      usage: {
        ...cached.usage,
        prompt_tokens: 130,
        total_tokens: 131,
        prompt_tokens_details: { cached_tokens: 80, cache_write_tokens: 30, cache_write_1h_tokens: 10 },
      },
    };
    expect(JSON.parse(messagesReplyCodec().completion(JSON.stringify(written))).usage).toEqual({
      input_tokens: 20,
      output_tokens: 1,
      cache_creation_input_tokens: 30,
      cache_read_input_tokens: 80,
      cache_creation: { ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 10 },
    });
  });
});

describe('Messages door: streamed replies', () => {
  it('streams an OpenAI-format text reply in the event grammar, usage in message_delta', async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      data({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
    const chunks = chunksFrom(openAiAdapter, [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hello' }),
      chunk({ content: ', world' }),
      chunk({}, 'stop'),
      data({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
      }),
      { data: '[DONE]' },
    ]);
    const { events } = streamed(chunks);
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]).toMatchObject({
      message: {
        id: 'msg_abc123',
        type: 'message',
        role: 'assistant',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      },
    });
    expect(events[2]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(events[3]).toEqual({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } });
    expect(events[6]).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 9, output_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    const message = await finalMessage(events);
    expect(message.content).toEqual([{ type: 'text', text: 'Hello, world' }]);
    expect(message.usage).toMatchObject({ input_tokens: 9, output_tokens: 3 });
    expect(message.stop_reason).toBe('end_turn');
  });

  it('streams OpenAI parallel tool calls as tool_use blocks with input_json_delta', async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      data({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
    const chunks = chunksFrom(openAiAdapter, [
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      chunk({
        tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
      }),
      chunk({}, 'tool_calls'),
      data({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
      }),
      { data: '[DONE]' },
    ]);
    const { events } = streamed(chunks);
    const starts = events.filter((e) => e.type === 'content_block_start');
    expect(starts).toEqual([
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} },
      },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
      },
    ]);
    expect(events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta)).toEqual([
      { type: 'input_json_delta', partial_json: '{"city":' },
      { type: 'input_json_delta', partial_json: '"Oslo"}' },
      { type: 'input_json_delta', partial_json: '{}' },
    ]);
    const message = await finalMessage(events);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Oslo' } },
      { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
    ]);
  });

  it('streams an Anthropic upstream thinking block (thinking_delta, signature_delta) ahead of the text, and max_tokens', async () => {
    const chunks = chunksFrom(anthropicAdapter, [
      named('message_start', { message: { id: 'msg_up', usage: { input_tokens: 30, output_tokens: 1 } } }),
      named('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      named('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me ' } }),
      named('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'think.' } }),
      named('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM' } }),
      named('content_block_stop', { index: 0 }),
      named('content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: 'ENCRYPTED' } }),
      named('content_block_stop', { index: 1 }),
      named('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }),
      named('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'The answer' } }),
      named('content_block_stop', { index: 2 }),
      named('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 50 } }),
      named('message_stop', {}),
    ]);
    const { events } = streamed(chunks);
    expect(events.filter((e) => e.type === 'content_block_delta').map((e) => [e.index, e.delta])).toEqual([
      [0, { type: 'thinking_delta', thinking: 'Let me ' }],
      [0, { type: 'thinking_delta', thinking: 'think.' }],
      [0, { type: 'signature_delta', signature: 'EqQBCgIYAhIM' }],
      [2, { type: 'text_delta', text: 'The answer' }],
    ]);
    const message = await finalMessage(events);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCgIYAhIM' },
      { type: 'redacted_thinking', data: 'ENCRYPTED' },
      { type: 'text', text: 'The answer' },
    ]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 50 });
  });

  it("passes an Anthropic upstream's server-tool blocks and citations_delta through in order, only when the request asks", async () => {
    const search = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} };
    const result = {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: [{ type: 'web_search_result', url: 'https://e.x/a', title: 'A', encrypted_content: 'enc' }],
    };
    const citation = { type: 'web_search_result_location', url: 'https://e.x/a', cited_text: 'Ann' };
    const upstream = [
      named('message_start', { message: { id: 'msg_up', usage: { input_tokens: 9, output_tokens: 1 } } }),
      named('content_block_start', { index: 0, content_block: search }),
      named('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":' } }),
      named('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '"winner"}' } }),
      named('content_block_stop', { index: 0 }),
      named('content_block_start', { index: 1, content_block: result }),
      named('content_block_stop', { index: 1 }),
      named('content_block_start', { index: 2, content_block: { type: 'text', text: '', citations: [] } }),
      named('content_block_delta', { index: 2, delta: { type: 'citations_delta', citation } }),
      named('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'Ann won.' } }),
      named('content_block_stop', { index: 2 }),
      named('content_block_start', { index: 3, content_block: { type: 'a_future_block', x: 1 } }),
      named('content_block_delta', { index: 3, delta: { type: 'a_future_delta', y: 2 } }),
      named('content_block_stop', { index: 3 }),
      named('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 20 } }),
      named('message_stop', {}),
    ];
    const { events } = streamed(
      chunksFrom(anthropicAdapter, upstream, { anthropic_reply_blocks: true } as ChatRequest),
    );
    expect(
      events
        .filter((e) => String(e.type).startsWith('content_block'))
        .map((e) => [e.type, e.index, e.content_block ?? e.delta]),
    ).toEqual([
      ['content_block_start', 0, search],
      ['content_block_delta', 0, { type: 'input_json_delta', partial_json: '{"query":' }],
      ['content_block_delta', 0, { type: 'input_json_delta', partial_json: '"winner"}' }],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, result],
      ['content_block_stop', 1, undefined],
      ['content_block_start', 2, { type: 'text', text: '' }],
      ['content_block_delta', 2, { type: 'citations_delta', citation }],
      ['content_block_delta', 2, { type: 'text_delta', text: 'Ann won.' }],
      ['content_block_stop', 2, undefined],
      ['content_block_start', 3, { type: 'a_future_block', x: 1 }],
      ['content_block_delta', 3, { type: 'a_future_delta', y: 2 }],
      ['content_block_stop', 3, undefined],
    ]);
    // The SDK cannot accumulate a delta type it does not know; without it, its final message is the upstream's.
    const known = events.filter((e) => (e.delta as { type?: string } | undefined)?.type !== 'a_future_delta');
    expect((await finalMessage(known)).content).toEqual([
      { ...search, input: { query: 'winner' } },
      result,
      { type: 'text', text: 'Ann won.', citations: [citation] },
      { type: 'a_future_block', x: 1 },
    ]);
    // Another door's request: the text alone, as before.
    const plain = streamed(chunksFrom(anthropicAdapter, upstream));
    expect((await finalMessage(plain.events)).content).toEqual([{ type: 'text', text: 'Ann won.' }]);
  });

  it("keeps an Anthropic upstream's blocks in a non-streamed reply only when the request asks and the text is unchanged", () => {
    const body = {
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
        { type: 'text', text: 'Ann won.', citations: [{ type: 'char_location', cited_text: 'Ann' }] },
        { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 3, output_tokens: 4 },
    };
    const asked = anthropicAdapter.parseResponse(body, { anthropic_reply_blocks: true } as ChatRequest);
    const reply = (parsed: typeof asked) =>
      messagesReplyCodec().completion(
        JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', ...parsed }),
      );
    expect(JSON.parse(reply(asked)).content).toEqual(body.content);
    expect(anthropicAdapter.parseResponse(body).choices[0]!.message.anthropic_content).toBeUndefined();
    // Plain text and tool calls say all there is: nothing is carried.
    const plainBody = { ...body, content: [{ type: 'text', text: 'hi', citations: null }] };
    expect(
      anthropicAdapter.parseResponse(plainBody, { anthropic_reply_blocks: true } as ChatRequest).choices[0]!.message
        .anthropic_content,
    ).toBeUndefined();
    // A text changed on the way (a DLP redaction) is not undone by the upstream's blocks.
    asked.choices[0]!.message.content = 'Ann <PERSON_1>.';
    expect(JSON.parse(reply(asked)).content).toEqual([
      { type: 'text', text: 'Ann <PERSON_1>.' },
      { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
    ]);
  });

  it('names the stop sequence an Anthropic upstream stopped at, streamed and not', async () => {
    const events = [
      named('message_start', { message: { id: 'msg_up', usage: { input_tokens: 4, output_tokens: 1 } } }),
      named('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      named('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'one two ' } }),
      named('content_block_stop', { index: 0 }),
      named('message_delta', {
        delta: { stop_reason: 'stop_sequence', stop_sequence: 'HALT' },
        usage: { output_tokens: 2 },
      }),
      named('message_stop', {}),
    ];
    const message = await finalMessage(streamed(chunksFrom(anthropicAdapter, events)).events);
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'HALT' });
    const parsed = anthropicAdapter.parseResponse({
      content: [{ type: 'text', text: 'one two ' }],
      stop_reason: 'stop_sequence',
      stop_sequence: 'HALT',
      usage: { input_tokens: 4, output_tokens: 2 },
    });
    const whole = {
      id: 'chatcmpl-1',
      object: 'chat.completion' as const,
      created: 1,
      model: 'm',
      choices: parsed.choices.map((c) => ({ ...c, logprobs: null })),
      usage: parsed.usage,
    };
    expect(JSON.parse(messagesReplyCodec().completion(JSON.stringify(whole)))).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'HALT',
    });
    // A cache hit replayed as a stream keeps it too.
    expect(
      await finalMessage(streamed(completionChunks(whole, true).map((c) => JSON.stringify(c))).events),
    ).toMatchObject({ stop_sequence: 'HALT' });
  });

  it('streams a Gemini function call and text', async () => {
    const chunks = chunksFrom(geminiAdapter, [
      data({ candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Sure. ' }] } }] }),
      data({
        candidates: [
          {
            index: 0,
            content: { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'x' } } }] },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 4, totalTokenCount: 11 },
      }),
    ]);
    const message = await finalMessage(streamed(chunks).events);
    expect(message.content).toHaveLength(2);
    expect(message.content[0]).toEqual({ type: 'text', text: 'Sure. ' });
    expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'lookup', input: { q: 'x' } });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 7, output_tokens: 4 });
  });

  it('replays a stored completion (a cache hit streamed) as the same message the non-streamed reply is', async () => {
    const stored = completion(
      {
        role: 'assistant',
        content: 'Done.',
        thinking: [{ type: 'thinking', thinking: 'ok', signature: 's1' }],
        tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      'tool_calls',
    );
    const streamedMessage = await finalMessage(
      streamed(completionChunks(stored, true).map((c) => JSON.stringify(c))).events,
    );
    const whole = JSON.parse(messagesReplyCodec().completion(JSON.stringify(stored)));
    // The SDK adds its own fields (parsed_output...); everything the door sent must match.
    expect(streamedMessage).toMatchObject(whole);
    expect(streamedMessage.content).toEqual(whole.content);
  });

  it('ends a failed stream with an error event and no message_stop', () => {
    const codec = messagesReplyCodec();
    const chunk = JSON.stringify({
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: { content: 'partial' }, finish_reason: null }],
    });
    const sse = codec.chunk(chunk) + codec.fail(new ProviderError('provider_c stream was cut.'), 'req-42');
    const events = eventsOf(sse);
    expect(events.at(-1)).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'provider_c stream was cut.' },
      request_id: 'req-42',
    });
    expect(events.some((e) => e.type === 'message_stop' || e.type === 'message_delta')).toBe(false);
    expect(codec.end()).toBe('');
  });
});

describe('Messages door: text chunks read without a parse', () => {
  /** Chunks as the worker writes them, and the same chunks with their keys in another order (which the fast path does not take). */
  function both(texts: string[]): { emitted: string[]; reordered: string[] } {
    const emitted: string[] = [];
    const emitter = new ChunkEmitter('chatcmpl-x', 1_700_000_000, 'the-model', true, (json) => emitted.push(json));
    for (const text of texts) emitter.delta(0, { content: text });
    emitter.delta(0, { finish_reason: 'stop' });
    emitter.usage({ prompt_tokens: 3, completion_tokens: texts.length, total_tokens: 3 + texts.length });
    const reordered = emitted.map((json) => {
      const { choices, ...rest } = JSON.parse(json);
      return JSON.stringify({ choices, ...rest });
    });
    return { emitted, reordered };
  }

  function encode(chunks: string[]): string {
    const codec = messagesReplyCodec();
    return chunks.map((c) => codec.chunk(c)).join('') + codec.end();
  }

  it('writes the same frames as a full parse, whatever the text holds', () => {
    const texts = [
      'He said "hi"',
      ' back\\slash\\',
      ' "},"finish_reason":null,"logprobs":null}],"usage":null}',
      ' \n\t\u0000 é 🙂 \u2028',
      '',
      ' end',
    ];
    const { emitted, reordered } = both(texts);
    const fast = encode(emitted);
    expect(fast).toBe(encode(reordered));
    const deltas = fast
      .split('\n\n')
      .filter((frame) => frame.startsWith('event: content_block_delta'))
      .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)).delta.text);
    expect(deltas).toEqual(texts.filter((t) => t !== ''));
  });

  it('writes the same frames for the first, finish and usage chunks read without a parse', () => {
    const replies: Array<{
      deltas: Array<Parameters<ChunkEmitter['delta']>[1]>;
      usage?: Usage;
      id?: string;
      model?: string;
    }> = [
      {
        deltas: [{ content: '' }, { content: 'Hi' }, { finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      },
      { deltas: [{ content: 'First "x"' }, { content: ' then' }, { finish_reason: 'length' }] },
      {
        deltas: [{ content: 'a' }, { content: 'b', finish_reason: 'content_filter' }],
        usage: {
          prompt_tokens: 5,
          completion_tokens: 2,
          total_tokens: 7,
          prompt_tokens_details: { cached_tokens: 2, cache_write_tokens: 1 },
        },
      },
      { deltas: [{ finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } },
      { deltas: [{ content: 'x' }, { finish_reason: 'stop' }], id: 'chatcmpl-"odd\\id', model: 'model "é"' },
    ];
    for (const { deltas, usage, id = 'chatcmpl-x', model = 'the-model' } of replies) {
      for (const includeUsage of [true, false]) {
        const emitted: string[] = [];
        const emitter = new ChunkEmitter(id, 1_700_000_000, model, includeUsage, (json) => emitted.push(json));
        for (const delta of deltas) emitter.delta(0, delta);
        if (usage) emitter.usage(usage);
        const reordered = emitted.map((json) => {
          const { choices, ...rest } = JSON.parse(json);
          return JSON.stringify({ choices, ...rest });
        });
        const frames = encode(emitted);
        expect(frames).toBe(encode(reordered));
        expect(frames).toContain('event: message_stop');
      }
    }
  });

  it('parses a chunk that carries more than text for the open block', () => {
    const out: string[] = [];
    const emitter = new ChunkEmitter('chatcmpl-x', 1_700_000_000, 'the-model', true, (json) => out.push(json));
    emitter.delta(0, { content: 'a' });
    emitter.delta(0, { content: 'b', refusal: 'no' });
    emitter.delta(0, { content: 'c', finish_reason: 'length' });
    const frames = encode(out);
    expect(frames).toContain('"text":"bno"');
    expect(frames).toContain('"stop_reason":"max_tokens"');
  });
});

describe('Messages door: errors', () => {
  it('gives every catalog code an Anthropic type and a status', () => {
    for (const code of Object.keys(ERROR_TABLE) as ErrorCode[]) {
      const { status, body } = messagesError(errorFromCode(code, 'why'), 'r');
      expect(status).toBeGreaterThanOrEqual(400);
      expect(body).toMatchObject({ type: 'error', error: { message: 'why' }, request_id: 'r' });
    }
    expect(messagesError(errorFromCode('model_not_found', 'm'), 'r').status).toBe(404);
    expect(messagesError(errorFromCode('model_not_found', 'm'), 'r').body.error.type).toBe('not_found_error');
    expect(messagesError(new ProviderTimeoutError('slow'), 'r')).toMatchObject({
      status: 504,
      body: { error: { type: 'timeout_error' } },
    });
    expect(messagesError(errorFromCode('service_unavailable', 'x'), 'r').body.error.type).toBe('overloaded_error');
    expect(messagesError(errorFromCode('invalid_api_key', 'x'), 'r')).toMatchObject({
      status: 401,
      body: { error: { type: 'authentication_error' } },
    });
    expect(messagesError(errorFromCode('rate_limit_exceeded', 'x'), 'r')).toMatchObject({
      status: 429,
      body: { error: { type: 'rate_limit_error' } },
    });
  });
});
