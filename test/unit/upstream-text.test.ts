import { describe, expect, it } from 'vitest';
import { UpstreamFailure, clientErrorFor } from '../../src/execution/upstream-failure.ts';
import { MAX_UPSTREAM_TEXT, scrubUpstreamText } from '../../src/execution/upstream-text.ts';
import { anthropicAdapter } from '../../src/providers/anthropic/adapter.ts';
import { geminiAdapter } from '../../src/providers/gemini/adapter.ts';
import { openAiAdapter } from '../../src/providers/openai/adapter.ts';
import { UpstreamProtocolError } from '../../src/providers/types.ts';

/** The one scrubber of upstream text, and the decoders that no longer quote upstream bytes. */

const KEY = 'plain-looking-upstream-key';

describe('scrubUpstreamText', () => {
  it('removes every configured key, also URL-encoded', () => {
    const out = scrubUpstreamText(`a ${KEY} b ${encodeURIComponent('k+y/=secret')} c other-key-value`, [
      KEY,
      'k+y/=secret',
      'other-key-value',
    ]);
    expect(out).toBe('a [redacted] b [redacted] c [redacted]');
  });

  it.each([
    ['authorization=Bearer abcdefghij', 'authorization=[redacted]'],
    ['Authorization: Bearer abcdefghij', 'Authorization: [redacted]'],
    ['{"authorization":"Bearer abcdefghij","model":"m"}', '{"authorization":"[redacted]","model":"m"}'],
    ['{\\"x-api-key\\":\\"abcdefghij\\"}', '{\\"x-api-key\\":\\"[redacted]\\"}'],
    ['x-goog-api-key: AbCdEf123', 'x-goog-api-key: [redacted]'],
    ['proxy-authorization=Basic dXNlcjpwYXNz', 'proxy-authorization=[redacted]'],
    ['GET /v1beta/models?key=AbCdEf123&alt=sse', 'GET /v1beta/models?key=[redacted]&alt=sse'],
    ['cookie: session=abc', 'cookie: [redacted]'],
    ['sent Bearer abcdefghij12 along', 'sent Bearer [redacted] along'],
    ['key sk-proj-abcdefghijklmnop leaked', 'key [redacted] leaked'],
    ['AIzaSyA1234567890abcdefghij', '[redacted]'],
    ['gw_abcdefghijk1234', '[redacted]'],
    ['token eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl', 'token [redacted]'],
  ])('%s -> %s', (input, expected) => {
    expect(scrubUpstreamText(input, [])).toBe(expected);
  });

  it('leaves ordinary error text alone', () => {
    const text = "max_tokens: 8192 exceeds the model's limit of 4096 tokens; the skeleton_of_the_request is fine";
    expect(scrubUpstreamText(text, [KEY])).toBe(text);
  });

  it('scrubs before it clips: a key straddling the clip is never half left', () => {
    const text = `${'x'.repeat(MAX_UPSTREAM_TEXT - 5)} ${KEY} tail`;
    const out = scrubUpstreamText(text, [KEY]);
    expect(out.length).toBeLessThanOrEqual(MAX_UPSTREAM_TEXT + 1);
    expect(out).not.toContain(KEY.slice(0, 4));
    expect(out.endsWith('…')).toBe(true);
  });

  it('replaces control characters, so a quoted text cannot forge a log line', () => {
    expect(scrubUpstreamText('one\ntwo\r\n{"level":60}', [])).toBe('one two {"level":60}');
  });
});

describe('UpstreamFailure.scrubbed and clientErrorFor', () => {
  it('scrubs the message and the upstream message; the client error carries only scrubbed text', () => {
    const raw = new UpstreamFailure(`HTTP 500 ${KEY}`, 'status', true, {
      status: 500,
      upstreamMessage: `echo authorization=Bearer ${KEY}`,
    });
    const failure = raw.scrubbed([KEY]);
    expect(failure.retryable).toBe(true);
    expect(failure.options.status).toBe(500);
    const error = clientErrorFor(failure, 'provider_a', 2);
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain('authorization=[redacted]');
  });
});

describe('stream decoders name a malformed event, never quote it', () => {
  const line = `{"not json": authorization=Bearer ${KEY}`;
  it.each([
    ['OpenAI', openAiAdapter],
    ['Gemini', geminiAdapter],
    ['Anthropic', anthropicAdapter],
  ])('%s', (_name, adapter) => {
    const decoder = adapter.createStreamDecoder();
    let thrown: unknown;
    try {
      decoder.push({ event: 'message_start', data: line });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UpstreamProtocolError);
    expect((thrown as Error).message).toMatch(
      /^Malformed JSON in event 1 of the \w+ upstream stream \(\d+ characters\)\.$/,
    );
    expect((thrown as Error).message).not.toContain(KEY.slice(0, 8));
  });
});
