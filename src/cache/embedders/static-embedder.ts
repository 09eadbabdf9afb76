import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddingError } from './embedder.ts';
import { WordPieceTokenizer } from './wordpiece.ts';

/** Options of {@link StaticEmbedder}. */
export interface StaticEmbedderOptions {
  /** The model folder: `vocab.txt` and `static/` (built by `scripts/distill-static-embeddings.py`). */
  modelDir: string;
  /** Names the table (part of the semantic partition). */
  id: string;
}

/**
 * A static sentence embedding: the normalized sum of per-token rows of a
 * table distilled from the transformer (`scripts/distill-static-embeddings.py`).
 * It costs a tokenization and one row addition per token — about a
 * microsecond per token, so it runs on the event loop like parsing the
 * request body does — and serves as the semantic cache's first-stage
 * retriever: only a prompt with a first-stage candidate pays for the
 * transformer (see `response-cache.ts`).
 */
export class StaticEmbedder {
  readonly id: string;
  private table: Float32Array | undefined;
  private tokenizer: WordPieceTokenizer | undefined;
  private dimensions = 0;
  private loading: Promise<void> | undefined;

  private readonly options: StaticEmbedderOptions;

  constructor(options: StaticEmbedderOptions) {
    this.options = options;
    this.id = options.id;
  }

  get dims(): number {
    return this.dimensions;
  }

  /** Loads the table and the vocabulary; rejects with what is missing. */
  ready(): Promise<void> {
    this.loading ??= this.load();
    return this.loading;
  }

  private async load(): Promise<void> {
    const dir = this.options.modelDir;
    const hint = `build it with 'bash scripts/export-minilm-onnx.sh' (./scripts/start.sh does this on first start)`;
    try {
      const [vocab, meta, table] = await Promise.all([
        readFile(join(dir, 'vocab.txt'), 'utf8'),
        readFile(join(dir, 'static', 'static.json'), 'utf8'),
        readFile(join(dir, 'static', 'embeddings.f32')),
      ]);
      const { dims, rows } = JSON.parse(meta) as { dims: number; rows: number };
      const lines = vocab.split('\n');
      if (lines.at(-1) === '') lines.pop();
      if (lines.length !== rows || table.byteLength !== rows * dims * 4)
        throw new Error(
          `the table holds ${table.byteLength} bytes, not ${rows} x ${dims} floats for ${lines.length} tokens`,
        );
      // A copy: the Buffer may sit at an offset that is not a multiple of 4 in a shared pool.
      this.table = new Float32Array(new Uint8Array(table).buffer);
      this.dimensions = dims;
      this.tokenizer = new WordPieceTokenizer(lines, { typoTolerant: true });
    } catch (err) {
      throw new EmbeddingError(
        `the static embedding table in ${dir} could not be loaded: ${(err as Error).message}; ${hint}`,
        { cause: err },
      );
    }
  }

  /** The unit-length embedding of `text` (a zero vector when no token is known). Call after {@link ready}. */
  embed(text: string): Float32Array {
    const table = this.table;
    const tokenizer = this.tokenizer;
    if (!table || !tokenizer) throw new EmbeddingError('the static embedder is not loaded');
    const dims = this.dimensions;
    const sum = new Float32Array(dims);
    for (const id of tokenizer.encode(text)) {
      const offset = id * dims;
      for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) + (table[offset + i] as number);
    }
    let norm = 0;
    for (let i = 0; i < dims; i++) norm += (sum[i] as number) ** 2;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) / norm;
    return sum;
  }
}
