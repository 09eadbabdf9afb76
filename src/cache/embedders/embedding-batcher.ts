import type { Embedder } from './embedder.ts';

/** Options of {@link EmbeddingBatcher}. */
export interface EmbeddingBatcherOptions {
  /** Largest batch sent at once. @defaultValue 32 */
  maxBatchSize?: number;
  /** Batches in flight at once. @defaultValue 1 (the ONNX thread runs one at a time anyway) */
  maxConcurrency?: number;
}

interface Waiting {
  text: string;
  resolve(vector: Float32Array): void;
  reject(err: unknown): void;
}

/**
 * Batches single-text requests across concurrent callers without adding
 * delay: a text is sent at once when a slot is free; texts that arrive while
 * every slot is busy wait and leave together as the next batch. Under load the
 * batches grow by themselves; when idle each request goes alone.
 */
export class EmbeddingBatcher {
  private readonly queue: Waiting[] = [];
  private inFlight = 0;
  private readonly maxBatchSize: number;
  private readonly maxConcurrency: number;
  /** Batches sent so far (for tests and stats). */
  batches = 0;

  private readonly embedder: Embedder;

  constructor(embedder: Embedder, options: EmbeddingBatcherOptions = {}) {
    this.embedder = embedder;
    this.maxBatchSize = options.maxBatchSize ?? 32;
    this.maxConcurrency = options.maxConcurrency ?? 1;
  }

  embed(text: string): Promise<Float32Array> {
    return new Promise<Float32Array>((resolve, reject) => {
      this.queue.push({ text, resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < this.maxConcurrency && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatchSize);
      this.inFlight += 1;
      this.batches += 1;
      this.embedder
        .embed(batch.map((w) => w.text))
        .then(
          (vectors) =>
            batch.forEach((w, i) =>
              vectors[i]
                ? w.resolve(vectors[i])
                : w.reject(new Error('the embedder returned fewer vectors than texts')),
            ),
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.drain();
        });
    }
  }
}
