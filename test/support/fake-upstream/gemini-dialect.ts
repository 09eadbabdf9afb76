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

/** Fake of Gemini `models/{model}:generateContent` and `:streamGenerateContent?alt=sse`. */

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** The text of a `Content`: its text parts joined. */
function contentText(content: unknown): string | undefined {
  if (!isRecord(content) || !Array.isArray(content.parts)) return undefined;
  let text = '';
  for (const part of content.parts) {
    if (!isRecord(part) || typeof part.text !== 'string') return undefined;
    text += part.text;
  }
  return text;
}

function candidate(index: number, text: string, finished: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { content: { parts: [{ text }], role: 'model' } };
  if (finished) out.finishReason = 'STOP';
  // Proto3 JSON omits zero values, and Gemini leaves out index 0 in streams.
  if (index !== 0) out.index = index;
  return out;
}

export const geminiDialect: FakeDialect = {
  route(method, url) {
    const match = method === 'POST' ? ROUTE.exec(url.pathname) : null;
    if (!match?.[1]) return undefined;
    const stream = match[2] === 'streamGenerateContent';
    // Without alt=sse the upstream streams a JSON array, which the gateway does not read.
    if (stream && url.searchParams.get('alt') !== 'sse') return undefined;
    return { stream, model: decodeURIComponent(match[1]) };
  },

  isAuthorized(headers, apiKey) {
    return headers['x-goog-api-key'] === apiKey;
  },

  errorBody(status, message) {
    return { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN' } };
  },

  readPrompt(body, route): FakePrompt | string {
    if (!isRecord(body) || !Array.isArray(body.contents) || body.contents.length === 0) {
      return '* GenerateContentRequest.contents: contents is not specified';
    }
    let inputWords = 0;
    let lastUserText = '';
    if (body.systemInstruction !== undefined) {
      const system = contentText(body.systemInstruction);
      if (system === undefined) return 'Invalid systemInstruction.';
      inputWords += countWords(system);
    }
    for (const content of body.contents) {
      const text = contentText(content);
      if (text === undefined || !isRecord(content)) return 'Invalid content.';
      inputWords += countWords(text);
      if (content.role === 'user' || content.role === undefined) lastUserText = text;
    }
    const config = isRecord(body.generationConfig) ? body.generationConfig : {};
    return {
      model: route.model ?? '',
      stream: route.stream,
      n: typeof config.candidateCount === 'number' ? config.candidateCount : 1,
      lastUserText,
      inputWords,
      includeUsage: true,
    };
  },

  completionBody(reply) {
    const completion = sum(reply.completionTokens);
    return {
      candidates: reply.texts.map((text, index) => ({
        content: { parts: [{ text }], role: 'model' },
        finishReason: 'STOP',
        index,
      })),
      usageMetadata: {
        promptTokenCount: reply.promptTokens,
        candidatesTokenCount: completion,
        totalTokenCount: reply.promptTokens + completion,
      },
      modelVersion: reply.model,
    };
  },

  streamFrames(reply): SseFrame[] {
    const pieces = reply.texts.map(streamPieces);
    const longest = Math.max(...pieces.map((p) => p.length));
    const completion = sum(reply.completionTokens);
    const frames: SseFrame[] = [];
    for (let i = 0; i < longest; i += 1) {
      const candidates: Record<string, unknown>[] = [];
      pieces.forEach((choicePieces, index) => {
        const piece = choicePieces[i];
        if (piece !== undefined) candidates.push(candidate(index, piece, i === choicePieces.length - 1));
      });
      const last = i === longest - 1;
      // Early chunks carry usage without candidatesTokenCount, as upstream does.
      const usageMetadata = last
        ? { promptTokenCount: reply.promptTokens, candidatesTokenCount: completion, totalTokenCount: reply.promptTokens + completion }
        : { promptTokenCount: reply.promptTokens, totalTokenCount: reply.promptTokens };
      frames.push({ data: JSON.stringify({ candidates, usageMetadata, modelVersion: reply.model }) });
    }
    return frames;
  },
};
