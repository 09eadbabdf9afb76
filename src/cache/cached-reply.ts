/** A reply found in a cache. */
export interface CachedReply {
  /** The stored `chat.completion` JSON. */
  completion: string;
  /** Epoch ms when it was stored (for `Age`). */
  storedAt: number;
  /** Cosine similarity of the match, semantic hits only. */
  similarity?: number;
}
