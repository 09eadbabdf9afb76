import type { ThinkingBlock } from '../../chat/types.ts';
import { newItemId } from './ids.ts';

/**
 * Reasoning between the canonical reply and Responses `reasoning` items. An
 * upstream's reasoning block (Anthropic thinking, the `reasoning_content` of
 * OpenAI-compatible servers) is one item: its text as the summary, and, when
 * the upstream signed it, the whole block in `encrypted_content`
 * (`gwr1.` + base64url JSON) so that a client replaying the item gives the
 * upstream back exactly what it sent. Only the gateway reads that field.
 */

export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  encrypted_content?: string;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

const PREFIX = 'gwr1.';

export function newReasoningId(): string {
  return newItemId('rs');
}

/** What a signed block carries back; an unsigned one (no upstream checks it) has nothing to return. */
export function encryptedContentOf(block: ThinkingBlock): string | undefined {
  if (block.type === 'thinking' && block.signature === '') return undefined;
  return PREFIX + Buffer.from(JSON.stringify(block)).toString('base64url');
}

/** The reasoning item of one block. */
export function reasoningItem(block: ThinkingBlock): ReasoningItem {
  const item: ReasoningItem = {
    type: 'reasoning',
    id: newReasoningId(),
    summary: block.type === 'thinking' && block.thinking !== '' ? [{ type: 'summary_text', text: block.thinking }] : [],
  };
  const encrypted = encryptedContentOf(block);
  if (encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

/** The block a replayed item carries, when the gateway wrote its `encrypted_content`; undefined for any other (another API's reasoning, a summary only). */
export function blockOf(encrypted: string | null | undefined): ThinkingBlock | undefined {
  if (typeof encrypted !== 'string' || !encrypted.startsWith(PREFIX)) return undefined;
  try {
    const block = JSON.parse(
      Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8'),
    ) as Partial<ThinkingBlock> & Record<string, unknown>;
    if (block.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string')
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    if (block.type === 'redacted_thinking' && typeof block.data === 'string')
      return { type: 'redacted_thinking', data: block.data };
  } catch {
    // Not the gateway's: another API's reasoning, dropped like any.
  }
  return undefined;
}
