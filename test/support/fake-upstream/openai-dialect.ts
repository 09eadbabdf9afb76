import {
  countWords,
  fragments,
  imageProblem,
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
  return {
    prompt_tokens: reply.promptTokens,
    completion_tokens: completion,
    total_tokens: reply.promptTokens + completion,
  };
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
    let images = 0;
    let files = 0;
    let toolResults: string[] = [];
    const calledIds = new Set<string>();
    for (const message of body.messages) {
      if (!isRecord(message)) return 'Each message must be an object.';
      if (message.role === 'tool') {
        if (typeof message.tool_call_id !== 'string' || !calledIds.has(message.tool_call_id)) {
          return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
        }
        if (typeof message.content !== 'string') return 'A tool message needs a string content.';
        toolResults.push(message.content);
        inputWords += countWords(message.content);
        continue;
      }
      if (message.role === 'user') toolResults = [];
      if (message.role === 'assistant' && Array.isArray(message.tool_calls)) {
        for (const call of message.tool_calls)
          if (isRecord(call) && typeof call.id === 'string') calledIds.add(call.id);
        if (message.content === null) continue;
      }
      const text = contentText(message.content);
      if ('problem' in text) return text.problem;
      images += text.images;
      files += text.files;
      inputWords += countWords(text.text);
      if (message.role === 'user') lastUserText = text.text;
    }
    const streamOptions = isRecord(body.stream_options) ? body.stream_options : {};
    const tools = Array.isArray(body.tools)
      ? body.tools.flatMap((t) =>
          isRecord(t) && isRecord(t.function) && typeof t.function.name === 'string' ? [t.function.name] : [],
        )
      : [];
    const format = isRecord(body.response_format) ? body.response_format : {};
    const jsonSchema =
      isRecord(format.json_schema) && isRecord(format.json_schema.schema) ? format.json_schema.schema : undefined;
    const prompt: FakePrompt = {
      model: body.model,
      stream: body.stream === true,
      n: typeof body.n === 'number' ? body.n : 1,
      lastUserText,
      inputWords,
      includeUsage: streamOptions.include_usage === true,
      tools,
      toolChoice: toolChoiceOf(body.tool_choice),
      parallelToolCalls: body.parallel_tool_calls !== false,
      toolResults,
      jsonMode: format.type === 'json_object',
      images,
    };
    if (jsonSchema) prompt.jsonSchema = jsonSchema;
    if (files > 0) prompt.files = files;
    const maxTokens = body.max_completion_tokens ?? body.max_tokens;
    if (typeof maxTokens === 'number') prompt.maxTokens = maxTokens;
    if (typeof body.stop === 'string') prompt.stopSequences = [body.stop];
    else if (Array.isArray(body.stop))
      prompt.stopSequences = body.stop.filter((x): x is string => typeof x === 'string');
    return prompt;
  },

  completionBody(reply) {
    const calls = reply.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
    return {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: reply.model,
      choices: reply.texts.map((text, index) => ({
        index,
        message: {
          ...(calls.length > 0
            ? { role: 'assistant', content: null, tool_calls: calls, refusal: null }
            : { role: 'assistant', content: text, refusal: null }),
          // As OpenAI-compatible reasoning servers (DeepSeek, vLLM, ...) send their reasoning.
          ...(reply.thinking ? { reasoning_content: reply.thinking.text } : {}),
        },
        logprobs: null,
        finish_reason: calls.length > 0 ? 'tool_calls' : reply.finish === 'length' ? 'length' : 'stop',
      })),
      usage: usageOf(reply),
    };
  },

  streamFrames(reply, prompt): SseFrame[] {
    const base = {
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: reply.model,
    };
    // With include_usage every chunk but the last carries `usage: null`.
    const usageField = prompt.includeUsage ? { usage: null } : {};
    const chunk = (choices: unknown[]): SseFrame => ({ data: JSON.stringify({ ...base, choices, ...usageField }) });
    const pieces = reply.texts.map((text) => (reply.toolCalls.length > 0 ? [] : streamPieces(text)));
    const frames: SseFrame[] = pieces.map((_, index) =>
      chunk([
        {
          index,
          delta: { role: 'assistant', content: reply.toolCalls.length > 0 ? null : '' },
          logprobs: null,
          finish_reason: null,
        },
      ]),
    );
    if (reply.thinking) {
      for (const piece of streamPieces(reply.thinking.text))
        pieces.forEach((_, index) =>
          frames.push(chunk([{ index, delta: { reasoning_content: piece }, logprobs: null, finish_reason: null }])),
        );
    }
    // Choices interleave, as they do upstream when n > 1.
    const longest = Math.max(...pieces.map((p) => p.length));
    for (let i = 0; i < longest; i += 1) {
      pieces.forEach((choicePieces, index) => {
        const piece = choicePieces[i];
        if (piece !== undefined)
          frames.push(chunk([{ index, delta: { content: piece }, logprobs: null, finish_reason: null }]));
      });
    }
    // Tool calls as OpenAI streams them: id and name first with empty arguments, then the arguments in fragments.
    pieces.forEach((_, index) => {
      reply.toolCalls.forEach((call, k) => {
        frames.push(
          chunk([
            {
              index,
              delta: {
                tool_calls: [{ index: k, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
              },
              logprobs: null,
              finish_reason: null,
            },
          ]),
        );
        for (const fragment of fragments(call.arguments)) {
          frames.push(
            chunk([
              {
                index,
                delta: { tool_calls: [{ index: k, function: { arguments: fragment } }] },
                logprobs: null,
                finish_reason: null,
              },
            ]),
          );
        }
      });
    });
    const finish = reply.toolCalls.length > 0 ? 'tool_calls' : reply.finish === 'length' ? 'length' : 'stop';
    pieces.forEach((_, index) => frames.push(chunk([{ index, delta: {}, logprobs: null, finish_reason: finish }])));
    if (prompt.includeUsage) frames.push({ data: JSON.stringify({ ...base, choices: [], usage: usageOf(reply) }) });
    frames.push({ data: '[DONE]' });
    return frames;
  },
};

function toolChoiceOf(value: unknown): FakePrompt['toolChoice'] {
  if (value === 'none' || value === 'required') return value;
  if (isRecord(value) && isRecord(value.function) && typeof value.function.name === 'string')
    return { name: value.function.name };
  return 'auto';
}

/** The text of a message content (string or parts), with its images counted and checked. */
function contentText(content: unknown): { text: string; images: number; files: number } | { problem: string } {
  if (typeof content === 'string') return { text: content, images: 0, files: 0 };
  if (!Array.isArray(content)) return { problem: 'Each message needs a string or array content.' };
  const texts: string[] = [];
  let images = 0;
  let files = 0;
  for (const part of content) {
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (
      isRecord(part) &&
      part.type === 'image_url' &&
      isRecord(part.image_url) &&
      typeof part.image_url.url === 'string'
    ) {
      const url = part.image_url.url;
      const match = /^data:([^;]+);base64,(.*)$/s.exec(url);
      const problem = match
        ? imageProblem(match[1], match[2])
        : url.startsWith('https://')
          ? undefined
          : 'image_url must be https or data';
      if (problem) return { problem: `Invalid image: ${problem}` };
      images += 1;
    } else if (
      isRecord(part) &&
      part.type === 'file' &&
      isRecord(part.file) &&
      typeof part.file.file_data === 'string'
    ) {
      if (!/^data:application\/pdf;base64,[A-Za-z0-9+/=]+$/.test(part.file.file_data))
        return { problem: 'Invalid file: file_data must be a base64 data URL of a PDF.' };
      files += 1;
    } else return { problem: 'Invalid content part.' };
  }
  return { text: texts.join('\n'), images, files };
}
