import {
  countWords,
  isRecord,
  streamPieces,
  sum,
  type FakeDialect,
  type FakePrompt,
  type FakeReply,
  type SseFrame,
} from './dialect.ts';

/** Fake of OpenAI `POST /v1/chat/completions`. */

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  404: { type: 'invalid_request_error', code: 'unknown_url' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

function usageOf(reply: FakeReply) {
  const completion = sum(reply.completionTokens);
  return { prompt_tokens: reply.promptTokens, completion_tokens: completion, total_tokens: reply.promptTokens + completion };
}

export const openAiDialect: FakeDialect = {
  route(method, url) {
    return method === 'POST' && url.pathname === '/v1/chat/completions' ? { stream: false } : undefined;
  },

  isAuthorized(headers, apiKey) {
    return headers.authorization === `Bearer ${apiKey}`;
  },

  errorBody(status, message) {
    const { type, code } = ERROR_TYPES[status] ?? { type: 'server_error', code: null };
    return { error: { message, type, param: null, code } };
  },

  readPrompt(body): FakePrompt | string {
    if (!isRecord(body) || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return "'model' and 'messages' are required.";
    }
    let inputWords = 0;
    let lastUserText = '';
    for (const message of body.messages) {
      if (!isRecord(message) || typeof message.content !== 'string') return 'Each message needs a string content.';
      inputWords += countWords(message.content);
      if (message.role === 'user') lastUserText = message.content;
    }
    const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
    return {
      model: body.model,
      stream: body.stream === true,
      n: typeof body.n === 'number' ? body.n : 1,
      lastUserText,
      inputWords,
      includeUsage: streamOptions.include_usage === true,
    };
  },

  completionBody(reply) {
    return {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: reply.model,
      choices: reply.texts.map((text, index) => ({
        index,
        message: { role: 'assistant', content: text, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      })),
      usage: usageOf(reply),
    };
  },

  streamFrames(reply, prompt): SseFrame[] {
    const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: reply.model };
    // With include_usage every chunk but the last carries `usage: null`.
    const usageField = prompt.includeUsage ? { usage: null } : {};
    const chunk = (choices: unknown[]): SseFrame => ({ data: JSON.stringify({ ...base, choices, ...usageField }) });
    const pieces = reply.texts.map(streamPieces);
    const frames: SseFrame[] = pieces.map((_, index) =>
      chunk([{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]),
    );
    // Choices interleave, as they do upstream when n > 1.
    const longest = Math.max(...pieces.map((p) => p.length));
    for (let i = 0; i < longest; i += 1) {
      pieces.forEach((choicePieces, index) => {
        const piece = choicePieces[i];
        if (piece !== undefined) frames.push(chunk([{ index, delta: { content: piece }, logprobs: null, finish_reason: null }]));
      });
    }
    pieces.forEach((_, index) => frames.push(chunk([{ index, delta: {}, logprobs: null, finish_reason: 'stop' }])));
    if (prompt.includeUsage) frames.push({ data: JSON.stringify({ ...base, choices: [], usage: usageOf(reply) }) });
    frames.push({ data: '[DONE]' });
    return frames;
  },
};
