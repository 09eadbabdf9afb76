import type { ChatMessage } from '../chat/types.ts';

/**
 * Reshapes an OpenAI-style message list for upstreams that take system
 * instructions out of band and insist on strictly alternating user/assistant
 * turns that start with a user turn (Gemini, Anthropic).
 */

export interface Turn {
  role: 'user' | 'assistant';
  text: string;
}

export interface AlternatingConversation {
  /** System and developer messages, in order, joined; undefined when there are none. */
  system: string | undefined;
  /** Never two consecutive turns of the same role; the first one is a user turn. */
  turns: Turn[];
}

/**
 * Text of the user turn put in front of a conversation that starts with an
 * assistant turn. Both upstreams reject a leading assistant turn and empty
 * text, so the smallest non-empty text it is.
 */
export const LEADING_USER_PLACEHOLDER = '.';

/** Separator between merged messages, so their texts stay paragraphs apart. */
const MERGE_SEPARATOR = '\n\n';

/**
 * System and developer messages anywhere in the list become the system
 * instruction (these upstreams have no mid-conversation system turn).
 * Whitespace-only messages are dropped, since both upstreams reject empty text
 * blocks; consecutive same-role messages are merged.
 */
export function toAlternatingTurns(messages: readonly ChatMessage[]): AlternatingConversation {
  const systemParts: string[] = [];
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') {
      if (message.content.trim() !== '') systemParts.push(message.content);
      continue;
    }
    if (message.content.trim() === '') continue;
    const last = turns.at(-1);
    if (last !== undefined && last.role === message.role) {
      last.text += MERGE_SEPARATOR + message.content;
    } else {
      turns.push({ role: message.role, text: message.content });
    }
  }
  if (turns[0]?.role === 'assistant') turns.unshift({ role: 'user', text: LEADING_USER_PLACEHOLDER });
  return { system: systemParts.length > 0 ? systemParts.join(MERGE_SEPARATOR) : undefined, turns };
}

/** The `validate()` message shared by the adapters that need at least one turn. */
export const NO_TURNS_MESSAGE =
  "'messages' must contain at least one user or assistant message with non-empty content for this model.";
