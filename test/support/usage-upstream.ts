import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WireFormat } from '../../src/providers/types.ts';
import { readBody } from './read-body.ts';

/**
 * A loopback upstream that reports prompt caching and reasoning the way each
 * provider does, sync and streamed, so usage and spend can be checked token
 * type by token type. It answers every call with one short text and the
 * counts of {@link UsageUpstreamCounts}; a model whose name contains
 * `nocache` reports no cached or cache-written tokens. Request bodies are
 * recorded, parsed.
 */
export interface UsageUpstreamCounts {
  /** Every prompt token, cached and cache-written included (OpenAI's `prompt_tokens`). */
  prompt: number;
  /** Every completion token, reasoning included. */
  completion: number;
  cachedRead: number;
  /** Anthropic only: written for 5 minutes and for 1 hour. */
  cacheWrite5m: number;
  cacheWrite1h: number;
  /** OpenAI and Gemini only (Anthropic reports no thinking count). */
  reasoning: number;
}

export const USAGE_COUNTS: UsageUpstreamCounts = {
  prompt: 1000,
  completion: 300,
  cachedRead: 800,
  cacheWrite5m: 60,
  cacheWrite1h: 40,
  reasoning: 200,
};

export interface UsageUpstream {
  url: string;
  /** Parsed JSON bodies of the calls received, oldest first. */
  bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

const TEXT = 'cached answer';

function sse(events: ReadonlyArray<{ event?: string; data: unknown }>): string {
  return events
    .map(
      (e) =>
        `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`,
    )
    .join('');
}

function openAi(model: string, stream: boolean, c: UsageUpstreamCounts): string {
  const usage = {
    prompt_tokens: c.prompt,
    completion_tokens: c.completion,
    total_tokens: c.prompt + c.completion,
    prompt_tokens_details: { cached_tokens: c.cachedRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: c.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
  const base = { id: 'chatcmpl-usage', created: 1, model };
  if (!stream) {
    return JSON.stringify({
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }],
      usage,
    });
  }
  const chunk = (choices: unknown[], u: unknown = null) => ({
    data: { ...base, object: 'chat.completion.chunk', choices, usage: u },
  });
  return sse([
    chunk([{ index: 0, delta: { role: 'assistant', content: TEXT }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
    chunk([], usage),
    { data: '[DONE]' },
  ]);
}

function anthropic(model: string, stream: boolean, c: UsageUpstreamCounts): string {
  const write = c.cacheWrite5m + c.cacheWrite1h;
  const input = {
    input_tokens: c.prompt - c.cachedRead - write,
    cache_read_input_tokens: c.cachedRead,
    cache_creation_input_tokens: write,
    cache_creation: { ephemeral_5m_input_tokens: c.cacheWrite5m, ephemeral_1h_input_tokens: c.cacheWrite1h },
  };
  const message = { id: 'msg_usage', type: 'message', role: 'assistant', model };
  if (!stream) {
    return JSON.stringify({
      ...message,
      content: [{ type: 'text', text: TEXT }],
      stop_reason: 'end_turn',
      usage: { ...input, output_tokens: c.completion },
    });
  }
  return sse([
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...input, output_tokens: 1 } },
      },
    },
    {
      event: 'content_block_start',
      data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    },
    {
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: TEXT } },
    },
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    // Cumulative counts, the cache ones repeated as newer API versions do.
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { ...input, output_tokens: c.completion },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ]);
}

function gemini(stream: boolean, c: UsageUpstreamCounts): string {
  const usageMetadata = {
    promptTokenCount: c.prompt,
    candidatesTokenCount: c.completion - c.reasoning,
    thoughtsTokenCount: c.reasoning,
    cachedContentTokenCount: c.cachedRead,
    totalTokenCount: c.prompt + c.completion,
  };
  const answer = {
    candidates: [{ content: { role: 'model', parts: [{ text: TEXT }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata,
  };
  if (!stream) return JSON.stringify(answer);
  const early = {
    candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, index: 0 }],
    usageMetadata: { promptTokenCount: c.prompt, cachedContentTokenCount: c.cachedRead },
  };
  return sse([{ data: early }, { data: answer }]);
}

/** Starts the upstream on a free loopback port. */
export async function startUsageUpstream(
  format: WireFormat,
  counts: UsageUpstreamCounts = USAGE_COUNTS,
): Promise<UsageUpstream> {
  const bodies: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = JSON.parse((await readBody(req)) || '{}') as Record<string, unknown>;
      bodies.push(body);
      const url = req.url ?? '';
      const model = typeof body.model === 'string' ? body.model : (/models\/([^:]+):/.exec(url)?.[1] ?? 'model');
      const c = model.includes('nocache') ? { ...counts, cachedRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 } : counts;
      const stream = format === 'gemini' ? url.includes('streamGenerateContent') : body.stream === true;
      const text =
        format === 'openai'
          ? openAi(model, stream, c)
          : format === 'anthropic'
            ? anthropic(model, stream, c)
            : gemini(stream, c);
      res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
      res.end(text);
    })().catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const path = format === 'openai' ? '/v1' : format === 'gemini' ? '/v1beta' : '';
  return {
    url: `http://127.0.0.1:${port}${path}`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
