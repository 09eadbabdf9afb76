import {
  countWords,
  isRecord,
  streamPieces,
  type FakeDialect,
  type FakePrompt,
  type FakeReply,
  type SseFrame,
} from './dialect.ts';

/** Fake of Anthropic `POST /v1/messages`, which returns exactly one message. */

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** `content` / `system` are a string or a list of text blocks. */
function blocksText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return undefined;
  let text = '';
  for (const block of value) {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') return undefined;
    text += block.text;
  }
  return text;
}

function frame(type: string, payload: Record<string, unknown> = {}): SseFrame {
  return { event: type, data: JSON.stringify({ type, ...payload }) };
}

export const anthropicDialect: FakeDialect = {
  route(method, url) {
    return method === 'POST' && url.pathname === '/v1/messages' ? { stream: false } : undefined;
  },

  isAuthorized(headers, apiKey) {
    return headers['x-api-key'] === apiKey;
  },

  headerProblem(headers) {
    return headers['anthropic-version'] === undefined ? 'anthropic-version: header is required' : undefined;
  },

  errorBody(status, message) {
    return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
  },

  readPrompt(body): FakePrompt | string {
    if (!isRecord(body) || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return "'model' and 'messages' are required.";
    }
    // The real API rejects requests without these; so does the fake, to catch adapter bugs.
    if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
    if (body.messages.length === 0) return 'messages: at least one message is required';
    let inputWords = 0;
    if (body.system !== undefined) {
      const system = blocksText(body.system);
      if (system === undefined) return 'system: invalid';
      inputWords += countWords(system);
    }
    let lastUserText = '';
    let previousRole: unknown;
    for (const [i, message] of body.messages.entries()) {
      if (!isRecord(message)) return `messages.${i}: invalid`;
      const text = blocksText(message.content);
      if (text === undefined) return `messages.${i}.content: invalid`;
      if (message.role !== 'user' && message.role !== 'assistant') return `messages.${i}.role: invalid`;
      if (i === 0 && message.role !== 'user') return 'messages: first message must use the "user" role';
      if (message.role === previousRole) return 'messages: roles must alternate between "user" and "assistant"';
      previousRole = message.role;
      inputWords += countWords(text);
      if (message.role === 'user') lastUserText = text;
    }
    return { model: body.model, stream: body.stream === true, n: 1, lastUserText, inputWords, includeUsage: true };
  },

  completionBody(reply: FakeReply) {
    return {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model: reply.model,
      content: [{ type: 'text', text: reply.texts[0] ?? '' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: reply.promptTokens, output_tokens: reply.completionTokens[0] ?? 0 },
    };
  },

  streamFrames(reply: FakeReply): SseFrame[] {
    const frames: SseFrame[] = [
      frame('message_start', {
        message: {
          id: 'msg_fake',
          type: 'message',
          role: 'assistant',
          model: reply.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: reply.promptTokens, output_tokens: 1 },
        },
      }),
      frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      frame('ping'),
    ];
    for (const piece of streamPieces(reply.texts[0] ?? '')) {
      frames.push(frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }));
    }
    frames.push(
      frame('content_block_stop', { index: 0 }),
      frame('message_delta', {
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: reply.completionTokens[0] ?? 0 },
      }),
      frame('message_stop'),
    );
    return frames;
  },
};
