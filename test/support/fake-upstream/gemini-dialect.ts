import {
  countWords,
  imageProblem,
  isRecord,
  streamPieces,
  sum,
  type FakeDialect,
  type FakePrompt,
  type FakeReply,
  type FakeToolCall,
  type SseFrame,
} from './dialect.ts';

/**
 * Fake of Gemini `models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`. It refuses (400, INVALID_ARGUMENT) what
 * the real API refuses among the rules known here: function calls outside
 * model turns, function responses outside user turns or without a name, a
 * count of responses that differs from the calls of the turn before, Gemini 3's
 * missing thought signature on a turn's first call, both `parameters` and
 * `parametersJsonSchema`, a response schema without `application/json`,
 * `allowedFunctionNames` outside ANY mode, bad inline images and non-https
 * file URIs.
 */

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

/** What one `Content` holds, or the 400 message it earns. */
interface ContentFacts {
  role: 'user' | 'model';
  /** Its text parts joined. */
  text: string;
  images: number;
  /** Inline PDF documents. */
  files: number;
  calls: number;
  /** Each `functionResponse.response`, as the tool result text it stands for. */
  results: string[];
}

/** A function response's text: the `output` string when that is all it holds, else the JSON. */
function resultText(response: Record<string, unknown>): string {
  const keys = Object.keys(response);
  return keys.length === 1 && typeof response.output === 'string' ? response.output : JSON.stringify(response);
}

function readContent(content: unknown, where: string): ContentFacts | string {
  if (!isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0)
    return `${where}: a Content needs a non-empty parts list.`;
  // The role may be left out of a single-turn request; it then means user.
  const role = content.role ?? 'user';
  if (role !== 'user' && role !== 'model') return `${where}.role: Please use a valid role: user, model.`;
  const facts: ContentFacts = { role, text: '', images: 0, files: 0, calls: 0, results: [] };
  for (const [i, part] of content.parts.entries()) {
    const at = `${where}.parts[${i}]`;
    if (!isRecord(part)) return `${at}: a Part must be an object.`;
    const data = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'].filter(
      (key) => part[key] !== undefined,
    );
    if (data.length !== 1)
      return `${at}: a Part must hold exactly one of text, inlineData, fileData, functionCall, functionResponse.`;
    if (part.thoughtSignature !== undefined && typeof part.thoughtSignature !== 'string')
      return `${at}.thoughtSignature: Base64 decoding failed.`;
    if (typeof part.text === 'string') {
      facts.text += part.text;
    } else if (part.text !== undefined) {
      return `${at}.text: must be a string.`;
    } else if (part.inlineData !== undefined) {
      const blob = isRecord(part.inlineData) ? part.inlineData : {};
      if (blob.mimeType === 'application/pdf') {
        if (typeof blob.data !== 'string' || !/^[A-Za-z0-9+/=]+$/.test(blob.data))
          return `${at}.inlineData.data: Base64 decoding failed.`;
        facts.files += 1;
        continue;
      }
      const problem = imageProblem(blob.mimeType, blob.data);
      if (problem) return `${at}.inlineData: ${problem}`;
      facts.images += 1;
    } else if (part.fileData !== undefined) {
      const file = isRecord(part.fileData) ? part.fileData : {};
      if (typeof file.fileUri !== 'string' || !file.fileUri.startsWith('https://'))
        return `${at}.fileData.fileUri: must be an https URL.`;
      if (typeof file.mimeType !== 'string' || !file.mimeType.startsWith('image/'))
        return `${at}.fileData.mimeType: a MIME type is required.`;
      facts.images += 1;
    } else if (part.functionCall !== undefined) {
      if (role !== 'model') return `${at}: function calls may only appear in model turns.`;
      const call = isRecord(part.functionCall) ? part.functionCall : {};
      if (typeof call.name !== 'string' || call.name === '') return `${at}.functionCall.name: name is required.`;
      if (call.args !== undefined && !isRecord(call.args)) return `${at}.functionCall.args: must be a JSON object.`;
      if (facts.calls === 0 && typeof part.thoughtSignature !== 'string') {
        return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly (${at}).`;
      }
      facts.calls += 1;
    } else {
      if (role !== 'user') return `${at}: function responses may only appear in user turns.`;
      const response = isRecord(part.functionResponse) ? part.functionResponse : {};
      if (typeof response.name !== 'string' || response.name === '')
        return `${at}.functionResponse.name: name is required.`;
      if (!isRecord(response.response)) return `${at}.functionResponse.response: must be a JSON object.`;
      facts.results.push(resultText(response.response));
    }
  }
  return facts;
}

function toolNamesOf(tools: unknown): string[] | string {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) return 'tools: must be a list.';
  const names: string[] = [];
  for (const tool of tools) {
    const declarations = isRecord(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [];
    for (const declaration of declarations) {
      if (!isRecord(declaration) || typeof declaration.name !== 'string')
        return 'tools.functionDeclarations: name is required.';
      if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
        return `tools.functionDeclarations[${declaration.name}]: parameters and parametersJsonSchema are mutually exclusive.`;
      }
      names.push(declaration.name);
    }
  }
  return names;
}

function toolChoiceOf(
  toolConfig: unknown,
  tools: readonly string[],
): { choice: FakePrompt['toolChoice'] } | { problem: string } {
  const config =
    isRecord(toolConfig) && isRecord(toolConfig.functionCallingConfig) ? toolConfig.functionCallingConfig : {};
  const mode = config.mode ?? 'AUTO';
  const allowed = config.allowedFunctionNames;
  if (allowed !== undefined && mode !== 'ANY' && mode !== 'VALIDATED')
    return { problem: 'allowedFunctionNames should only be set when the mode is ANY.' };
  if (mode === 'NONE') return { choice: 'none' };
  if (mode === 'AUTO') return { choice: 'auto' };
  if (mode !== 'ANY') return { problem: `toolConfig.functionCallingConfig.mode: invalid value ${String(mode)}.` };
  if (tools.length === 0) return { problem: 'Function calling config is set without function_declarations.' };
  if (Array.isArray(allowed) && allowed.length === 1 && typeof allowed[0] === 'string')
    return { choice: { name: allowed[0] } };
  return { choice: 'required' };
}

/** The reply's thought summary as Gemini sends it with `includeThoughts`: a text part flagged `thought`. */
function thoughtParts(reply: FakeReply): Array<Record<string, unknown>> {
  return reply.thinking ? [{ text: reply.thinking.text, thought: true }] : [];
}

/** The fake's calls as Gemini parts; the first carries a thought signature, as Gemini 3 sends. */
function callParts(calls: readonly FakeToolCall[]): Array<Record<string, unknown>> {
  return calls.map((call, i) => {
    const part: Record<string, unknown> = {
      functionCall: { name: call.name, args: JSON.parse(call.arguments) as unknown },
    };
    if (i === 0) part.thoughtSignature = 'ZmFrZS1zaWduYXR1cmU=';
    return part;
  });
}

function candidate(
  index: number,
  parts: Array<Record<string, unknown>> | undefined,
  finished: boolean,
  reason = 'STOP',
): Record<string, unknown> {
  const out: Record<string, unknown> = parts === undefined ? {} : { content: { parts, role: 'model' } };
  if (finished) out.finishReason = reason;
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
    if (body.systemInstruction !== undefined) {
      const system = readContent(
        { role: 'user', ...(isRecord(body.systemInstruction) ? body.systemInstruction : {}) },
        'systemInstruction',
      );
      if (typeof system === 'string') return system;
      inputWords += countWords(system.text);
    }
    const contents: ContentFacts[] = [];
    for (const [i, content] of body.contents.entries()) {
      const facts = readContent(content, `contents[${i}]`);
      if (typeof facts === 'string') return facts;
      // A turn of calls must be answered by the next turn, one response per call.
      const calledBefore = contents.at(-1)?.calls ?? 0;
      if ((facts.results.length > 0 || calledBefore > 0) && facts.results.length !== calledBefore) {
        return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      }
      contents.push(facts);
      inputWords += countWords(facts.text) + facts.results.reduce((total, result) => total + countWords(result), 0);
    }
    const users = contents.filter((content) => content.role === 'user');
    const tools = toolNamesOf(body.tools);
    if (typeof tools === 'string') return tools;
    const toolChoice = toolChoiceOf(body.toolConfig, tools);
    if ('problem' in toolChoice) return toolChoice.problem;

    const config = isRecord(body.generationConfig) ? body.generationConfig : {};
    const schema = config.responseJsonSchema ?? config.responseSchema;
    if (config.responseJsonSchema !== undefined && config.responseSchema !== undefined) {
      return 'responseSchema and responseJsonSchema are mutually exclusive.';
    }
    if (schema !== undefined && config.responseMimeType !== 'application/json') {
      return 'responseMimeType must be application/json when a response schema is set.';
    }
    const prompt: FakePrompt = {
      model: route.model ?? '',
      stream: route.stream,
      n: typeof config.candidateCount === 'number' ? config.candidateCount : 1,
      // The last user turn with text: a turn of function results alone has none.
      lastUserText: users.findLast((content) => content.text !== '')?.text ?? '',
      inputWords,
      includeUsage: true,
      tools,
      toolChoice: toolChoice.choice,
      // Gemini has no switch against parallel calls.
      parallelToolCalls: true,
      toolResults: users.at(-1)?.results ?? [],
      jsonMode: config.responseMimeType === 'application/json' && schema === undefined,
      images: sum(contents.map((content) => content.images)),
    };
    if (isRecord(schema)) prompt.jsonSchema = schema;
    const files = sum(contents.map((content) => content.files));
    if (files > 0) prompt.files = files;
    if (typeof config.maxOutputTokens === 'number') prompt.maxTokens = config.maxOutputTokens;
    if (Array.isArray(config.stopSequences))
      prompt.stopSequences = config.stopSequences.filter((x): x is string => typeof x === 'string');
    if (isRecord(config.thinkingConfig) && config.thinkingConfig.includeThoughts === true) prompt.thinking = true;
    return prompt;
  },

  completionBody(reply) {
    const completion = sum(reply.completionTokens);
    return {
      candidates: reply.texts.map((text, index) => ({
        content: {
          parts: [...thoughtParts(reply), ...(reply.toolCalls.length > 0 ? callParts(reply.toolCalls) : [{ text }])],
          role: 'model',
        },
        finishReason: reply.finish === 'length' ? 'MAX_TOKENS' : 'STOP',
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
    const completion = sum(reply.completionTokens);
    const partialUsage = { promptTokenCount: reply.promptTokens, totalTokenCount: reply.promptTokens };
    const finalUsage = {
      promptTokenCount: reply.promptTokens,
      candidatesTokenCount: completion,
      totalTokenCount: reply.promptTokens + completion,
    };
    const frame = (candidates: unknown[], usageMetadata: unknown): SseFrame => ({
      data: JSON.stringify({ candidates, usageMetadata, modelVersion: reply.model }),
    });
    if (reply.toolCalls.length > 0) {
      // Gemini sends calls whole: one frame with every call, then the finish reason alone.
      return [
        frame(
          reply.texts.map((_, index) => candidate(index, callParts(reply.toolCalls), false)),
          partialUsage,
        ),
        frame(
          reply.texts.map((_, index) => candidate(index, undefined, true)),
          finalUsage,
        ),
      ];
    }
    const pieces = reply.texts.map(streamPieces);
    const longest = Math.max(...pieces.map((p) => p.length));
    // Thoughts come whole, in a chunk of their own before the answer.
    const frames: SseFrame[] = reply.thinking
      ? [
          frame(
            reply.texts.map((_, index) => candidate(index, thoughtParts(reply), false)),
            partialUsage,
          ),
        ]
      : [];
    for (let i = 0; i < longest; i += 1) {
      const candidates: Record<string, unknown>[] = [];
      pieces.forEach((choicePieces, index) => {
        const piece = choicePieces[i];
        if (piece !== undefined)
          candidates.push(
            candidate(
              index,
              [{ text: piece }],
              i === choicePieces.length - 1,
              reply.finish === 'length' ? 'MAX_TOKENS' : 'STOP',
            ),
          );
      });
      // Early chunks carry usage without candidatesTokenCount, as upstream does.
      frames.push(frame(candidates, i === longest - 1 ? finalUsage : partialUsage));
    }
    return frames;
  },
};
