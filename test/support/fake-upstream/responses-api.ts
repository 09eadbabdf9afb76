import type { Untyped } from '../untyped.ts';

/**
 * OpenAI's Responses API as the fake OpenAI-format upstream serves it
 * (`POST /v1/responses`), for the gateway's native Responses mode. A reasoning
 * model's reply: a `reasoning` item (its summary `Thinking about: <text>`, and
 * `encrypted_content` when `include` asks for `reasoning.encrypted_content`),
 * then a `message` item `Echo: <text>`, where text is the last user text.
 * Responses are kept (unless `store: false`) so that `previous_response_id`
 * works as upstream state: an unknown one is OpenAI's 404. Streams follow
 * OpenAI's event grammar with `sequence_number` from 0.
 */

type Json = Record<string, Untyped>;

/** Answer of {@link FakeResponsesApi.create}: the response, or an error status and OpenAI's error body. */
export type ResponsesOutcome = { response: Json } | { status: number; error: Json };

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The last user text of `input`: the string, or the last user message's text (its string or `input_text` parts). */
function lastUserText(input: unknown): string | undefined {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return undefined;
  for (const item of [...input].reverse()) {
    if (item?.role !== 'user') continue;
    if (typeof item.content === 'string') return item.content;
    if (Array.isArray(item.content))
      return item.content
        .filter((p: Json) => p?.type === 'input_text')
        .map((p: Json) => p.text)
        .join(' ');
  }
  return undefined;
}

function error(status: number, message: string, code: string | null, param: string | null): ResponsesOutcome {
  return { status, error: { error: { message, type: 'invalid_request_error', param, code } } };
}

export class FakeResponsesApi {
  private readonly stored = new Map<string, Json>();
  private readonly inputs = new Map<string, Json[]>();
  private next = 0;

  /** `replyText`, when given, is the answer and the summary's topic instead of the echo (the behaviour's `replyText`). */
  create(body: unknown, replyText?: string): ResponsesOutcome {
    const b = body as Json;
    if (typeof b?.model !== 'string')
      return error(400, "Missing required parameter: 'model'.", 'missing_required_parameter', 'model');
    const text = lastUserText(b.input);
    if (text === undefined) return error(400, "Invalid 'input': no user text.", 'invalid_value', 'input');
    const previous = b.previous_response_id;
    if (previous != null && !this.stored.has(previous))
      return error(
        404,
        `Previous response with id '${previous}' not found.`,
        'previous_response_not_found',
        'previous_response_id',
      );
    const n = ++this.next;
    const summary = `Thinking about: ${replyText ?? text}`;
    const answer = replyText ?? `Echo: ${text}`;
    const reasoning: Json = {
      id: `rs_fake${n}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: summary }],
    };
    if (Array.isArray(b.include) && b.include.includes('reasoning.encrypted_content'))
      reasoning.encrypted_content = `gAAAAfake${Buffer.from(summary).toString('base64')}`;
    const message = {
      id: `msg_fake${n}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: answer, annotations: [], logprobs: [] }],
    };
    const inputWords = words(typeof b.instructions === 'string' ? b.instructions : '') + words(JSON.stringify(b.input));
    const reasoningWords = words(summary);
    const outputWords = words(answer) + reasoningWords;
    const response: Json = {
      id: `resp_fake${n}`,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: b.instructions ?? null,
      max_output_tokens: b.max_output_tokens ?? null,
      model: b.model,
      output: [reasoning, message],
      parallel_tool_calls: b.parallel_tool_calls ?? true,
      previous_response_id: previous ?? null,
      reasoning: { effort: b.reasoning?.effort ?? null, summary: b.reasoning?.summary ?? null },
      store: b.store ?? true,
      temperature: b.temperature ?? 1,
      text: b.text ?? { format: { type: 'text' } },
      tool_choice: b.tool_choice ?? 'auto',
      tools: b.tools ?? [],
      top_p: b.top_p ?? 1,
      truncation: 'disabled',
      usage: {
        input_tokens: inputWords,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outputWords,
        output_tokens_details: { reasoning_tokens: reasoningWords },
        total_tokens: inputWords + outputWords,
      },
      user: null,
      metadata: b.metadata ?? {},
    };
    if (b.store !== false) {
      this.stored.set(response.id, response);
      const items: Json[] = typeof b.input === 'string' ? [{ role: 'user', content: b.input }] : b.input;
      this.inputs.set(
        response.id,
        items.map((item, i) => ({ id: `in_fake${n}_${i}`, type: 'message', ...item })),
      );
    }
    return { response };
  }

  /**
   * `GET /responses/{id}`, `DELETE /responses/{id}` and
   * `GET /responses/{id}/input_items` (newest first, `limit`), or undefined
   * for another path; an unknown id is OpenAI's 404.
   */
  resource(method: string, url: URL): ResponsesOutcome | undefined {
    const match = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(url.pathname);
    if (!match || (method !== 'GET' && method !== 'DELETE') || (match[2] && method !== 'GET')) return undefined;
    const id = decodeURIComponent(match[1]!);
    const response = this.stored.get(id);
    if (!response) return error(404, `Response with id '${id}' not found.`, null, null);
    if (method === 'DELETE') {
      this.stored.delete(id);
      this.inputs.delete(id);
      return { response: { id, object: 'response', deleted: true } };
    }
    if (!match[2]) return { response };
    const limit = Number(url.searchParams.get('limit') ?? 20);
    const items = [...(this.inputs.get(id) ?? [])].reverse();
    const data = items.slice(0, limit);
    return {
      response: {
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: data.length < items.length,
      },
    };
  }

  /** The event stream of `response`, as SSE frames' `{event, data}`. */
  events(response: Json): { event: string; data: string }[] {
    const events: Json[] = [];
    const emit = (type: string, fields: Json) => events.push({ type, ...fields });
    const opening = { ...response, status: 'in_progress', output: [], usage: null };
    emit('response.created', { response: opening });
    emit('response.in_progress', { response: opening });
    for (const [index, item] of (response.output as Json[]).entries()) {
      if (item.type === 'reasoning') {
        emit('response.output_item.added', { output_index: index, item: { ...item, summary: [] } });
        const text = item.summary[0].text as string;
        const part = { type: 'summary_text', text: '' };
        emit('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index: index,
          summary_index: 0,
          part,
        });
        const half = Math.ceil(text.length / 2);
        for (const delta of [text.slice(0, half), text.slice(half)])
          emit('response.reasoning_summary_text.delta', {
            item_id: item.id,
            output_index: index,
            summary_index: 0,
            delta,
          });
        emit('response.reasoning_summary_text.done', { item_id: item.id, output_index: index, summary_index: 0, text });
        emit('response.reasoning_summary_part.done', {
          item_id: item.id,
          output_index: index,
          summary_index: 0,
          part: { type: 'summary_text', text },
        });
      } else {
        emit('response.output_item.added', {
          output_index: index,
          item: { ...item, status: 'in_progress', content: [] },
        });
        const text = item.content[0].text as string;
        emit('response.content_part.added', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
        });
        for (const [i, word] of text.split(' ').entries())
          emit('response.output_text.delta', {
            item_id: item.id,
            output_index: index,
            content_index: 0,
            delta: i === 0 ? word : ` ${word}`,
            logprobs: [],
          });
        emit('response.output_text.done', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          text,
          logprobs: [],
        });
        emit('response.content_part.done', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          part: item.content[0],
        });
      }
      emit('response.output_item.done', { output_index: index, item });
    }
    emit('response.completed', { response });
    return events.map((event, i) => ({ event: event.type, data: JSON.stringify({ ...event, sequence_number: i }) }));
  }
}
