import { describe, expect, it } from 'vitest';
import { mapRequestTexts, requestTexts } from '../../src/chat/message-texts.ts';
import { parseChatRequest } from '../../src/chat/request-schema.ts';
import { sumUsage, usageOf } from '../../src/chat/token-usage.ts';
import { messageText } from '../../src/chat/types.ts';
import { buildAnthropicBody } from '../../src/providers/anthropic/adapter.ts';
import { AnthropicStreamDecoder } from '../../src/providers/anthropic/stream-decoder.ts';
import { buildOpenAiBody } from '../../src/providers/openai/adapter.ts';
import { OpenAiStreamDecoder } from '../../src/providers/openai/stream-decoder.ts';
import { GeminiStreamDecoder } from '../../src/providers/gemini/stream-decoder.ts';
import { withUsageMark } from '../../src/chat/usage-mark.ts';
import { requestLogFields } from '../../src/observability/request-log.ts';
import type { RequestSummary } from '../../src/observability/request-summary.ts';
import { entryFields, parseEntry } from '../../src/streams/protocol.ts';
import { billLines, costNanoUsd, promptCacheSavingNanoUsd, priceTableSchema } from '../../src/usage/price-table.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Token types from the wire to the bill, piece by piece: the request
 * schema's cache_control, the adapters' placement, the decoders' counts, the
 * stream protocol's fields and the price table.
 */

describe('price table by token type', () => {
  const prices = priceTableSchema.parse({
    old: { input_per_million: 3, output_per_million: 15 },
    full: {
      input_per_million: 3,
      output_per_million: 15,
      cached_input_per_million: 0.3,
      cache_write_per_million: 3.75,
      cache_write_1h_per_million: 6,
      reasoning_per_million: 20,
    },
  });
  const counts = {
    prompt: 1_000_000,
    completion: 100_000,
    cachedRead: 600_000,
    cacheWrite: 300_000,
    cacheWrite1h: 100_000,
    reasoning: 40_000,
  };

  it('bills an old two-price entry exactly as before, whatever the details', () => {
    expect(costNanoUsd(prices, 'old', counts)).toBe(
      costNanoUsd(prices, 'old', { prompt: 1_000_000, completion: 100_000 }),
    );
    expect(costNanoUsd(prices, 'old', counts)).toBe(4.5e9);
  });

  it('prices each token type once, at its own price or the one it falls back to', () => {
    expect(billLines(prices.full!, counts).map((l) => [l.type, l.tokens, l.usdPerMillion])).toEqual([
      ['input', 100_000, 3],
      ['cached_input', 600_000, 0.3],
      ['cache_write_5m', 200_000, 3.75],
      ['cache_write_1h', 100_000, 6],
      ['output', 60_000, 15],
      ['reasoning', 40_000, 20],
    ]);
    // 0.3 + 0.18 + 0.75 + 0.6 + 0.9 + 0.8 USD
    expect(costNanoUsd(prices, 'full', counts)).toBe(3.53e9);
    // Without the prompt cache: 3 USD of input, 0.9 + 0.8 of output.
    expect(promptCacheSavingNanoUsd(prices, 'full', counts)).toBe(4.7e9 - 3.53e9);
  });

  it('clamps details larger than their totals instead of billing negative lines', () => {
    const lines = billLines(prices.full!, {
      prompt: 10,
      completion: 5,
      cachedRead: 50,
      cacheWrite: 50,
      cacheWrite1h: 50,
      reasoning: 50,
    });
    expect(lines.every((l) => l.tokens >= 0)).toBe(true);
    expect(lines.reduce((sum, l) => sum + l.tokens, 0)).toBe(15);
  });

  it('rejects unknown and negative prices', () => {
    expect(
      priceTableSchema.safeParse({ m: { input_per_million: 1, output_per_million: 1, cached_per_million: 1 } }).success,
    ).toBe(false);
    expect(
      priceTableSchema.safeParse({ m: { input_per_million: 1, output_per_million: 1, cached_input_per_million: -1 } })
        .success,
    ).toBe(false);
  });
});

describe('usage objects', () => {
  it('keep a details object only when reported, and sum a fan-out keeping reported zeros', () => {
    expect(usageOf({ prompt: 5, completion: 2 })).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    const a = usageOf({ prompt: 10, completion: 4, cachedRead: 0, reasoning: 3 });
    const b = usageOf({ prompt: 20, completion: 6, cachedRead: 8, cacheWrite: 2, cacheWrite1h: 1 });
    expect(sumUsage([a, b])).toEqual({
      prompt_tokens: 30,
      completion_tokens: 10,
      total_tokens: 40,
      prompt_tokens_details: { cached_tokens: 8, cache_write_tokens: 2, cache_write_1h_tokens: 1 },
      completion_tokens_details: { reasoning_tokens: 3 },
    });
  });

  it('cross the reply stream as pt/ct and the non-zero cr, cw, ch, rt', () => {
    const usage = usageOf({
      prompt: 100,
      completion: 50,
      cachedRead: 70,
      cacheWrite: 20,
      cacheWrite1h: 0,
      reasoning: 9,
    });
    const fields = entryFields('end', '{}', undefined, usage);
    expect(fields).toEqual(['t', 'end', 'd', '{}', 'pt', '100', 'ct', '50', 'cr', '70', 'cw', '20', 'rt', '9']);
    expect(parseEntry('1-0', fields)).toEqual({ id: '1-0', t: 'end', d: '{}', pt: 100, ct: 50, cr: 70, cw: 20, rt: 9 });
    expect(entryFields('end', '{}', undefined, { prompt_tokens: 1, completion_tokens: 2 })).toEqual([
      't',
      'end',
      'd',
      '{}',
      'pt',
      '1',
      'ct',
      '2',
    ]);
  });
});

describe('decoders report every token type', () => {
  it('Anthropic: cache reads and writes with the 1-hour split, from message_start through message_delta', () => {
    const decoder = new AnthropicStreamDecoder();
    const start = decoder.push({
      data: JSON.stringify({
        type: 'message_start',
        message: {
          usage: {
            input_tokens: 5,
            output_tokens: 1,
            cache_read_input_tokens: 90,
            cache_creation_input_tokens: 30,
            cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 },
          },
        },
      }),
    });
    expect(start).toEqual([
      {
        kind: 'usage',
        usage: {
          prompt_tokens: 125,
          completion_tokens: 1,
          total_tokens: 126,
          prompt_tokens_details: { cached_tokens: 90, cache_write_tokens: 30, cache_write_1h_tokens: 20 },
        },
      },
    ]);
    // message_delta of the 2023-06-01 version carries output tokens only: the cache counts stay.
    const end = decoder.push({
      data: JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 42 } }),
    });
    expect(end.at(-1)).toEqual({
      kind: 'usage',
      usage: {
        prompt_tokens: 125,
        completion_tokens: 42,
        total_tokens: 167,
        prompt_tokens_details: { cached_tokens: 90, cache_write_tokens: 30, cache_write_1h_tokens: 20 },
      },
    });
  });

  it('OpenAI: cached and reasoning details of the last chunk; null details are not reported', () => {
    const decoder = new OpenAiStreamDecoder();
    const usage = {
      prompt_tokens: 50,
      completion_tokens: 30,
      total_tokens: 80,
      prompt_tokens_details: { cached_tokens: 32 },
      completion_tokens_details: { reasoning_tokens: 12 },
    };
    expect(decoder.push({ data: JSON.stringify({ choices: [], usage }) })).toEqual([{ kind: 'usage', usage }]);
    const bare = decoder.push({
      data: JSON.stringify({
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, prompt_tokens_details: null },
      }),
    });
    expect(bare).toEqual([{ kind: 'usage', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }]);
  });

  it('Gemini: cachedContentTokenCount and thoughtsTokenCount', () => {
    const decoder = new GeminiStreamDecoder();
    const out = decoder.push({
      data: JSON.stringify({
        candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'STOP' }],
        usageMetadata: {
          promptTokenCount: 40,
          cachedContentTokenCount: 25,
          candidatesTokenCount: 3,
          thoughtsTokenCount: 7,
        },
      }),
    });
    expect(out.at(-1)).toEqual({
      kind: 'usage',
      usage: {
        prompt_tokens: 40,
        completion_tokens: 10,
        total_tokens: 50,
        prompt_tokens_details: { cached_tokens: 25 },
        completion_tokens_details: { reasoning_tokens: 7 },
      },
    });
  });
});

describe('cache_control from the request to the upstream body', () => {
  const request = () =>
    parseChatRequest({
      model: 'c',
      cache_control: { type: 'ephemeral', ttl: '1h' },
      messages: [
        { role: 'system', content: 'plain system' },
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'cached rules', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: 'after the breakpoint' },
          ],
        },
        { role: 'user', content: [{ type: 'text', text: 'doc', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: 'earlier answer' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ],
    });

  it('keeps breakpoints in the canonical request; text-only parts without one still become a string', () => {
    const req = request();
    expect(req.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(req.messages[0]!.content).toBe('plain system');
    expect(req.messages[1]!.content).toEqual([
      { type: 'text', text: 'cached rules', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'after the breakpoint' },
    ]);
    expect(req.messages[4]!.content).toBe('a\nb');
    expect(messageText(req.messages[1]!)).toBe('cached rules\nafter the breakpoint');
  });

  it('refuses a mark where the canonical model could not keep it (assistant and tool text), naming the field', () => {
    const marked = [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }];
    for (const message of [
      { role: 'assistant', content: marked },
      { role: 'tool', tool_call_id: 'c1', content: marked },
    ]) {
      expect(() => parseChatRequest({ model: 'c', messages: [{ role: 'user', content: 'q' }, message] })).toThrow(
        /unrecognized field\(s\) 'cache_control'/,
      );
    }
  });

  it('DLP redaction rewrites the text and keeps the breakpoint; prompt_cache_key is client text too', () => {
    const req = { ...request(), prompt_cache_key: 'user-42' };
    const upper = mapRequestTexts(req, (t) => t.toUpperCase());
    expect(upper.messages[1]!.content).toEqual([
      { type: 'text', text: 'CACHED RULES', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'AFTER THE BREAKPOINT' },
    ]);
    expect(upper.prompt_cache_key).toBe('USER-42');
    expect(requestTexts(req)).toContain('user-42');
  });

  it('Anthropic: breakpoints stay on the blocks the client marked, in system and user turns, automatic caching at the top level', () => {
    const body = buildAnthropicBody(request(), false);
    expect(body.system).toEqual([
      { type: 'text', text: 'plain system' },
      { type: 'text', text: 'cached rules', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'after the breakpoint' },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'doc', cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: 'earlier answer' },
      { role: 'user', content: 'a\nb' },
    ]);
    expect(body.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
  });

  it('Anthropic: a request without breakpoints keeps its string system prompt', () => {
    const body = buildAnthropicBody(
      parseChatRequest({
        model: 'c',
        messages: [
          {
            role: 'system',
            content: [
              { type: 'text', text: 's1' },
              { type: 'text', text: 's2' },
            ],
          },
          { role: 'user', content: 'q' },
        ],
      }),
      false,
    );
    expect(body.system).toBe('s1\ns2');
    expect(body).not.toHaveProperty('cache_control');
  });

  it('OpenAI: prompt_cache_key and prompt_cache_retention forwarded, Anthropic marks left out', () => {
    const body = buildOpenAiBody({ ...request(), prompt_cache_key: 'k', prompt_cache_retention: 'in_memory' }, false);
    expect(body.prompt_cache_key).toBe('k');
    expect(body.prompt_cache_retention).toBe('in_memory');
    expect(JSON.stringify(body)).not.toContain('cache_control');
    expect((body.messages as Untyped[])[1]).toEqual({
      role: 'system',
      content: [
        { type: 'text', text: 'cached rules' },
        { type: 'text', text: 'after the breakpoint' },
      ],
    });
  });
});

describe('a gateway cache hit marks the usage it replays', () => {
  const mark = { hit: true, type: 'exact' } as const;
  const usage = {
    prompt_tokens: 10,
    completion_tokens: 3,
    total_tokens: 13,
    prompt_tokens_details: { cached_tokens: 4 },
  };

  it('rewrites only the usage at the end, whatever the content says', () => {
    const stored = JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'say "usage":{"prompt_tokens":99}' } }],
      usage,
    });
    const marked = withUsageMark(stored, mark);
    expect(JSON.parse(marked.json)).toEqual({ ...JSON.parse(stored), usage: { ...usage, gateway_cache: mark } });
    expect(marked.usage).toEqual({ ...usage, gateway_cache: mark });
  });

  it('parses a reply whose usage is not its last field whole', () => {
    const stored = JSON.stringify({ id: 'x', usage, choices: [] });
    const marked = withUsageMark(stored, { hit: true, type: 'semantic' });
    expect(JSON.parse(marked.json)).toEqual({
      id: 'x',
      usage: { ...usage, gateway_cache: { hit: true, type: 'semantic' } },
      choices: [],
    });
  });
});

describe('the access-log line', () => {
  it('names the token types a provider reported beside the totals, and nothing else new', () => {
    const summary: RequestSummary = {
      requestId: 'req_2',
      method: 'POST',
      path: '/v1/chat/completions',
      endpoint: '/v1/chat/completions',
      status: 200,
      durationMs: 3,
      aborted: false,
      model: 'c-cache',
      provider: 'provider_c',
      reply: {
        streamed: false,
        coalesced: false,
        terminal: 'result',
        promptTokens: 1000,
        completionTokens: 300,
        cachedReadTokens: 800,
        cacheWriteTokens: 100,
        cacheWrite1hTokens: 40,
      },
    };
    const fields = requestLogFields(summary);
    expect(fields).toMatchObject({
      promptTokens: 1000,
      completionTokens: 300,
      cachedTokens: 800,
      cacheWriteTokens: 100,
    });
    expect(fields).not.toHaveProperty('reasoningTokens');
  });
});
