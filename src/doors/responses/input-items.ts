import {
  toolResultText,
  type AssistantMessage,
  type ChatMessage,
  type ContentPart,
  type ThinkingBlock,
  type ToolCall,
} from '../../chat/types.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import { newItemId } from './ids.ts';
import { blockOf } from './reasoning-items.ts';
import type { ContentPartBody, InputItemBody } from './request-schema.ts';

/**
 * Responses input items <-> the canonical chat messages. Items become
 * messages in order; `function_call` items join the assistant turn before
 * them (one assistant message with `tool_calls`, as the chat shape has it),
 * `function_call_output` items become `tool` messages paired by `call_id`.
 * A reasoning item the gateway returned with a signed block
 * (reasoning-items.ts) opens the assistant turn after it as that block, for
 * the upstream that signed it (adapters of other formats leave it out); any
 * other reasoning item is dropped: no upstream reads another API's reasoning.
 */

function textOfParts(parts: readonly ContentPartBody[], where: string): string {
  const texts: string[] = [];
  for (const [i, part] of parts.entries()) {
    if (part.type === 'input_text' || part.type === 'output_text') texts.push(part.text);
    else if (part.type === 'refusal') texts.push(part.refusal);
    else throw new InvalidRequestError(`${where}.content.${i}: a '${part.type}' part is only read in a user message.`);
  }
  return texts.join('\n');
}

function userContent(content: string | readonly ContentPartBody[], where: string): string | ContentPart[] {
  if (typeof content === 'string') return content;
  if (content.every((part) => part.type === 'input_text' || part.type === 'output_text'))
    return textOfParts(content, where);
  return content.map((part, i): ContentPart => {
    switch (part.type) {
      case 'input_text':
      case 'output_text':
        return { type: 'text', text: part.text };
      case 'input_image': {
        if (part.image_url == null) {
          throw new InvalidRequestError(
            `${where}.content.${i}: input_image needs an 'image_url' (https: or data:); file ids are not served by this gateway.`,
          );
        }
        const image: ContentPart = { type: 'image_url', image_url: { url: part.image_url } };
        if (part.detail != null) image.image_url.detail = part.detail;
        return image;
      }
      case 'input_file': {
        if (part.file_data == null) {
          throw new InvalidRequestError(
            `${where}.content.${i}: input_file needs 'file_data' (a base64 data:application/pdf URL); file ids and URLs are not served by this gateway.`,
          );
        }
        const file: ContentPart = { type: 'file', file: { file_data: part.file_data } };
        if (part.filename != null) file.file.filename = part.filename;
        return file;
      }
      case 'refusal':
        throw new InvalidRequestError(`${where}.content.${i}: a refusal part belongs to an assistant message.`);
    }
  });
}

function toolOutput(output: string | readonly ContentPartBody[], where: string): string {
  return typeof output === 'string' ? output : textOfParts(output, `${where}.output`);
}

/** The canonical messages of a request's `input` (without `instructions`). */
export function inputToMessages(input: string | readonly InputItemBody[]): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const messages: ChatMessage[] = [];
  /** Reasoning blocks replayed before the assistant turn they belong to. */
  let pendingThinking: ThinkingBlock[] = [];
  for (const [i, item] of input.entries()) {
    const where = `input.${i}`;
    const type = item.type ?? 'message';
    const count = messages.length;
    if (type === 'message') {
      const m = item as Extract<InputItemBody, { role: string }>;
      if (m.role === 'user') messages.push({ role: 'user', content: userContent(m.content, where) });
      else if (m.role === 'assistant') {
        const text = typeof m.content === 'string' ? m.content : textOfParts(m.content, where);
        messages.push({ role: 'assistant', content: text });
      } else
        messages.push({
          role: m.role,
          content: typeof m.content === 'string' ? m.content : textOfParts(m.content, where),
        });
    } else if (type === 'function_call') {
      const call = item as Extract<InputItemBody, { type: 'function_call' }>;
      const toolCall: ToolCall = {
        id: call.call_id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      };
      const last = messages.at(-1);
      // Parallel calls of one turn, or the calls after the turn's text, are one assistant message.
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(toolCall);
      else messages.push({ role: 'assistant', content: null, tool_calls: [toolCall] });
    } else if (type === 'function_call_output') {
      const out = item as Extract<InputItemBody, { type: 'function_call_output' }>;
      messages.push({ role: 'tool', tool_call_id: out.call_id, content: toolOutput(out.output, where) });
    } else if (type === 'reasoning') {
      const block = blockOf((item as Extract<InputItemBody, { type: 'reasoning' }>).encrypted_content);
      if (block) pendingThinking.push(block);
      continue;
    } else {
      throw new InvalidRequestError(
        `${where}: items of type '${String(type).slice(0, 64)}' are not supported by this gateway (message, function_call, function_call_output and reasoning are).`,
      );
    }
    // The reasoning comes before the turn's text and calls, so it opens the assistant message the next item starts.
    const added = messages[count];
    if (pendingThinking.length > 0 && added?.role === 'assistant') {
      added.thinking = pendingThinking;
      pendingThinking = [];
    } else if (added !== undefined) pendingThinking = [];
  }
  // An empty text beside tool calls is no text: some upstream formats reject an empty text block.
  for (const m of messages)
    if (m.role === 'assistant' && m.content === '' && m.tool_calls) (m as AssistantMessage).content = null;
  return messages;
}

/** One input item as `GET /v1/responses/{id}/input_items` lists it. */
export type StoredInputItem =
  | { id: string; type: 'message'; role: string; status: 'completed'; content: Array<Record<string, unknown>> }
  | { id: string; type: 'function_call'; call_id: string; name: string; arguments: string; status: 'completed' }
  | { id: string; type: 'function_call_output'; call_id: string; output: string; status: 'completed' };

/** The items of canonical messages (what the upstream saw, after DLP), with ids, in order. */
export function messagesToItems(messages: readonly ChatMessage[]): StoredInputItem[] {
  const items: StoredInputItem[] = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      items.push({
        id: newItemId('fco'),
        type: 'function_call_output',
        call_id: m.tool_call_id,
        output: toolResultText(m.content),
        status: 'completed',
      });
      continue;
    }
    if (m.role === 'assistant') {
      if (m.content !== null && m.content !== '') {
        items.push({
          id: newItemId('msg'),
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: m.content, annotations: [] }],
        });
      }
      for (const call of m.tool_calls ?? []) {
        items.push({
          id: newItemId('fc'),
          type: 'function_call',
          call_id: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
          status: 'completed',
        });
      }
      continue;
    }
    const content =
      typeof m.content === 'string'
        ? [{ type: 'input_text', text: m.content }]
        : // A Messages block of an unmodelled type never reaches this door's requests.
          m.content.flatMap((part) => {
            if (part.type === 'anthropic_block') return [];
            if (part.type === 'text') return { type: 'input_text', text: part.text };
            if (part.type === 'file')
              return {
                type: 'input_file',
                file_data: part.file.file_data,
                ...(part.file.filename !== undefined ? { filename: part.file.filename } : {}),
              };
            if (part.type === 'document') {
              const { source } = part;
              if (source.type === 'text') return { type: 'input_text', text: source.data };
              const file =
                source.type === 'base64'
                  ? { file_data: `data:${source.media_type};base64,${source.data}` }
                  : { file_url: source.url };
              return { type: 'input_file', ...file, ...(part.title !== undefined ? { filename: part.title } : {}) };
            }
            return { type: 'input_image', image_url: part.image_url.url, detail: part.image_url.detail ?? 'auto' };
          });
    items.push({ id: newItemId('msg'), type: 'message', role: m.role, status: 'completed', content });
  }
  return items;
}
