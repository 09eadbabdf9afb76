import { newIdLike, newResponseId } from './ids.ts';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A stored native `response` object as a new response: a fresh `resp_` id,
 * the current `created_at` (and `completed_at` where the upstream wrote one),
 * and fresh ids for its output items, so no client is handed an id another
 * request was given. Everything else (texts, `call_id`s, encrypted reasoning,
 * usage) is the stored reply's.
 */
export function freshResponse(stored: Json, nowMs: number): Json {
  const response = structuredClone(stored);
  const now = Math.floor(nowMs / 1000);
  response.id = newResponseId();
  response.created_at = now;
  if (typeof response.completed_at === 'number') response.completed_at = now;
  if (Array.isArray(response.output))
    for (const item of response.output) if (isObject(item) && typeof item.id === 'string') item.id = newIdLike(item.id);
  return response;
}

/**
 * The Responses event stream of a whole `response` object, as an upstream
 * streams one: `response.created`, `response.in_progress`, per output item
 * `response.output_item.added`, its parts (a message's content parts with one
 * text delta each, a reasoning item's summary parts, a function call's
 * arguments) and `response.output_item.done`, then `response.completed` (or
 * `response.incomplete`). Items of other types (hosted tools' calls) are
 * added and done whole. Events carry no `sequence_number`: the codec numbers them.
 */
export function responseEvents(response: Json): Json[] {
  const events: Json[] = [];
  const emit = (type: string, fields: Json) => events.push({ type, ...fields });
  const opening = { ...response, status: 'in_progress', output: [], usage: null, incomplete_details: null };
  emit('response.created', { response: opening });
  emit('response.in_progress', { response: opening });
  const output = Array.isArray(response.output) ? response.output : [];
  for (const [index, item] of output.entries()) {
    if (!isObject(item)) continue;
    const at = { item_id: item.id, output_index: index };
    if (item.type === 'message' && Array.isArray(item.content)) {
      emit('response.output_item.added', {
        output_index: index,
        item: { ...item, status: 'in_progress', content: [] },
      });
      for (const [part, content] of item.content.entries()) {
        if (!isObject(content)) continue;
        const where = { ...at, content_index: part };
        if (content.type === 'output_text' && typeof content.text === 'string') {
          emit('response.content_part.added', { ...where, part: { ...content, text: '' } });
          emit('response.output_text.delta', { ...where, delta: content.text, logprobs: [] });
          emit('response.output_text.done', { ...where, text: content.text, logprobs: [] });
        } else if (content.type === 'refusal' && typeof content.refusal === 'string') {
          emit('response.content_part.added', { ...where, part: { ...content, refusal: '' } });
          emit('response.refusal.delta', { ...where, delta: content.refusal });
          emit('response.refusal.done', { ...where, refusal: content.refusal });
        } else {
          emit('response.content_part.added', { ...where, part: content });
        }
        emit('response.content_part.done', { ...where, part: content });
      }
    } else if (item.type === 'reasoning' && Array.isArray(item.summary)) {
      emit('response.output_item.added', { output_index: index, item: { ...item, summary: [] } });
      for (const [part, summary] of item.summary.entries()) {
        if (!isObject(summary) || typeof summary.text !== 'string') continue;
        const where = { ...at, summary_index: part };
        emit('response.reasoning_summary_part.added', { ...where, part: { ...summary, text: '' } });
        emit('response.reasoning_summary_text.delta', { ...where, delta: summary.text });
        emit('response.reasoning_summary_text.done', { ...where, text: summary.text });
        emit('response.reasoning_summary_part.done', { ...where, part: summary });
      }
    } else if (item.type === 'function_call' && typeof item.arguments === 'string') {
      emit('response.output_item.added', {
        output_index: index,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      emit('response.function_call_arguments.delta', { ...at, delta: item.arguments });
      emit('response.function_call_arguments.done', { ...at, arguments: item.arguments });
    } else {
      emit('response.output_item.added', { output_index: index, item });
    }
    emit('response.output_item.done', { output_index: index, item });
  }
  emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return events;
}
