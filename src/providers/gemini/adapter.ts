import {
  maxOutputTokens,
  type ChatRequest,
  type FunctionTool,
  type JsonSchema,
  type ReplyMessage,
} from '../../chat/types.ts';
import { NO_TURNS_MESSAGE, toAlternatingTurns, toolResultProblem } from '../conversation-turns.ts';
import { anthropicOnlyParams } from '../inert-params.ts';
import {
  UpstreamProtocolError,
  type ParsedChoice,
  type ParsedCompletion,
  type ProviderAdapter,
  type ProviderEndpoint,
  type UpstreamHttpRequest,
} from '../types.ts';
import { contentsProblem, toContents } from './contents.ts';
import { toGeminiJsonSchema, type SchemaTranslation } from './json-schema.ts';
import { GeminiStreamDecoder } from './stream-decoder.ts';
import {
  candidateIndices,
  candidateText,
  candidateThoughts,
  candidateToolCalls,
  finalFinishReason,
  finishReasonOf,
  geminiErrorSchema,
  generateContentResponseSchema,
  isPromptBlocked,
  toUsage,
} from './wire.ts';

/**
 * Adapter for Google Gemini `generateContent` / `streamGenerateContent`
 * (provider_b), v1beta REST.
 */

/** Where the structured-output schema sits in the client's request, for messages. */
const RESPONSE_SCHEMA_FIELD = 'response_format.json_schema.schema';

/**
 * `FunctionDeclaration.name`: "Must start with a letter or an underscore";
 * OpenAI also allows a digit or a dash first.
 */
const FUNCTION_NAME_START = /^[A-Za-z_]/;

function parametersField(index: number): string {
  return `tools[${index}].function.parameters`;
}

/**
 * A tool's parameters as Gemini takes them. validate(), leftOut() and
 * buildRequest() each need them, for the same request object: translated
 * once per schema object (Claude Code declares a dozen tools on every call).
 */
const translatedParameters = new WeakMap<JsonSchema, { where: string; translation: SchemaTranslation }>();

function parametersOf(parameters: JsonSchema, index: number): SchemaTranslation {
  const where = parametersField(index);
  const known = translatedParameters.get(parameters);
  if (known?.where === where) return known.translation;
  const translation = toGeminiJsonSchema(parameters, where, 'parameters');
  translatedParameters.set(parameters, { where, translation });
  return translation;
}

/** `tools[].functionDeclarations[]`; parameters as JSON Schema, see json-schema.ts. */
function functionDeclaration(tool: FunctionTool, index: number): Record<string, unknown> {
  const { name, description, parameters } = tool.function;
  const declaration: Record<string, unknown> = { name };
  if (description !== undefined) declaration.description = description;
  if (parameters !== undefined) {
    const translated = parametersOf(parameters, index);
    declaration.parametersJsonSchema = 'schema' in translated ? translated.schema : parameters;
  }
  // `strict` has no counterpart in FunctionDeclaration and is not sent.
  return declaration;
}

/**
 * `toolConfig.functionCallingConfig`: `mode` AUTO / ANY / NONE, and
 * `allowedFunctionNames` (only valid with ANY) to force one function
 * (FunctionCallingConfig, function-calling guide). Left out when the client
 * chose nothing: AUTO is the default.
 */
function toolConfig(choice: NonNullable<ChatRequest['tool_choice']>): Record<string, unknown> {
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

/**
 * Structured outputs: `responseMimeType: application/json` is JSON mode;
 * with a schema, `responseJsonSchema` constrains the reply to it
 * (GenerationConfig; `responseSchema` must then be absent).
 */
function structuredOutput(format: NonNullable<ChatRequest['response_format']>, config: Record<string, unknown>): void {
  config.responseMimeType = 'application/json';
  if (format.type !== 'json_schema' || format.json_schema.schema === undefined) return;
  const translated = toGeminiJsonSchema(format.json_schema.schema, RESPONSE_SCHEMA_FIELD);
  const schema = 'schema' in translated ? translated.schema : format.json_schema.schema;
  // The format's description guides the model like a root description would; `name` has no counterpart.
  const description = format.json_schema.description;
  config.responseJsonSchema =
    description !== undefined && schema.description === undefined ? { ...schema, description } : schema;
}

/**
 * Extended thinking as `thinkingConfig.thinkingBudget` (thinking guide): a
 * budget of tokens, 0 to turn thinking off, -1 for the model's own choice
 * (dynamic thinking), which is what Anthropic's `adaptive` asks for. Thought
 * summaries are asked back (`includeThoughts`): they reach the client as
 * unsigned reasoning blocks (Responses reasoning items, Messages thinking
 * blocks), which no upstream is given back.
 */
function thinkingConfig(thinking: NonNullable<ChatRequest['thinking']>): Record<string, unknown> {
  if (thinking.type === 'disabled') return { thinkingBudget: 0 };
  // `display: omitted` asks for no reasoning text back.
  const includeThoughts = thinking.display !== 'omitted';
  if (thinking.type === 'enabled') return { thinkingBudget: thinking.budget_tokens, includeThoughts };
  return { thinkingBudget: -1, includeThoughts };
}

/** Builds the JSON body; exported for tests. */
function buildGeminiBody(req: ChatRequest): Record<string, unknown> {
  const conversation = toAlternatingTurns(req.messages);
  const body: Record<string, unknown> = { contents: toContents(conversation) };
  if (conversation.system !== undefined) body.systemInstruction = { parts: [{ text: conversation.system }] };
  if (req.tools !== undefined) body.tools = [{ functionDeclarations: req.tools.map(functionDeclaration) }];
  if (req.tool_choice !== undefined) body.toolConfig = toolConfig(req.tool_choice);

  const config: Record<string, unknown> = {};
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.top_p !== undefined) config.topP = req.top_p;
  if (req.top_k !== undefined) config.topK = req.top_k;
  if (req.thinking !== undefined) config.thinkingConfig = thinkingConfig(req.thinking);
  const maxTokens = maxOutputTokens(req);
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (req.n !== 1) config.candidateCount = req.n;
  if (req.stop !== undefined && req.stop.length > 0) config.stopSequences = req.stop;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.presence_penalty !== undefined) config.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) config.frequencyPenalty = req.frequency_penalty;
  if (req.response_format !== undefined) structuredOutput(req.response_format, config);
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

/** What of the tools and the output schema Gemini cannot take. */
function schemaProblem(req: ChatRequest): string | undefined {
  for (const [index, tool] of (req.tools ?? []).entries()) {
    const { name, parameters } = tool.function;
    if (!FUNCTION_NAME_START.test(name))
      return `tool name '${name}' must start with a letter or an underscore for provider_b.`;
    if (parameters === undefined) continue;
    const translated = parametersOf(parameters, index);
    if ('problem' in translated) return translated.problem;
  }
  const format = req.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema !== undefined) {
    const translated = toGeminiJsonSchema(format.json_schema.schema, RESPONSE_SCHEMA_FIELD);
    if ('problem' in translated) return translated.problem;
  }
  return undefined;
}

/** The Gemini adapter (stateless singleton). */
export const geminiAdapter: ProviderAdapter = {
  format: 'gemini',
  /** The public API; `/models/{model}:generateContent` is appended to it. */
  defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  supportsMultipleChoices: true,

  validate(req: ChatRequest): string | undefined {
    const conversation = toAlternatingTurns(req.messages);
    // Gemini takes the instructions apart and needs at least one turn.
    if (conversation.turns.length === 0) return NO_TURNS_MESSAGE;
    return toolResultProblem(conversation) ?? contentsProblem(conversation) ?? schemaProblem(req);
  },

  /**
   * What `generateContent` has no field for:
   * - `logprobs` / `top_logprobs`: Gemini's `responseLogprobs` reports another
   *   shape (`logprobsResult`), not translated;
   * - `user`, `metadata`, `store: true`: no per-request end-user id, metadata
   *   or stored completions;
   * - `parallel_tool_calls: false`: no switch to forbid parallel calls
   *   (`true` is what Gemini does anyway);
   * - `reasoning_effort`: thinking is set by `thinkingConfig.thinkingBudget`
   *   on Gemini 2.5 models and by `thinkingConfig.thinkingLevel` on Gemini 3+
   *   (which levels, per model), and sending the wrong one, or both, is a 400
   *   (thinking guide). Google's own OpenAI-compatible endpoint maps it
   *   knowing the model; this adapter cannot tell a model's generation from
   *   its name, so it reports the field rather than guess.
   * `service_tier` is the gateway's queuing hint, never unsupported.
   */
  unsupportedParams(req: ChatRequest): Array<keyof ChatRequest> {
    const unsupported: Array<keyof ChatRequest> = [];
    if (req.logprobs !== undefined) unsupported.push('logprobs');
    if (req.top_logprobs !== undefined) unsupported.push('top_logprobs');
    if (req.user !== undefined) unsupported.push('user');
    if (req.metadata !== undefined) unsupported.push('metadata');
    if (req.store === true) unsupported.push('store');
    if (req.parallel_tool_calls === false) unsupported.push('parallel_tool_calls');
    if (req.reasoning_effort !== undefined) unsupported.push('reasoning_effort');
    // Prompt-cache controls of the other formats (Gemini caches by itself, or through cachedContents).
    if (req.cache_control !== undefined) unsupported.push('cache_control');
    if (req.prompt_cache_key !== undefined) unsupported.push('prompt_cache_key');
    if (req.prompt_cache_retention !== undefined) unsupported.push('prompt_cache_retention');
    // Anthropic's effort: no Gemini counterpart, inert (dropped and named).
    if (req.effort !== undefined) unsupported.push('effort');
    unsupported.push(...anthropicOnlyParams(req));
    return unsupported;
  },

  /** Constraints of tool parameters Gemini has no keyword for, once each: `tools[].parameters.<keyword>`. */
  leftOut(req: ChatRequest): string[] {
    const keywords = new Set<string>();
    for (const [index, tool] of (req.tools ?? []).entries()) {
      if (tool.function.parameters === undefined) continue;
      const translated = parametersOf(tool.function.parameters, index);
      if ('leftOut' in translated) for (const keyword of translated.leftOut) keywords.add(keyword);
    }
    return [...keywords].map((keyword) => `tools[].parameters.${keyword}`);
  },

  buildRequest(req: ChatRequest, endpoint: ProviderEndpoint, options: { stream: boolean }): UpstreamHttpRequest {
    const model = encodeURIComponent(req.model);
    // The key goes in a header, never in the URL, so it cannot leak into logs of URLs.
    const url = options.stream
      ? `${endpoint.baseUrl}/models/${model}:streamGenerateContent?alt=sse`
      : `${endpoint.baseUrl}/models/${model}:generateContent`;
    return {
      url,
      headers: {
        'content-type': 'application/json',
        'x-goog-api-key': endpoint.apiKey,
        accept: options.stream ? 'text/event-stream' : 'application/json',
      },
      body: JSON.stringify(buildGeminiBody(req)),
    };
  },

  parseResponse(body: unknown): ParsedCompletion {
    const parsed = generateContentResponseSchema.safeParse(body);
    if (!parsed.success) {
      throw new UpstreamProtocolError(
        `Unexpected generateContent body from the Gemini upstream: ${parsed.error.message}`,
      );
    }
    const response = parsed.data;
    const usage = toUsage(response.usageMetadata);
    if (isPromptBlocked(response)) {
      // A blocked prompt is answered, not failed: one empty choice flagged
      // `content_filter`, the way OpenAI reports filtered output. The client
      // learns why without the gateway counting an upstream failure.
      return {
        choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }],
        usage,
      };
    }
    const candidates = response.candidates ?? [];
    if (candidates.length === 0) {
      throw new UpstreamProtocolError('The Gemini upstream returned no candidates and no block reason.');
    }
    const indices = candidateIndices(candidates);
    const choices: ParsedChoice[] = candidates.map((candidate, position) => {
      const text = candidateText(candidate);
      const calls = candidateToolCalls(candidate);
      // As OpenAI does, a reply that only calls tools has null content.
      const message: ReplyMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
      if (calls.length > 0) message.tool_calls = calls;
      const thoughts = candidateThoughts(candidate);
      // A thought summary is not signed (Gemini's signatures ride on its function calls): an unsigned block.
      if (thoughts !== '') message.thinking = [{ type: 'thinking', thinking: thoughts, signature: '' }];
      return {
        index: indices[position] ?? position,
        message,
        finish_reason: finalFinishReason(finishReasonOf(candidate) ?? 'stop', calls.length > 0),
      };
    });
    choices.sort((a, b) => a.index - b.index);
    return { choices, usage };
  },

  createStreamDecoder() {
    return new GeminiStreamDecoder();
  },

  extractErrorMessage(body: unknown): string | undefined {
    // Errors of the array-framed stream (`alt=json`) come wrapped in a list.
    const candidate = Array.isArray(body) ? body[0] : body;
    const parsed = geminiErrorSchema.safeParse(candidate);
    return parsed.success ? parsed.data.error.message : undefined;
  },
};
