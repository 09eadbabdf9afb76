import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EmbeddingError } from './embedder.ts';
import { isCjk, WordPieceTokenizer } from './wordpiece.ts';

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
  private rowNorm = 0;
  private knownHan = new Set<number>();
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
      let norms = 0;
      for (let row = 0; row < rows; row++) {
        let sum = 0;
        for (let i = row * dims; i < (row + 1) * dims; i++) sum += (this.table[i] as number) ** 2;
        norms += Math.sqrt(sum);
      }
      this.rowNorm = norms / rows;
      for (const line of lines)
        if (line.length === 1 && isCjk(line.charCodeAt(0))) this.knownHan.add(line.charCodeAt(0));
      this.tokenizer = new WordPieceTokenizer(lines, { typoTolerant: true });
    } catch (err) {
      throw new EmbeddingError(
        `the static embedding table in ${dir} could not be loaded: ${(err as Error).message}; ${hint}`,
        { cause: err },
      );
    }
  }

  /** The unit-length embedding of `text` (a zero vector when no token is known and it has no Han character). Call after {@link ready}. */
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
    if (HAN.test(text)) this.addUnknownHan(text, sum);
    let norm = 0;
    for (let i = 0; i < dims; i++) norm += (sum[i] as number) ** 2;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) / norm;
    return sum;
  }

  /**
   * Adds a row for each Han character the vocabulary lacks (most of Chinese: it holds 244), which would otherwise add
   * nothing, so that a Chinese prompt has a vector and two that share their characters are proposed to the verifier.
   * The row is a pseudo-random direction drawn from the character, as long as the table's rows are on average: far
   * from every other character's and from every trained row.
   */
  private addUnknownHan(text: string, sum: Float32Array): void {
    const dims = this.dimensions;
    for (const char of text) {
      const code = char.codePointAt(0) as number;
      if (!isCjk(code) || this.knownHan.has(code)) continue;
      let state = (code * 0x9e3779b1) >>> 0 || 1;
      const row = new Float32Array(dims);
      let norm = 0;
      for (let i = 0; i < dims; i++) {
        // xorshift32: a fixed sequence per character, the same in every process.
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        state >>>= 0;
        row[i] = state / 0x80000000 - 1;
        norm += (row[i] as number) ** 2;
      }
      const scale = this.rowNorm / Math.sqrt(norm);
      for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) + (row[i] as number) * scale;
    }
  }
}

/** Whether a text has a Han character at all: most prompts have none and skip the walk. */
const HAN = /[\u3400-\u9fff\uf900-\ufaff]|[\u{20000}-\u{2fa1f}]/u;
