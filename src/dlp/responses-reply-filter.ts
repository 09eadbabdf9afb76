import type { ReplyFilter, ReplyScreen } from './reply-filter.ts';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The streamed texts of a Responses stream: the delta event, its done event and the done event's text field. */
const STREAMED: Record<string, { done: string; field: string; json: boolean }> = {
  'response.output_text.delta': { done: 'response.output_text.done', field: 'text', json: false },
  'response.refusal.delta': { done: 'response.refusal.done', field: 'refusal', json: false },
  'response.function_call_arguments.delta': {
    done: 'response.function_call_arguments.done',
    field: 'arguments',
    json: true,
  },
  'response.reasoning_summary_text.delta': { done: 'response.reasoning_summary_text.done', field: 'text', json: false },
};
const DONE = new Map(Object.entries(STREAMED).map(([delta, spec]) => [spec.done, { delta, ...spec }]));

/** Events whose `response` is the response so far (its final state for the last three). */
const RESPONSE_EVENTS = new Set([
  'response.created',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

/** The key of one streamed text: its kind, output item and part (content or summary index). */
function keyOf(kind: string, event: Json): string {
  const part = event.content_index ?? event.summary_index ?? 0;
  return `${kind}:${String(event.output_index)}:${String(part)}`;
}

/**
 * DLP on the replies of a native Responses upstream (`responses_api: native`):
 * the {@link ReplyFilter} of the exchange applied to what a person or a tool
 * reads in a `response` object, its output texts and refusals, function call
 * arguments and reasoning summaries (and `output_text` where the upstream
 * writes it). Streamed, each text's deltas are held back and released as the
 * chat path holds a choice's content; its done event first releases what is
 * held (as one more delta) and then carries the text the client was sent, as
 * do the part, item and final `response` that repeat it.
 */
export class ResponsesReplyFilter implements ReplyScreen {
  private readonly filter: ReplyFilter;
  /** The same filter on a chat reply (a native request a translated deployment answered). */
  readonly chat: ReplyFilter;
  /** Text sent so far per streamed text (see {@link keyOf}). */
  private readonly sent = new Map<string, string>();

  constructor(filter: ReplyFilter) {
    this.filter = filter;
    this.chat = filter;
  }

  async completionAsync(json: string): Promise<string> {
    const response = JSON.parse(json) as Json;
    await this.response(response);
    return JSON.stringify(response);
  }

  async chunkAsync(json: string): Promise<string> {
    const event = JSON.parse(json) as Json;
    const type = String(event.type);
    const streamed = STREAMED[type];
    if (streamed) {
      const key = keyOf(type, event);
      const delta = await this.filter.pieceAsync(key, String(event.delta ?? ''), false, streamed.json);
      this.sent.set(key, (this.sent.get(key) ?? '') + delta);
      if (delta === '') return '';
      return JSON.stringify({ ...event, delta });
    }
    const done = DONE.get(type);
    if (done) {
      const key = keyOf(done.delta, event);
      const seen = this.sent.has(key);
      // Without deltas (an upstream that sends only the done event) the whole text is filtered here.
      const rest = await this.filter.pieceAsync(key, seen ? '' : String(event[done.field] ?? ''), true, done.json);
      const text = (this.sent.get(key) ?? '') + rest;
      this.sent.set(key, text);
      const lines = [JSON.stringify({ ...event, [done.field]: text })];
      if (seen && rest !== '') {
        const { [done.field]: _text, sequence_number: _seq, ...fields } = event;
        lines.unshift(JSON.stringify({ ...fields, type: done.delta, delta: rest }));
      }
      return lines.join('\n');
    }
    if (type === 'response.content_part.done' && isObject(event.part))
      await this.part(
        event.part,
        Number(event.output_index),
        Number(event.content_index),
        'response.output_text.delta',
      );
    else if (type === 'response.reasoning_summary_part.done' && isObject(event.part))
      await this.part(
        event.part,
        Number(event.output_index),
        Number(event.summary_index),
        'response.reasoning_summary_text.delta',
      );
    else if (type === 'response.output_item.done' && isObject(event.item))
      await this.item(event.item, Number(event.output_index));
    else if (RESPONSE_EVENTS.has(type) && isObject(event.response)) await this.response(event.response);
    return JSON.stringify(event);
  }

  async flushAsync(): Promise<string[]> {
    return [];
  }

  private async response(response: Json): Promise<void> {
    if (Array.isArray(response.output))
      for (const [i, item] of response.output.entries()) if (isObject(item)) await this.item(item, i);
    if (typeof response.output_text === 'string') {
      const output = Array.isArray(response.output) ? response.output : [];
      const texts = output.flatMap((item: unknown) =>
        isObject(item) && item.type === 'message' && Array.isArray(item.content)
          ? item.content.flatMap((part: unknown) =>
              isObject(part) && part.type === 'output_text' && typeof part.text === 'string' ? [part.text] : [],
            )
          : [],
      );
      response.output_text = texts.length > 0 ? texts.join('') : await this.filter.textAsync(response.output_text);
    }
  }

  private async item(item: Json, index: number): Promise<void> {
    if (item.type === 'function_call' && typeof item.arguments === 'string')
      item.arguments = await this.text(`response.function_call_arguments.delta:${index}:0`, item.arguments, true);
    const parts = item.type === 'reasoning' ? item.summary : item.type === 'message' ? item.content : undefined;
    if (!Array.isArray(parts)) return;
    const kind = item.type === 'reasoning' ? 'response.reasoning_summary_text.delta' : 'response.output_text.delta';
    for (const [i, part] of parts.entries()) if (isObject(part)) await this.part(part, index, i, kind);
  }

  private async part(part: Json, index: number, partIndex: number, kind: string): Promise<void> {
    if (typeof part.text === 'string') part.text = await this.text(`${kind}:${index}:${partIndex}`, part.text);
    if (typeof part.refusal === 'string')
      part.refusal = await this.text(`response.refusal.delta:${index}:${partIndex}`, part.refusal);
  }

  /** The text the client was sent under `key` when it was streamed, else `text` filtered whole. */
  private async text(key: string, text: string, json = false): Promise<string> {
    return this.sent.get(key) ?? (await this.filter.textAsync(text, json));
  }
}
