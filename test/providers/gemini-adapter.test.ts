import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LEADING_USER_PLACEHOLDER } from '../../src/providers/conversation-turns.ts';
import { geminiAdapter } from '../../src/providers/gemini/adapter.ts';
import { mapGeminiFinishReason } from '../../src/providers/gemini/wire.ts';
import { UpstreamProtocolError, type SseEvent } from '../../src/providers/types.ts';
import { accumulate, callNonStreamed, callStreamed, chatRequest } from '../support/adapter-round-trip.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';

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
    expect(geminiAdapter.validate(chatRequest({ messages: [{ role: 'system', content: 'only instructions' }] }))).toMatch(
      /at least one user or assistant message/,
    );
    expect(geminiAdapter.validate(chatRequest())).toBeUndefined();
  });
});

describe('geminiAdapter.parseResponse', () => {
  it('reads candidates, finish reasons and usage', () => {
    const parsed = geminiAdapter.parseResponse({
      candidates: [
        textCandidate('second', { finishReason: 'MAX_TOKENS', index: 1 }),
        { content: { parts: [{ text: 'thinking...', thought: true }, { text: 'fir' }, { text: 'st' }], role: 'model' }, finishReason: 'STOP' },
      ],
      usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 6, thoughtsTokenCount: 4, totalTokenCount: 21 },
      modelVersion: 'gemini-x',
    });
    expect(parsed.choices).toEqual([
      { index: 0, content: 'first', finish_reason: 'stop' },
      { index: 1, content: 'second', finish_reason: 'length' },
    ]);
    // Thinking tokens are completion tokens.
    expect(parsed.usage).toEqual({ prompt_tokens: 11, completion_tokens: 10, total_tokens: 21 });
  });

  it('falls back to positions when candidates leave out every index', () => {
    const parsed = geminiAdapter.parseResponse({
      candidates: [textCandidate('a', { finishReason: 'STOP' }), textCandidate('b', { finishReason: 'STOP' })],
    });
    expect(parsed.choices.map((c) => [c.index, c.content])).toEqual([
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
    expect(parsed.choices).toEqual([{ index: 0, content: '', finish_reason: 'content_filter' }]);
    expect(parsed.usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('answers a blocked prompt with one filtered, empty choice', () => {
    const parsed = geminiAdapter.parseResponse({
      promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] },
      usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 },
    });
    expect(parsed.choices).toEqual([{ index: 0, content: '', finish_reason: 'content_filter' }]);
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
    decoder.push(data({ candidates: [textCandidate('a2', { finishReason: 'STOP' }), textCandidate('b2', { index: 1 })] }));
    expect(decoder.finished).toBe(false);
    const events = decoder.push(data({ candidates: [{ finishReason: 'MAX_TOKENS', index: 1 }] }));
    expect(events).toEqual([{ kind: 'delta', choice: 1, finish_reason: 'length' }]);
    expect(decoder.finished).toBe(true);
  });

  it('treats FINISH_REASON_UNSPECIFIED as still running', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    expect(decoder.push(data({ candidates: [textCandidate('x', { finishReason: 'FINISH_REASON_UNSPECIFIED' })] }))).toEqual([
      { kind: 'delta', choice: 0, content: 'x' },
    ]);
    expect(decoder.finished).toBe(false);
  });

  it('ends a blocked prompt with a filtered choice', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    const events = decoder.push(data({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 3 } }));
    expect(events[0]).toEqual({ kind: 'delta', choice: 0, finish_reason: 'content_filter' });
    expect(decoder.finished).toBe(true);
  });

  it('turns an in-stream error into an error event and skips unknown fields', () => {
    const decoder = geminiAdapter.createStreamDecoder();
    expect(decoder.push(data({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }))).toEqual([
      { kind: 'error', message: 'UNAVAILABLE: The model is overloaded.' },
    ]);
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
    expect(result.completion?.choices.map((c) => c.content)).toEqual(['[0] Echo: red green', '[1] Echo: red green']);
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
