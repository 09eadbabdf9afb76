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
 * A stream's `response` objects as JSON text. The request's part of the
 * object (its facts: tools, instructions, metadata ...) is the same in the
 * opening events and the closing one, so the closing object is the opening
 * one's text with its state members written in; each member is found by its
 * text, which cannot occur inside a string (a quote in a string is escaped)
 * nor inside a value that comes before it (`status`, `incomplete_details` and
 * `output` follow only our own values and strings; `usage` is followed only by
 * `metadata`, strings, and `user`, a string).
 */
export class ResponseJson {
  readonly facts: ResponseFacts;
  /** The in-progress object of the opening events. */
  readonly opening: string;
  readonly #pieces: string[] | undefined;

  constructor(facts: ResponseFacts) {
    this.facts = facts;
    this.opening = JSON.stringify(responseObject(facts, { status: 'in_progress', output: [] }));
    const members = [
      this.opening.indexOf(STATUS_MEMBER),
      this.opening.indexOf(INCOMPLETE_MEMBER),
      this.opening.indexOf(OUTPUT_MEMBERS),
      this.opening.lastIndexOf(USAGE_MEMBER),
    ];
    const ordered = members.every((at, i) => at >= 0 && (i === 0 || at > (members[i - 1] as number)));
    this.#pieces = ordered
      ? [
          this.opening.slice(0, members[0]),
          this.opening.slice((members[0] as number) + STATUS_MEMBER.length, members[1]),
          this.opening.slice((members[1] as number) + INCOMPLETE_MEMBER.length, members[2]),
          this.opening.slice((members[2] as number) + OUTPUT_MEMBERS.length, members[3]),
          this.opening.slice((members[3] as number) + USAGE_MEMBER.length),
        ]
      : undefined;
  }

  /**
   * The JSON text of `response`, an object responseObject() made of these
   * facts; `output` is the JSON text of its output items, serialized as they
   * were done.
   */
  closing(response: Record<string, unknown>, output: string): string {
    const p = this.#pieces;
    if (p === undefined || response.error !== null) return JSON.stringify(response);
    return (
      `${p[0]},"status":${JSON.stringify(response.status)},${p[1]},"incomplete_details":${JSON.stringify(response.incomplete_details)},` +
      `${p[2]},"output":${output},"output_text":${JSON.stringify(response.output_text)},` +
      `${p[3]},"usage":${JSON.stringify(response.usage)},"metadata":${p[4]}`
    );
  }
}

const STATUS_MEMBER = ',"status":"in_progress",';
const INCOMPLETE_MEMBER = ',"incomplete_details":null,';
const OUTPUT_MEMBERS = ',"output":[],"output_text":"",';
const USAGE_MEMBER = ',"usage":null,"metadata":';

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
