import type { ChatMessage, ContentPart } from './types.ts';

/**
 * Every piece of client-written text in a message list, in a fixed order:
 * message contents and text parts, the arguments of the assistant's tool
 * calls (JSON text) and tool results. Image parts are not text and are left
 * as they are. DLP scans and redacts through this, so a new kind of text in
 * the model has one place to be added.
 */
export function mapMessageTexts(messages: readonly ChatMessage[], fn: (text: string) => string): ChatMessage[] {
  return messages.map((message): ChatMessage => {
    switch (message.role) {
      case 'system':
      case 'developer':
      case 'tool':
        return { ...message, content: fn(message.content) };
      case 'user':
        return { ...message, content: typeof message.content === 'string' ? fn(message.content) : message.content.map((part) => mapPart(part, fn)) };
      case 'assistant': {
        const out = { ...message, content: message.content === null ? null : fn(message.content) };
        if (message.tool_calls) {
          out.tool_calls = message.tool_calls.map((call) => ({ ...call, function: { ...call.function, arguments: fn(call.function.arguments) } }));
        }
        return out;
      }
    }
  });
}

function mapPart(part: ContentPart, fn: (text: string) => string): ContentPart {
  return part.type === 'text' ? { type: 'text', text: fn(part.text) } : part;
}

/** The texts {@link mapMessageTexts} visits, in its order. */
export function messageTexts(messages: readonly ChatMessage[]): string[] {
  const texts: string[] = [];
  mapMessageTexts(messages, (text) => {
    texts.push(text);
    return text;
  });
  return texts;
}
