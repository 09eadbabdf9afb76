import { usageOf } from '../../chat/token-usage.ts';
import type { Usage } from '../../chat/types.ts';
import { UpstreamProtocolError, type ProviderEndpoint, type UpstreamHttpRequest } from '../types.ts';

/**
 * OpenAI's Responses API as a native upstream API (a provider with
 * `responses_api: native`): the client's body is forwarded to
 * `POST {base_url}/responses` as sent, but for the model id and the texts DLP
 * redacted; the reply (a `response` object or its event stream) comes back as
 * the upstream wrote it, but for the model id.
 */

/** Where a text sits in a Responses body: the keys and indexes from the body down to the string. */
export type TextPath = readonly (string | number)[];

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The texts of content parts: `input_text`, `output_text`, a refusal. */
function partTexts(parts: unknown, at: TextPath, out: TextPath[]): void {
  if (typeof parts === 'string') {
    out.push(at);
    return;
  }
  if (!Array.isArray(parts)) return;
  for (const [i, part] of parts.entries()) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string') out.push([...at, i, 'text']);
    if (typeof part.refusal === 'string') out.push([...at, i, 'refusal']);
  }
}

/**
 * Every text a person or a tool wrote in a Responses body, in order: the
 * instructions, the input (a string, message contents, function call
 * arguments and outputs, reasoning summaries). DLP screens them; encrypted
 * reasoning, ids and images are not text and pass untouched.
 */
export function textPaths(body: Json): TextPath[] {
  const out: TextPath[] = [];
  if (typeof body.instructions === 'string') out.push(['instructions']);
  const input = body.input;
  if (typeof input === 'string') out.push(['input']);
  if (!Array.isArray(input)) return out;
  for (const [i, item] of input.entries()) {
    if (!isObject(item)) continue;
    if (item.type === 'function_call' && typeof item.arguments === 'string') out.push(['input', i, 'arguments']);
    else if (item.type === 'function_call_output') partTexts(item.output, ['input', i, 'output'], out);
    else if (item.type === 'reasoning' && Array.isArray(item.summary))
      partTexts(item.summary, ['input', i, 'summary'], out);
    else if (item.type === undefined || item.type === null || item.type === 'message')
      partTexts(item.content, ['input', i, 'content'], out);
  }
  return out;
}

function at(body: unknown, path: TextPath): unknown {
  let node = body;
  for (const key of path) node = (node as Record<string | number, unknown>)[key];
  return node;
}

/** The texts at `paths`, in order. */
export function textsAt(body: Json, paths: readonly TextPath[]): string[] {
  return paths.map((path) => at(body, path) as string);
}

/** `body` with the texts at `paths` replaced by `texts` (the same order); `body` itself is left as it was. */
export function withTexts(body: Json, paths: readonly TextPath[], texts: readonly string[]): Json {
  const copy = structuredClone(body);
  for (const [i, path] of paths.entries()) {
    const parent = at(copy, path.slice(0, -1)) as Record<string | number, unknown>;
    parent[path.at(-1) as string | number] = texts[i];
  }
  return copy;
}

/** The upstream call: the body as the gateway forwards it, under the upstream's model id. */
export function responsesHttpRequest(
  body: Json,
  upstreamModel: string,
  endpoint: ProviderEndpoint,
): UpstreamHttpRequest {
  return {
    url: `${endpoint.baseUrl}/responses`,
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${endpoint.apiKey}`,
      accept: body.stream === true ? 'text/event-stream' : 'application/json',
    },
    body: JSON.stringify({ ...body, model: upstreamModel }),
  };
}

/** A `response` object's usage as the gateway counts tokens; undefined when it has none. */
export function responseUsage(response: unknown): Usage | undefined {
  const usage = isObject(response) ? response.usage : undefined;
  if (!isObject(usage) || typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number')
    return undefined;
  const input = usage.input_tokens_details as { cached_tokens?: unknown } | undefined;
  const output = usage.output_tokens_details as { reasoning_tokens?: unknown } | undefined;
  return usageOf({
    prompt: usage.input_tokens,
    completion: usage.output_tokens,
    ...(typeof input?.cached_tokens === 'number' ? { cachedRead: input.cached_tokens } : {}),
    ...(typeof output?.reasoning_tokens === 'number' ? { reasoning: output.reasoning_tokens } : {}),
  });
}

/** Events that end a Responses stream: the response's final state. */
const TERMINAL_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** What one upstream stream event is to the gateway. */
export type NativeEvent =
  | { kind: 'event'; json: string; terminal: boolean; usage?: Usage }
  | { kind: 'error'; message: string }
  /** A `data: [DONE]` line, which some compatible servers add after the terminal event. */
  | { kind: 'done' };

/**
 * One upstream event, with the response's model named as the client asked
 * (`model`). An `error` event is the upstream's mid-stream failure: the
 * gateway ends the stream with its own error event instead.
 */
export function nativeEvent(data: string, model: string): NativeEvent {
  if (data.trim() === '[DONE]') return { kind: 'done' };
  let event: Json;
  try {
    event = JSON.parse(data) as Json;
  } catch {
    throw new UpstreamProtocolError('a stream event is not JSON');
  }
  if (event.type === 'error') {
    const message =
      typeof event.message === 'string'
        ? event.message
        : isObject(event.error) && typeof event.error.message === 'string'
          ? event.error.message
          : 'unknown error';
    return { kind: 'error', message };
  }
  const response = event.response;
  if (!isObject(response)) return { kind: 'event', json: data, terminal: false };
  response.model = model;
  const terminal = TERMINAL_EVENTS.has(event.type as string);
  const usage = terminal ? responseUsage(response) : undefined;
  return { kind: 'event', json: JSON.stringify(event), terminal, ...(usage ? { usage } : {}) };
}
