import type {
  ChatMessage,
  ChatRequest,
  FunctionTool,
  ReasoningEffort,
  ThinkingConfig,
  ToolChoice,
} from '../../chat/types.ts';
import { InvalidRequestError, NotFoundError, toEnvelope, type GatewayError } from '../../errors/catalog.ts';
import {
  CHAT_JOB,
  type Door,
  type DoorRequest,
  type JobKind,
  type ReplyCodec,
  type ResponsesFallback,
} from '../../pipeline/door.ts';
import { textPaths, textsAt } from '../../providers/openai/responses-api.ts';
import type { WireFormat } from '../../providers/types.ts';
import { newResponseId } from './ids.ts';
import { inputToMessages } from './input-items.ts';
import { NativeResponsesCodec } from './native-codec.ts';
import { ResponsesReplyCodec } from './reply-codec.ts';
import { parseResponsesBody, type ResponsesRequestBody } from './request-schema.ts';
import type { ResponseFacts } from './response-object.ts';
import type { ResponseStore } from './response-store.ts';

/** Options of {@link ResponsesDoor}. */
export interface ResponsesDoorOptions {
  /** Stored responses; without it `store` keeps nothing and `previous_response_id` is a 400. @defaultValue none */
  store?: ResponseStore;
  /**
   * The wire format serving a model, when known: `reasoning.effort` is
   * forwarded to OpenAI-format upstreams only (the others answer a 400 for
   * it, and clients such as Codex send it on every request). @defaultValue none: never forwarded
   */
  formatOf?: (model: string) => WireFormat | undefined;
  /**
   * The provider of a model when it takes the Responses API natively
   * (`responses_api: native`): its requests are forwarded as sent, its
   * replies passed through, the ids of the responses it keeps recorded as the
   * key owner's. @defaultValue none: every request is translated
   */
  nativeOf?: (model: string) => string | undefined;
  /** Clock, epoch ms. @defaultValue Date.now */
  now?: () => number;
  /**
   * Told when a reply could not be stored (the database is down): the client
   * still gets its answer, a later retrieve or `previous_response_id` a 404.
   * @defaultValue none: the failure reaches the caller of `keep()`
   */
  onStoreError?: (err: Error, responseId: string) => void;
}

/** What decode() learnt that the canonical request does not carry, kept until reply(). */
type Decoded =
  | {
      facts: ResponseFacts;
      owner: string;
      /** How many of the request's last messages are this request's own input. */
      inputCount: number;
    }
  | {
      native: Extract<JobKind, { type: 'responses' }>;
      owner: string;
      provider: string;
      model: string;
      answer: NativeAnswer;
    };

/** Which deployment answers a native request: the codec to switch, and the facts of a translation made for a fallback. */
interface NativeAnswer {
  codec?: AnsweredCodec;
  /** The last translation made (the fallback being tried); used when a translated deployment answers. */
  pending?: { facts: ResponseFacts; inputCount: number };
}

/**
 * The codec of a native request's reply: the native codec, until the
 * dispatch step says another deployment answers (another native provider
 * entry, whose id is recorded as that provider's, or a translated one,
 * whose chat reply is encoded as a translated request's).
 */
class AnsweredCodec implements ReplyCodec {
  private current: ReplyCodec;
  private readonly codecFor: (by: AnsweredBy) => ReplyCodec;

  constructor(native: NativeResponsesCodec, codecFor: (by: AnsweredBy) => ReplyCodec) {
    this.current = native;
    this.codecFor = codecFor;
  }

  answered(by: AnsweredBy): void {
    this.current = this.codecFor(by);
  }

  completion(json: string): string {
    return this.current.completion(json);
  }

  chunk(json: string): string {
    return this.current.chunk(json);
  }

  end(): string {
    return this.current.end();
  }

  fail(err: GatewayError, requestId: string): string {
    return this.current.fail(err, requestId);
  }

  async keep(sent?: ChatRequest): Promise<void> {
    await this.current.keep?.(sent);
  }

  replay(stored: string): ReturnType<NonNullable<ReplyCodec['replay']>> {
    // Only native replies are cached under a native request's key.
    return (this.current as NativeResponsesCodec).replay(stored);
  }
}

type AnsweredBy = Parameters<ResponsesFallback['answered']>[0];

function toolsOf(body: ResponsesRequestBody): FunctionTool[] {
  const tools: FunctionTool[] = [];
  for (const [i, tool] of (body.tools ?? []).entries()) {
    if (tool.type !== 'function' || !('name' in tool)) {
      throw new InvalidRequestError(
        `tools.${i}: the built-in tool '${String(tool.type).slice(0, 64)}' is not served by this gateway; only function tools are.`,
      );
    }
    const fn: FunctionTool['function'] = { name: tool.name as string };
    const t = tool as {
      description?: string | null;
      parameters?: Record<string, unknown> | null;
      strict?: boolean | null;
    };
    if (t.description != null) fn.description = t.description;
    if (t.parameters != null) fn.parameters = t.parameters;
    if (t.strict != null) fn.strict = t.strict;
    if (tools.some((other) => other.function.name === fn.name))
      throw new InvalidRequestError(`tools.${i}.name: duplicate tool name.`);
    tools.push({ type: 'function', function: fn });
  }
  return tools;
}

function toolChoiceOf(body: ResponsesRequestBody, tools: readonly FunctionTool[]): ToolChoice | undefined {
  const choice = body.tool_choice;
  if (choice == null) return undefined;
  if (typeof choice === 'string') {
    if (choice === 'required' && tools.length === 0)
      throw new InvalidRequestError("tool_choice: 'required' needs a non-empty 'tools' list.");
    return choice;
  }
  if (choice.type === 'function' && typeof choice.name !== 'string')
    throw new InvalidRequestError("tool_choice: a function choice needs its 'name'.");
  if (choice.type !== 'function' || typeof choice.name !== 'string') {
    throw new InvalidRequestError(
      `tool_choice: '${String(choice.type).slice(0, 64)}' is not served by this gateway; use 'none', 'auto', 'required' or a function.`,
    );
  }
  const name = choice.name;
  if (!tools.some((t) => t.function.name === name))
    throw new InvalidRequestError(`tool_choice: names '${name.slice(0, 64)}', which is not in 'tools'.`);
  return { type: 'function', function: { name } };
}

function effortOf(effort: string | null | undefined): ReasoningEffort | undefined {
  if (effort == null || effort === 'none') return undefined;
  // The canonical model stops at 'high'.
  return effort === 'xhigh' ? 'high' : (effort as ReasoningEffort);
}

/** Thinking budgets by `reasoning.effort` (1024 is Anthropic's least). */
const THINKING_BUDGETS: Record<string, number> = {
  minimal: 1024,
  low: 1024,
  medium: 4096,
  high: 16_384,
  xhigh: 32_768,
};

/** Output tokens left for the answer beside the thinking budget when the client set no `max_output_tokens`. */
const ANSWER_TOKENS = 4096;

/**
 * Extended thinking for an Anthropic- or Gemini-format upstream, asked when
 * the client asked for a reasoning summary (`reasoning.summary`): its
 * thinking blocks or thought summaries come back as reasoning items. The
 * budget follows `reasoning.effort` (medium when absent). For Anthropic it
 * stays below `max_output_tokens`, as the API requires, and there is none
 * when that leaves less than the least budget, or when `temperature` or
 * `top_p` is set (the API refuses them with thinking).
 */
function thinkingOf(
  body: ResponsesRequestBody,
  format: 'anthropic' | 'gemini',
): Extract<ThinkingConfig, { type: 'enabled' }> | undefined {
  const reasoning = body.reasoning;
  if (reasoning?.summary == null && reasoning?.generate_summary == null) return undefined;
  if (reasoning.effort === 'none') return undefined;
  let budget = THINKING_BUDGETS[reasoning.effort ?? 'medium'] ?? 4096;
  if (format === 'gemini') return { type: 'enabled', budget_tokens: budget };
  if (body.temperature != null || body.top_p != null) return undefined;
  if (body.max_output_tokens != null) budget = Math.min(budget, body.max_output_tokens - 1);
  return budget >= 1024 ? { type: 'enabled', budget_tokens: budget } : undefined;
}

/**
 * The Responses door (`POST /v1/responses`): OpenAI's Responses request
 * decoded into the canonical chat request (instructions as the system
 * message, earlier turns of `previous_response_id` before the input, function
 * tools, `text.format` as `response_format`), and the reply encoded as a
 * `response` object or its event stream by {@link ResponsesReplyCodec}.
 */
export class ResponsesDoor implements Door {
  readonly name = 'responses';
  private readonly store: ResponseStore | undefined;
  private readonly formatOf: (model: string) => WireFormat | undefined;
  private readonly nativeOf: (model: string) => string | undefined;
  private readonly now: () => number;
  private readonly onStoreError: ResponsesDoorOptions['onStoreError'];
  /** Facts of requests between decode() and reply(), by the request object the pipeline hands to both. */
  private readonly decoded = new WeakMap<DoorRequest, Decoded>();

  constructor(options: ResponsesDoorOptions = {}) {
    this.store = options.store;
    this.formatOf = options.formatOf ?? (() => undefined);
    this.nativeOf = options.nativeOf ?? (() => undefined);
    this.now = options.now ?? Date.now;
    this.onStoreError = options.onStoreError;
  }

  async decode(from: DoorRequest): Promise<ChatRequest> {
    const body = parseResponsesBody(from.body);
    const nativeProvider = this.nativeOf(body.model);
    if (nativeProvider !== undefined && !(await this.continuesTranslated(body, from.owner)))
      return this.decodeNative(from, body, nativeProvider);
    let earlier: ChatMessage[] = [];
    const previous = body.previous_response_id ?? null;
    if (previous !== null) {
      if (!this.store) throw new InvalidRequestError('previous_response_id: this gateway keeps no responses.');
      earlier = await this.store.conversation(previous, from.owner);
    }
    const { request, facts, inputCount } = this.translate(body, earlier, this.formatOf(body.model));
    this.decoded.set(from, { facts, owner: from.owner, inputCount });
    return request;
  }

  /**
   * Whether a request for a native model continues a response the gateway
   * stored itself (a translated deployment answered it): it is then
   * translated too, from the stored turns, since no upstream knows that id.
   */
  private async continuesTranslated(body: ResponsesRequestBody, owner: string): Promise<boolean> {
    const previous = body.previous_response_id ?? null;
    if (previous === null || !this.store || (await this.store.native(previous, owner))) return false;
    return this.store.get(previous, owner).then(
      () => true,
      (err: unknown) => {
        if (err instanceof NotFoundError) return false;
        throw err;
      },
    );
  }

  /** The canonical request of a Responses body (after the stored turns `earlier`), for an upstream of `format`, and the facts of its reply. */
  private translate(
    body: ResponsesRequestBody,
    earlier: ChatMessage[],
    format: WireFormat | undefined,
  ): { request: ChatRequest; facts: ResponseFacts; inputCount: number } {
    const tools = toolsOf(body);
    const toolChoice = toolChoiceOf(body, tools);
    const input = inputToMessages(body.input);
    if (input.length === 0)
      throw new InvalidRequestError('input: needs at least one message or item the upstream can read.');
    const previous = body.previous_response_id ?? null;
    // Instructions apply to this request only: an earlier response's instructions are not carried over, as at OpenAI.
    const system: ChatMessage[] =
      body.instructions != null && body.instructions !== '' ? [{ role: 'system', content: body.instructions }] : [];
    const stream = body.stream ?? false;
    const request: ChatRequest = {
      model: body.model,
      messages: [...system, ...earlier, ...input],
      n: 1,
      stream,
      include_usage: stream,
    };
    if (body.max_output_tokens != null) request.max_completion_tokens = body.max_output_tokens;
    if (body.temperature != null) request.temperature = body.temperature;
    if (body.top_p != null) request.top_p = body.top_p;
    if (body.service_tier != null) request.service_tier = body.service_tier;
    if (tools.length > 0) {
      request.tools = tools;
      if (toolChoice !== undefined) request.tool_choice = toolChoice;
      if (body.parallel_tool_calls != null) request.parallel_tool_calls = body.parallel_tool_calls;
    }
    const textFormat = body.text?.format;
    if (textFormat?.type === 'json_object') request.response_format = { type: 'json_object' };
    if (textFormat?.type === 'json_schema') {
      const spec: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean } = {
        name: textFormat.name,
        schema: textFormat.schema,
      };
      if (textFormat.description != null) spec.description = textFormat.description;
      if (textFormat.strict != null) spec.strict = textFormat.strict;
      request.response_format = { type: 'json_schema', json_schema: spec };
    }
    const effort = effortOf(body.reasoning?.effort);
    if (effort !== undefined && format === 'openai') request.reasoning_effort = effort;
    const thinking = format === 'anthropic' || format === 'gemini' ? thinkingOf(body, format) : undefined;
    if (thinking) {
      request.thinking = thinking;
      // Anthropic counts the thinking in max_tokens: the answer's room comes on top of the budget when the client set no limit.
      if (format === 'anthropic' && body.max_output_tokens == null)
        request.max_completion_tokens = thinking.budget_tokens + ANSWER_TOKENS;
    }

    const facts: ResponseFacts = {
      id: newResponseId(),
      created_at: Math.floor(this.now() / 1000),
      model: body.model,
      instructions: body.instructions ?? null,
      tools: (body.tools ?? []).map((tool) => ({ strict: null, description: null, parameters: null, ...tool })),
      tool_choice: body.tool_choice ?? 'auto',
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      temperature: body.temperature ?? null,
      top_p: body.top_p ?? null,
      max_output_tokens: body.max_output_tokens ?? null,
      metadata: body.metadata ?? {},
      user: body.user ?? undefined,
      store: body.store ?? true,
      previous_response_id: previous,
      text:
        body.text?.verbosity != null
          ? { format: body.text.format ?? { type: 'text' }, verbosity: body.text.verbosity }
          : { format: body.text?.format ?? { type: 'text' } },
      reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
      service_tier: body.service_tier ?? 'default',
      truncation: body.truncation ?? 'disabled',
    };
    return { request, facts, inputCount: input.length };
  }

  /**
   * A request for an upstream that takes the Responses API natively: the
   * body, checked by the same schema, is forwarded as the client sent it
   * (built-in tools, reasoning items, `include`, the upstream's own
   * `previous_response_id` and `store`). The canonical request the pipeline
   * carries holds its texts, one user message each, for DLP and the governor.
   * A `previous_response_id` must name one of the key owner's native
   * responses (recorded when it was made): any other is a 404 here.
   */
  private async decodeNative(from: DoorRequest, body: ResponsesRequestBody, provider: string): Promise<ChatRequest> {
    const previous = body.previous_response_id ?? null;
    if (previous !== null && this.store && !(await this.store.native(previous, from.owner)))
      throw new NotFoundError(`Previous response with id '${previous.slice(0, 64)}' not found.`);
    const raw = from.body as Record<string, unknown>;
    const paths = textPaths(raw);
    const answer: NativeAnswer = {};
    const fallback: ResponsesFallback = {
      translate: (screened, format) => {
        if (previous !== null)
          throw new InvalidRequestError(
            'previous_response_id: names a response kept by the native upstream, which another deployment cannot continue.',
          );
        const translated = this.translate(parseResponsesBody(screened), [], format);
        answer.pending = { facts: translated.facts, inputCount: translated.inputCount };
        return translated.request;
      },
      answered: (by) => answer.codec?.answered(by),
    };
    this.decoded.set(from, {
      native: { type: 'responses', body: raw, paths, fallback },
      owner: from.owner,
      provider,
      model: body.model,
      answer,
    });
    const stream = body.stream ?? false;
    const request: ChatRequest = {
      model: body.model,
      messages: textsAt(raw, paths).map((text) => ({ role: 'user', content: text })),
      n: 1,
      stream,
      include_usage: stream,
    };
    if (body.max_output_tokens != null) request.max_completion_tokens = body.max_output_tokens;
    if (body.service_tier != null) request.service_tier = body.service_tier;
    return request;
  }

  jobKind(from: DoorRequest): JobKind {
    const decoded = this.decoded.get(from);
    return decoded && 'native' in decoded ? decoded.native : CHAT_JOB;
  }

  reply(request: ChatRequest, from?: DoorRequest): ReplyCodec {
    const decoded = from ? this.decoded.get(from) : undefined;
    if (!decoded) return new ResponsesReplyCodec(factsOf(request, this.now()));
    if (from) this.decoded.delete(from);
    if ('native' in decoded) {
      const { owner, provider, model, answer } = decoded;
      const codec = new AnsweredCodec(this.nativeCodec(owner, provider, model), (by) => {
        if (!by.translated) return this.nativeCodec(owner, by.provider, by.model);
        const pending = answer.pending as NonNullable<NativeAnswer['pending']>;
        return this.translatedCodec(pending.facts, owner, pending.inputCount, by.translated);
      });
      answer.codec = codec;
      return codec;
    }
    const { facts, owner, inputCount } = decoded;
    return this.translatedCodec(facts, owner, inputCount, request);
  }

  private nativeCodec(owner: string, provider: string, model: string): NativeResponsesCodec {
    if (!this.store) return new NativeResponsesCodec();
    return new NativeResponsesCodec({
      store: this.store,
      owner,
      provider,
      model,
      ...(this.onStoreError ? { onError: this.onStoreError } : {}),
    });
  }

  private translatedCodec(
    facts: ResponseFacts,
    owner: string,
    inputCount: number,
    request: ChatRequest,
  ): ResponsesReplyCodec {
    if (!facts.store || !this.store) return new ResponsesReplyCodec(facts);
    return new ResponsesReplyCodec(facts, {
      store: this.store,
      owner,
      inputCount,
      request,
      ...(this.onStoreError ? { onError: this.onStoreError } : {}),
    });
  }

  error(err: GatewayError, requestId: string): { status: number; body: unknown } {
    const envelope = toEnvelope(err, requestId);
    return { status: err.status, body: { ...envelope, error: { ...envelope.error, param: null } } };
  }
}

/** Facts of a request decode() did not see (a pipeline that does not pass it along): nothing is stored. */
function factsOf(request: ChatRequest, nowMs: number): ResponseFacts {
  return {
    id: newResponseId(),
    created_at: Math.floor(nowMs / 1000),
    model: request.model,
    instructions: null,
    tools: (request.tools ?? []).map((t) => ({ type: 'function', ...t.function })),
    tool_choice: request.tool_choice ?? 'auto',
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    temperature: request.temperature ?? null,
    top_p: request.top_p ?? null,
    max_output_tokens: request.max_completion_tokens ?? null,
    metadata: {},
    user: undefined,
    store: false,
    previous_response_id: null,
    text: { format: { type: 'text' } },
    reasoning: { effort: null, summary: null },
    service_tier: request.service_tier ?? 'default',
    truncation: 'disabled',
  };
}
