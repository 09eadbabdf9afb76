import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A tiny ONNX "sentence model" written from scratch, so the ONNX embedder's
 * real loading and inference path (transformers.js + onnxruntime-node in a
 * worker thread) is tested even where the real MiniLM weights are absent.
 *
 * The graph is one Gather: `last_hidden_state[b, s, :] = E[input_ids[b, s], :]`,
 * with `E` a deterministic pseudo-random [vocab, dims] table. With the
 * pipeline's mean pooling and normalization, an embedding is the normalized
 * mean of the rows of its token ids: easy to check independently. It reuses
 * the real tokenizer files of `shared/models/Xenova/all-MiniLM-L6-v2`.
 */

const VOCAB = 30522;

// --- minimal protobuf writer (only what ModelProto needs) ---
function varint(value: number | bigint): number[] {
  let v = BigInt(value);
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}
const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, value: number) => Buffer.from([...key(field, 0), ...varint(value)]);
function bytes(field: number, data: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([...key(field, 2), ...varint(data.length)]), data]);
}
const str = (field: number, text: string) => bytes(field, Buffer.from(text, 'utf8'));
const msg = (field: number, ...parts: Buffer[]) => bytes(field, Buffer.concat(parts));

const FLOAT = 1;
const INT64 = 7;

function valueInfo(field: number, name: string, elemType: number, dims: (number | string)[]): Buffer {
  const shape = dims.map((d) => msg(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  return msg(field, str(1, name), msg(2, msg(1, int(1, elemType), msg(2, ...shape))));
}

/** The deterministic embedding table, row-major [VOCAB, dims]. */
export function tinyEmbeddingTable(dims: number): Float32Array {
  const table = new Float32Array(VOCAB * dims);
  let state = 0x12345678;
  for (let i = 0; i < table.length; i++) {
    // xorshift32: fast, deterministic, good enough to make rows unrelated.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    table[i] = ((state >>> 0) / 0xffffffff) * 2 - 1;
  }
  return table;
}

function modelBytes(dims: number): Buffer {
  const table = tinyEmbeddingTable(dims);
  const initializer = msg(
    5,
    int(1, VOCAB),
    int(1, dims),
    int(2, FLOAT),
    str(8, 'E'),
    bytes(9, new Uint8Array(table.buffer)),
  );
  const node = msg(
    1,
    str(1, 'E'),
    str(1, 'input_ids'),
    str(2, 'last_hidden_state'),
    str(3, 'lookup'),
    str(4, 'Gather'),
    msg(5, str(1, 'axis'), int(3, 0), int(20, 2)),
  );
  const graph = msg(
    7,
    node,
    str(2, 'tiny-bow'),
    initializer,
    valueInfo(11, 'input_ids', INT64, ['batch', 'sequence']),
    valueInfo(11, 'attention_mask', INT64, ['batch', 'sequence']),
    valueInfo(11, 'token_type_ids', INT64, ['batch', 'sequence']),
    valueInfo(12, 'last_hidden_state', FLOAT, ['batch', 'sequence', dims]),
  );
  return Buffer.concat([int(1, 7), str(2, 'gateway-tests'), graph, msg(8, str(1, ''), int(2, 13))]);
}

/** Where the real tokenizer files are (shared/models beside the repository). */
export const SHARED_MODELS = process.env.EMBEDDING_TEST_MODELS ?? join(import.meta.dirname, '../../../shared/models');
export const MINILM = 'Xenova/all-MiniLM-L6-v2';
const TOKENIZER_FILES = [
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'vocab.txt',
];

/** True when the real MiniLM ONNX weights are in shared/models. */
export function realModelPresent(): boolean {
  return existsSync(join(SHARED_MODELS, MINILM, 'onnx', 'model_quantized.onnx'));
}

/** True when the tokenizer files the tiny model borrows are there. */
export function tokenizerPresent(): boolean {
  return existsSync(join(SHARED_MODELS, MINILM, 'tokenizer.json'));
}

/** Writes the tiny model (as `onnx/model_quantized.onnx`) with the MiniLM tokenizer into a temp models folder; `remove()` deletes it. */
export function writeTinyModel(dims = 32): { modelsPath: string; model: string; dims: number; remove(): void } {
  const modelsPath = mkdtempSync(join(tmpdir(), 'gw-tiny-onnx-'));
  const model = 'test/tiny-bow';
  const dir = join(modelsPath, model);
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  for (const file of TOKENIZER_FILES) {
    const source = join(SHARED_MODELS, MINILM, file);
    if (existsSync(source)) copyFileSync(source, join(dir, file));
  }
  writeFileSync(join(dir, 'onnx', 'model_quantized.onnx'), modelBytes(dims));
  return { modelsPath, model, dims, remove: () => rmSync(modelsPath, { recursive: true, force: true }) };
}
