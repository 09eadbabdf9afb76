/**
 * Turns texts into sentence embeddings for the semantic cache. Vectors come
 * back L2-normalized, one per text, in order.
 */
export interface Embedder {
  /**
   * Names the model (e.g. `onnx:Xenova/all-MiniLM-L6-v2`). It is part of the
   * semantic partition, so vectors of different models are never compared.
   */
  readonly id: string;
  /** Resolves when the embedder can serve (model loaded); rejects with the reason it cannot. */
  ready(): Promise<void>;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** The embedder failed; the semantic cache treats the request as a miss. */
export class EmbeddingError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EmbeddingError';
  }
}
