import { Worker } from 'node:worker_threads';
import { EmbeddingError, type Embedder } from './embedder.ts';
import type { OnnxThreadConfig } from './onnx-embedder-thread.ts';

/** Options of {@link OnnxEmbedder}. */
export interface OnnxEmbedderOptions {
  /** Model id in transformers.js layout under `localModelPath`. @defaultValue `Xenova/all-MiniLM-L6-v2` */
  model?: string;
  /** Folder holding `<model>/config.json`, tokenizer files and `onnx/model_quantized.onnx`. */
  localModelPath: string;
  /** Let transformers.js download a missing model from the Hugging Face hub. @defaultValue false */
  allowRemoteModels?: boolean;
  /** Weights variant: `q8` reads `onnx/model_quantized.onnx`, `fp32` reads `onnx/model.onnx`. @defaultValue `q8` */
  dtype?: string;
  /** ONNX Runtime intra-op threads; 0 lets it choose. @defaultValue 0 */
  threads?: number;
}

interface Pending {
  resolve(vectors: Float32Array[]): void;
  reject(err: unknown): void;
}

type ThreadMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { id: number; dims: number; data: Float32Array }
  | { id: number; error: string };

/**
 * A local ONNX sentence-embedding model run by @huggingface/transformers in a
 * worker thread, so tokenizing and inference never block the API's event
 * loop. Batches (see `embedding-batcher.ts`) go to the thread as one
 * pipeline call. The thread starts on first use; a model that cannot load is
 * reported by {@link ready} and by every call, with transformers.js' reason
 * (e.g. the path of the missing `.onnx` file).
 */
export class OnnxEmbedder implements Embedder {
  readonly id: string;
  private worker: Worker | undefined;
  private starting: Promise<void> | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  private readonly config: OnnxThreadConfig;

  constructor(options: OnnxEmbedderOptions) {
    this.config = {
      model: options.model ?? 'Xenova/all-MiniLM-L6-v2',
      localModelPath: options.localModelPath,
      allowRemoteModels: options.allowRemoteModels ?? false,
      dtype: options.dtype ?? 'q8',
      threads: options.threads ?? 0,
    };
    this.id = `onnx:${this.config.model}:${this.config.dtype}`;
  }

  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new EmbeddingError('the embedder is closed'));
    this.starting ??= this.start();
    return this.starting;
  }

  private start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // A small young generation: the thread embeds rarely (a verified candidate), and a large one is resident memory.
      const worker = new Worker(new URL('./onnx-embedder-thread.ts', import.meta.url), {
        workerData: this.config,
        resourceLimits: { maxYoungGenerationSizeMb: 4 },
      });
      worker.unref();
      this.worker = worker;
      let loaded = false;
      worker.on('message', (message: ThreadMessage) => {
        if ('type' in message) {
          if (message.type === 'ready') {
            loaded = true;
            resolve();
          } else {
            // Say how to get the model: the gateway never fetches it by itself unless allowed to.
            const hint = `build it with 'bash scripts/export-minilm-onnx.sh ${this.config.localModelPath}' (./scripts/start.sh does this on first start), or set EMBEDDING_ALLOW_REMOTE=true where the Hugging Face hub is reachable`;
            reject(
              new EmbeddingError(
                `the ONNX model ${this.config.model} could not be loaded: ${message.message}; ${hint}`,
              ),
            );
            void worker.terminate();
          }
          return;
        }
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        if ('error' in message) {
          waiting.reject(new EmbeddingError(`embedding failed: ${message.error}`));
          return;
        }
        const vectors: Float32Array[] = [];
        for (let offset = 0; offset < message.data.length; offset += message.dims) {
          vectors.push(message.data.subarray(offset, offset + message.dims));
        }
        waiting.resolve(vectors);
      });
      worker.on('error', (err) => {
        if (!loaded) reject(new EmbeddingError(`the ONNX embedder thread failed: ${err.message}`, { cause: err }));
      });
      worker.on('exit', () => {
        this.worker = undefined;
        for (const waiting of this.pending.values())
          waiting.reject(new EmbeddingError('the ONNX embedder thread stopped'));
        this.pending.clear();
        // A model that loaded once may be started again on the next call; one that never loaded stays failed.
        if (loaded && !this.closed) this.starting = undefined;
      });
    });
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    await this.ready();
    const worker = this.worker;
    if (!worker) throw new EmbeddingError('the ONNX embedder thread is not running');
    const id = this.nextId++;
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts: [...texts] });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }
}
