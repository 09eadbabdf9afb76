import { completionChunks } from '../chat/completion-accumulator.ts';
import type { ChatCompletion } from '../chat/types.ts';
import type { StreamEntry } from '../streams/protocol.ts';

/** A reply found in a cache. */
export interface CachedReply {
  /** The stored `chat.completion` JSON. */
  completion: string;
  /** Epoch ms when it was stored (for `Age`). */
  storedAt: number;
  /** Cosine similarity of the match, semantic hits only. */
  similarity?: number;
}

/**
 * A stored reply as the entries of a reply stream, for a request that reads one: a `result`, or for a
 * streamed request the chunks that replay it and an `end`. They carry no token counts: nothing was
 * produced upstream for this request.
 */
export async function* cachedReplyEntries(
  completion: string,
  stream: boolean,
  includeUsage: boolean,
): AsyncGenerator<StreamEntry> {
  if (!stream) {
    yield { id: '0-1', t: 'result', d: completion };
    return;
  }
  let sequence = 1;
  for (const chunk of completionChunks(JSON.parse(completion) as ChatCompletion, includeUsage))
    yield { id: `0-${sequence++}`, t: 'chunk', d: JSON.stringify(chunk) };
  yield { id: `0-${sequence}`, t: 'end', d: '{}' };
}
