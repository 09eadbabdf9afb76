import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../src/providers/anthropic/adapter.ts';
import { geminiAdapter } from '../../src/providers/gemini/adapter.ts';
import { openAiAdapter } from '../../src/providers/openai/adapter.ts';
import { UpstreamProtocolError } from '../../src/providers/types.ts';
import {
  accumulate,
  callNonStreamed,
  callStreamed,
  chatRequest,
  type StreamedResult,
} from '../support/adapter-round-trip.ts';
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from '../support/fake-upstream.ts';

const started: FakeUpstream[] = [];

async function start(options: FakeUpstreamOptions): Promise<FakeUpstream> {
  const upstream = await startFakeUpstream(options);
  started.push(upstream);
  return upstream;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((upstream) => upstream.close()));
});

/** The events decoded before a streamed call failed. */
async function failedStream(promise: Promise<StreamedResult>): Promise<{ error: Error; partial: StreamedResult }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as Error & { partial: StreamedResult },
  );
  if (error === undefined) throw new Error('expected the stream to fail');
  return { error, partial: (error as Error & { partial: StreamedResult }).partial };
}

describe('fake upstream', () => {
  it('records method, path, headers and parsed body of every request', async () => {
    const upstream = await start({ format: 'openai', apiKey: 'k' });
    await callNonStreamed(openAiAdapter, chatRequest({ temperature: 0.5 }), { baseUrl: upstream.url, apiKey: 'k' });
    expect(upstream.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(upstream.requests).toHaveLength(1);
    const [recorded] = upstream.requests;
    expect(recorded?.method).toBe('POST');
    expect(recorded?.path).toBe('/v1/chat/completions');
    expect(recorded?.headers.authorization).toBe('Bearer k');
    expect(recorded?.body).toMatchObject({ model: 'test-model', temperature: 0.5 });
  });

  it('gives the Anthropic base URL without /v1, the Gemini one with /v1beta', async () => {
    const anthropic = await start({ format: 'anthropic' });
    const gemini = await start({ format: 'gemini' });
    expect(anthropic.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(gemini.url).toMatch(/\/v1beta$/);
  });

  it('answers 401 in the format of the upstream on a wrong key', async () => {
    const upstream = await start({ format: 'anthropic', apiKey: 'right' });
    const res = await fetch(`${upstream.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'wrong', 'anthropic-version': '2023-06-01' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'Invalid API key.' },
    });
  });

  it('checks what the real upstreams check', async () => {
    const anthropic = await start({ format: 'anthropic', apiKey: 'k' });
    const noVersion = await fetch(`${anthropic.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k' },
      body: '{}',
    });
    expect(noVersion.status).toBe(400);
    const leadingAssistant = await fetch(`${anthropic.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'c', max_tokens: 5, messages: [{ role: 'assistant', content: 'hi' }] }),
    });
    expect(leadingAssistant.status).toBe(400);
    expect(anthropicAdapter.extractErrorMessage(await leadingAssistant.json())).toMatch(/first message/);

    const gemini = await start({ format: 'gemini', apiKey: 'k' });
    const noSse = await fetch(`${gemini.url}/models/m:streamGenerateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'k' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] }),
    });
    expect(noSse.status).toBe(404);
    expect(await noSse.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
  });

  it('fails the next requests as told, with Retry-After, then recovers', async () => {
    const upstream = await start({ format: 'anthropic', apiKey: 'k' });
    const endpoint = { baseUrl: upstream.url, apiKey: 'k' };
    upstream.setBehavior({ failNext: { count: 2, status: 429, retryAfter: 7 } });

    const first = await callNonStreamed(anthropicAdapter, chatRequest(), endpoint);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('7');
    expect(first.errorBody).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect((await callNonStreamed(anthropicAdapter, chatRequest(), endpoint)).status).toBe(429);
    expect((await callNonStreamed(anthropicAdapter, chatRequest(), endpoint)).status).toBe(200);
    expect(upstream.requests).toHaveLength(3);
  });

  it('sends a custom failure body', async () => {
    const upstream = await start({ format: 'gemini', apiKey: 'k' });
    upstream.setBehavior({ failNext: { count: 1, status: 500, body: { error: { code: 500, message: 'boom' } } } });
    const result = await callNonStreamed(geminiAdapter, chatRequest(), { baseUrl: upstream.url, apiKey: 'k' });
    expect(result.status).toBe(500);
    expect(result.errorMessage).toBe('boom');
  });

  it('hangs without answering, until the client gives up', async () => {
    const upstream = await start({ format: 'openai', apiKey: 'k' });
    upstream.setBehavior({ hang: true });
    const call = callNonStreamed(
      openAiAdapter,
      chatRequest(),
      { baseUrl: upstream.url, apiKey: 'k' },
      AbortSignal.timeout(150),
    );
    await expect(call).rejects.toThrow(/aborted|timeout/i);
    expect(upstream.requests).toHaveLength(1);
  });

  it('resets the connection', async () => {
    const upstream = await start({ format: 'openai', apiKey: 'k' });
    upstream.setBehavior({ resetConnection: true });
    await expect(callNonStreamed(openAiAdapter, chatRequest(), { baseUrl: upstream.url, apiKey: 'k' })).rejects.toThrow(
      /fetch failed/,
    );
  });

  it('waits latencyMs before answering', async () => {
    const upstream = await start({ format: 'openai', apiKey: 'k', behavior: { latencyMs: 120 } });
    const t0 = performance.now();
    const result = await callNonStreamed(openAiAdapter, chatRequest(), { baseUrl: upstream.url, apiKey: 'k' });
    expect(result.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(110);
  });

  it('spaces stream events by chunkDelayMs', async () => {
    const upstream = await start({ format: 'openai', apiKey: 'k' });
    upstream.setBehavior({ chunkDelayMs: 20 });
    const t0 = performance.now();
    const result = await callStreamed(openAiAdapter, chatRequest({ stream: true }), {
      baseUrl: upstream.url,
      apiKey: 'k',
    });
    const elapsed = performance.now() - t0;
    // role chunk, 3 words, finish chunk, usage chunk, [DONE]: 7 events, 6 gaps.
    expect(result.sse).toHaveLength(7);
    expect(elapsed).toBeGreaterThanOrEqual(6 * 20 - 5);
    expect(result.finished).toBe(true);
  });

  it('cuts a stream after k events', async () => {
    const upstream = await start({ format: 'anthropic', apiKey: 'k' });
    upstream.setBehavior({ cutStreamAfterChunks: 4 });
    const { error, partial } = await failedStream(
      callStreamed(anthropicAdapter, chatRequest({ stream: true }), { baseUrl: upstream.url, apiKey: 'k' }),
    );
    expect(error).not.toBeInstanceOf(UpstreamProtocolError);
    // message_start, content_block_start, ping, first delta.
    expect(partial.sse.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
    ]);
    expect(partial.finished).toBe(false);
    expect(accumulate(partial.events).texts).toEqual(['Echo:']);
  });

  it('sends invalid JSON as event k, which the decoder rejects', async () => {
    const upstream = await start({ format: 'gemini', apiKey: 'k' });
    upstream.setBehavior({ malformedChunkAt: 1 });
    const { error, partial } = await failedStream(
      callStreamed(geminiAdapter, chatRequest({ stream: true }), { baseUrl: upstream.url, apiKey: 'k' }),
    );
    expect(error).toBeInstanceOf(UpstreamProtocolError);
    expect(partial.sse).toHaveLength(2);
    expect(accumulate(partial.events).texts).toEqual(['Echo:']);
  });

  it('replies with replyText, split into word chunks, counting words as tokens', async () => {
    const upstream = await start({ format: 'gemini', apiKey: 'k' });
    upstream.setBehavior({ replyText: 'a b c d e' });
    const result = await callStreamed(geminiAdapter, chatRequest({ stream: true }), {
      baseUrl: upstream.url,
      apiKey: 'k',
    });
    expect(result.sse).toHaveLength(5);
    const acc = accumulate(result.events);
    expect(acc.texts).toEqual(['a b c d e']);
    expect(acc.usage).toEqual({ prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
  });

  it('reset() clears requests and restores the initial behaviour', async () => {
    const upstream = await start({ format: 'openai', apiKey: 'k', behavior: { replyText: 'initial' } });
    const endpoint = { baseUrl: upstream.url, apiKey: 'k' };
    upstream.setBehavior({ replyText: 'changed', failNext: { count: 5, status: 503 } });
    expect((await callNonStreamed(openAiAdapter, chatRequest(), endpoint)).status).toBe(503);
    upstream.reset();
    expect(upstream.requests).toHaveLength(0);
    expect(upstream.behavior).toEqual({ replyText: 'initial' });
    const result = await callNonStreamed(openAiAdapter, chatRequest(), endpoint);
    expect(result.completion?.choices[0]?.message.content).toBe('initial');
  });

  it('runs as a separate process from the CLI', async () => {
    const cli = fileURLToPath(new URL('../support/fake-upstream-cli.ts', import.meta.url));
    const child = spawn(process.execPath, [cli, '--format', 'anthropic', '--key', 'cli-key', '--latency-ms', '1'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, FAKE_UPSTREAM_KEY: 'overridden-by-flag' },
    });
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const match = /^listening (http:\/\/\S+)\n/.exec(line.toString());
      expect(match).not.toBeNull();
      const result = await callNonStreamed(anthropicAdapter, chatRequest(), {
        baseUrl: match?.[1] ?? '',
        apiKey: 'cli-key',
      });
      expect(result.completion?.choices[0]?.message.content).toBe('Echo: hello there');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
