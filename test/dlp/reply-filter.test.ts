import { describe, expect, it } from 'vitest';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest } from '../../src/chat/types.ts';
import { DlpGuard, type DlpGuardOptions } from '../../src/dlp/dlp-guard.ts';
import { REPLY_HOLD_BACK, REPLY_SCAN_STEP, type ReplyFilter } from '../../src/dlp/reply-filter.ts';
import { PiiDetectedError } from '../../src/errors/catalog.ts';

const EMAIL = 'jörg.müller@example.de';
const request = (content: string): ChatRequest => ({
  model: 'm',
  n: 1,
  stream: true,
  include_usage: false,
  messages: [{ role: 'user', content }],
});

function exchange(
  options: DlpGuardOptions,
  content = `mail ${EMAIL} "quoted"`,
): { sent: string; reply: ReplyFilter | undefined } {
  const { request: sent, reply } = new DlpGuard(options).screenExchange(request(content), {});
  return { sent: sent.messages[0]!.content as string, reply };
}

function completion(content: string, args?: string): string {
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content };
  if (args !== undefined)
    message.tool_calls = [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }];
  return JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
}

const chunk = (content: string | undefined, finish: 'stop' | null = null): string =>
  JSON.stringify({
    id: 'x',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish, logprobs: null }],
  });

/** Streams `text` in pieces of 1-5 characters through the filter and returns what the client reads, and the most held back at once. */
function stream(reply: ReplyFilter, text: string, finish = true): { out: string; maxHeld: number } {
  let out = '';
  let fed = 0;
  let maxHeld = 0;
  for (let i = 0, step = 1; i < text.length; i += step, step = (step % 5) + 1) {
    const piece = text.slice(i, i + step);
    fed += piece.length;
    const parsed = JSON.parse(reply.chunk(chunk(piece))) as ChatCompletionChunk;
    out += parsed.choices[0]?.delta.content ?? '';
    maxHeld = Math.max(maxHeld, fed - out.length);
  }
  if (finish)
    out += (JSON.parse(reply.chunk(chunk(undefined, 'stop'))) as ChatCompletionChunk).choices[0]?.delta.content ?? '';
  for (const rest of reply.flush()) out += (JSON.parse(rest) as ChatCompletionChunk).choices[0]?.delta.content ?? '';
  return { out, maxHeld };
}

describe('DLP on replies', () => {
  it('is off unless DLP_SCAN_REPLIES or DLP_RESTORE: the reply path gets no filter', () => {
    expect(exchange({}).reply).toBeUndefined();
    expect(exchange({ restore: true, action: 'log' }).reply).toBeUndefined(); // nothing was replaced, nothing to restore
    expect(exchange({ restore: true, enabled: false }).reply).toBeUndefined();
  });

  it('DLP_RESTORE: the client reads its own value back, the provider only saw the placeholder', () => {
    const { sent, reply } = exchange({ restore: true });
    expect(sent).toBe('mail <EMAIL_ADDRESS_1> "quoted"');
    const out = JSON.parse(
      reply!.completion(
        completion('Sure, I will mail <EMAIL_ADDRESS_1> and <EMAIL_ADDRESS_9>.', '{"to":"<EMAIL_ADDRESS_1>"}'),
      ),
    ) as ChatCompletion;
    expect(out.choices[0]!.message.content).toBe(`Sure, I will mail ${EMAIL} and <EMAIL_ADDRESS_9>.`); // unknown placeholders stay
    expect(JSON.parse(out.choices[0]!.message.tool_calls![0]!.function.arguments)).toEqual({ to: EMAIL });
  });

  it('DLP_RESTORE escapes restored values inside tool-call arguments', () => {
    const { reply } = exchange({ restore: true }, 'pw: password=Tr0ub\\4dor now');
    const out = JSON.parse(reply!.completion(completion('ok', '{"p":"<PASSWORD_1>"}'))) as ChatCompletion;
    expect(JSON.parse(out.choices[0]!.message.tool_calls![0]!.function.arguments)).toEqual({ p: 'Tr0ub\\4dor' });
  });

  it('DLP_SCAN_REPLIES redacts values the provider wrote, numbered after the request ones', () => {
    const { reply } = exchange({ scanReplies: true });
    const out = JSON.parse(
      reply!.completion(completion('Write to bob@example.org or <EMAIL_ADDRESS_1>, card 4111 1111 1111 1111.')),
    ) as ChatCompletion;
    expect(out.choices[0]!.message.content).toBe(
      'Write to <EMAIL_ADDRESS_2> or <EMAIL_ADDRESS_1>, card <CREDIT_CARD_1>.',
    );
  });

  it('DLP_SCAN_REPLIES with block: pii_detected names the reply, never the value', () => {
    const counts: unknown[] = [];
    const { reply } = exchange(
      { scanReplies: true, action: 'block', onFindings: (c, a) => counts.push([c, a]) },
      'nothing personal',
    );
    expect(() => reply!.completion(completion('call +44 20 7946 0958'))).toThrow(PiiDetectedError);
    expect(() => reply!.completion(completion('call +44 20 7946 0958'))).toThrow(
      'The reply contains personal data and was blocked: PHONE_NUMBER.',
    );
    expect(counts[0]).toEqual([{ PHONE_NUMBER: 1 }, 'block']);
  });

  it('streams: a value split over many chunks is replaced whole; at most the hold-back, one value and a scan step are held', () => {
    const { reply } = exchange({ scanReplies: true, restore: true });
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(30);
    const text = `${prose}Reach Zoë at zoë.lindqvist@exämple.se or +46 70 123 45 67 x12, and <EMAIL_ADDRESS_1> too. ${prose}`;
    const { out, maxHeld } = stream(reply!, text);
    expect(out).toBe(`${prose}Reach Zoë at <EMAIL_ADDRESS_2> or <PHONE_NUMBER_1>, and ${EMAIL} too. ${prose}`);
    expect(maxHeld).toBeLessThanOrEqual(REPLY_HOLD_BACK + REPLY_SCAN_STEP + 'zoë.lindqvist@exämple.se'.length + 5);
    expect(maxHeld).toBeGreaterThanOrEqual(REPLY_HOLD_BACK);
    for (const fragment of ['lindq', 'exä', '123 45']) expect(out).not.toContain(fragment);
  });

  it('streams with DLP_RESTORE only: holds back just an unfinished placeholder', () => {
    const { reply } = exchange({ restore: true });
    const { out, maxHeld } = stream(reply!, 'Hello <EMAIL_ADDRESS_1>, bye <EMAIL_ADDRESS_1>.');
    expect(out).toBe(`Hello ${EMAIL}, bye ${EMAIL}.`);
    expect(maxHeld).toBeLessThanOrEqual(18);
  });

  it('streams: releases held text when the stream ends without a finish reason', () => {
    const { reply } = exchange({ scanReplies: true });
    expect(stream(reply!, 'short answer for bob@example.org', false).out).toBe('short answer for <EMAIL_ADDRESS_2>');
  });

  it('streams: tool-call arguments are filtered and restored too, the rest released with the finish chunk', () => {
    const { reply } = exchange({ restore: true, scanReplies: true });
    const call = (args: string) =>
      JSON.stringify({
        id: 'x',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: args } }] },
            finish_reason: null,
            logprobs: null,
          },
        ],
      });
    let args = '';
    for (const piece of ['{"to":"<EMAIL_', 'ADDRESS_1>","cc":"ann@exa', 'mple.org"}']) {
      const parsed = JSON.parse(reply!.chunk(call(piece))) as ChatCompletionChunk;
      args += parsed.choices[0]!.delta.tool_calls?.[0]?.function?.arguments ?? '';
    }
    const last = JSON.parse(reply!.chunk(chunk(undefined, 'stop'))) as ChatCompletionChunk;
    args += last.choices[0]!.delta.tool_calls?.map((c) => c.function?.arguments ?? '').join('') ?? '';
    expect(JSON.parse(args)).toEqual({ to: EMAIL, cc: '<EMAIL_ADDRESS_2>' });
  });
});
