import type { ChatCompletion, FinishReason, ReplyMessage, ToolCall, GatewayCacheMark } from '../../chat/types.ts';
import { newItemId } from './ids.ts';
import { reasoningItem, type ReasoningItem } from './reasoning-items.ts';

/**
 * The Responses `response` object, built from the pipeline's chat-shaped
 * reply. Output items: one `reasoning` item per reasoning block of the
 * upstream, the assistant's text as one `message` item with one
 * `output_text` part (or a `refusal` part), then one `function_call` item per
 * tool call, its `call_id` the chat tool call's id.
 */

/** What a response echoes of its request, fixed when the request is decoded. */
export interface ResponseFacts {
  id: string;
  created_at: number;
  model: string;
  instructions: string | null;
  tools: Array<Record<string, unknown>>;
  tool_choice: unknown;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  user: string | undefined;
  store: boolean;
  previous_response_id: string | null;
  text: { format: Record<string, unknown>; verbosity?: string };
  reasoning: { effort: string | null; summary: string | null };
  service_tier: string;
  truncation: string;
}

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}

export interface MessageItem {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: Array<OutputTextPart | RefusalPart>;
}

export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem;

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** Present when the gateway's own cache served the reply (nothing was charged for it). */
  gateway_cache?: GatewayCacheMark;
}

/** Chat usage as upstreams send it; the details are present only where the upstream reports them. */
export interface ChatUsageJson {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  gateway_cache?: GatewayCacheMark;
}

export function responseUsage(usage: ChatUsageJson): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
    ...(usage.gateway_cache ? { gateway_cache: usage.gateway_cache } : {}),
  };
}

/** `completed`, or `incomplete` with OpenAI's reason for a reply cut by the token budget or a content filter. */
export function statusOf(finish: FinishReason | null): {
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
} {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

function functionCallItem(call: ToolCall, status: FunctionCallItem['status']): FunctionCallItem {
  return {
    type: 'function_call',
    id: newItemId('fc'),
    call_id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
    status,
  };
}

/** The output items of one reply message. */
function outputItems(message: ReplyMessage, status: 'completed' | 'incomplete'): OutputItem[] {
  // The upstream's reasoning comes first, as it did in the reply.
  const items: OutputItem[] = (message.thinking ?? []).map(reasoningItem);
  const content: MessageItem['content'] = [];
  if (message.content !== null && message.content !== '')
    content.push({ type: 'output_text', text: message.content, annotations: [], logprobs: [] });
  if (message.refusal != null && message.refusal !== '') content.push({ type: 'refusal', refusal: message.refusal });
  if (content.length > 0) items.push({ type: 'message', id: newItemId('msg'), status, role: 'assistant', content });
  for (const call of message.tool_calls ?? []) items.push(functionCallItem(call, status));
  return items;
}

/** The concatenated text of the output's `output_text` parts, as the SDKs' `output_text`. */
function outputText(output: readonly OutputItem[]): string {
  let text = '';
  for (const item of output) {
    if (item.type !== 'message') continue;
    for (const part of item.content) if (part.type === 'output_text') text += part.text;
  }
  return text;
}

export interface ResponseState {
  status: ResponseStatus;
  output: OutputItem[];
  incomplete_details?: { reason: string } | null;
  usage?: ResponseUsage | null;
  error?: { code: string; message: string } | null;
}

/** The whole `response` object. */
export function responseObject(facts: ResponseFacts, state: ResponseState): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: facts.id,
    object: 'response',
    created_at: facts.created_at,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    instructions: facts.instructions,
    max_output_tokens: facts.max_output_tokens,
    max_tool_calls: null,
    model: facts.model,
    output: state.output,
    output_text: outputText(state.output),
    parallel_tool_calls: facts.parallel_tool_calls,
    previous_response_id: facts.previous_response_id,
    reasoning: facts.reasoning,
    service_tier: facts.service_tier,
    store: facts.store,
    temperature: facts.temperature,
    text: facts.text,
    tool_choice: facts.tool_choice,
    tools: facts.tools,
    top_p: facts.top_p,
    truncation: facts.truncation,
    usage: state.usage ?? null,
    metadata: facts.metadata,
  };
  if (facts.user !== undefined) body.user = facts.user;
  return body;
}

/**
 * A stream's `response` objects as JSON text, written member by member in
 * responseObject()'s order: the request's part of the object (its facts:
 * tools, instructions, metadata ...) is serialized once, for the opening
 * events and the closing one, and only the state members (status,
 * incomplete_details, output, output_text, usage) are written per object.
 * The text is the one JSON.stringify makes of responseObject() (a test holds
 * them equal), without building and walking the whole object per event.
 */
export class ResponseJson {
  /** The in-progress object of the opening events. */
  readonly opening: string;
  /** The members before `status`, between `incomplete_details` and `output`, between `output_text` and `usage`, and after `usage`. */
  readonly #head: string;
  readonly #middle: string;
  readonly #tail: string;
  readonly #end: string;

  constructor(facts: ResponseFacts) {
    const json = JSON.stringify;
    this.#head = `{"id":${json(facts.id)},"object":"response","created_at":${json(facts.created_at)}`;
    this.#middle = `,"instructions":${json(facts.instructions)},"max_output_tokens":${json(facts.max_output_tokens)},"max_tool_calls":null,"model":${json(facts.model)}`;
    this.#tail =
      `,"parallel_tool_calls":${json(facts.parallel_tool_calls)},"previous_response_id":${json(facts.previous_response_id)}` +
      `,"reasoning":${json(facts.reasoning)},"service_tier":${json(facts.service_tier)},"store":${json(facts.store)}` +
      `,"temperature":${json(facts.temperature)},"text":${json(facts.text)},"tool_choice":${json(facts.tool_choice)}` +
      `,"tools":${json(facts.tools)},"top_p":${json(facts.top_p)},"truncation":${json(facts.truncation)}`;
    this.#end = `,"metadata":${json(facts.metadata)}${facts.user !== undefined ? `,"user":${json(facts.user)}` : ''}}`;
    this.opening = this.#text('"in_progress"', 'null', '[]', '""', 'null');
  }

  #text(status: string, incomplete: string, output: string, outputText: string, usage: string): string {
    return (
      `${this.#head},"status":${status},"background":false,"error":null,"incomplete_details":${incomplete}${this.#middle}` +
      `,"output":${output},"output_text":${outputText}${this.#tail},"usage":${usage}${this.#end}`
    );
  }

  /**
   * The JSON text of `response`, an object responseObject() made of these
   * facts; `output` is the JSON text of its output items, serialized as they
   * were done.
   */
  closing(response: Record<string, unknown>, output: string): string {
    if (response.error !== null) return JSON.stringify(response);
    return this.#text(
      JSON.stringify(response.status),
      JSON.stringify(response.incomplete_details),
      output,
      JSON.stringify(response.output_text),
      JSON.stringify(response.usage),
    );
  }
}

/** The response of a non-streamed chat completion. */
export function responseFromCompletion(
  facts: ResponseFacts,
  completion: ChatCompletion & { usage: ChatUsageJson },
): Record<string, unknown> {
  const choice = completion.choices[0];
  const { status, incomplete_details } = statusOf(choice?.finish_reason ?? 'stop');
  const output = choice ? outputItems(choice.message, status === 'completed' ? 'completed' : 'incomplete') : [];
  // The model that answered: a fallback's when the requested one's deployments failed.
  return responseObject(
    { ...facts, model: completion.model || facts.model },
    { status, incomplete_details, output, usage: responseUsage(completion.usage) },
  );
}
