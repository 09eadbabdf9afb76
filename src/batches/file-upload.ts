import { InvalidRequestError } from '../errors/catalog.ts';
import type { SqlDb } from './sql-db.ts';

/** Bytes of an uploaded file per stored chunk: what one upload holds in memory between writes. */
export const FILE_CHUNK_BYTES = 1024 * 1024;

/** The 400 of an owner whose uploaded files would take more than its quota. */
export function quotaError(bytes: number, quota: number, used: number): InvalidRequestError {
  return new InvalidRequestError(
    `file: storing these ${bytes} bytes would exceed this key's file storage quota of ${quota} bytes (FILES_MAX_BYTES_PER_OWNER; ${used} in use). Delete files with DELETE /v1/files/{id} first.`,
  );
}

/**
 * The content of one upload on its way into `gateway_file_chunks`: bytes are
 * written as they arrive and stored in chunks of {@link FILE_CHUNK_BYTES}, as
 * UTF-8 text (a batch input file must be UTF-8: 400 otherwise). The owner's
 * quota is checked against the bytes received so far, so an upload over it
 * stops at once; the file's row is written by {@link BatchStore.createFile}
 * once the last chunk is in, and {@link abort} removes the chunks of an
 * upload that failed.
 */
export class FileUpload {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  /** Bytes received so far. */
  bytes = 0;

  private readonly db: SqlDb;
  readonly id: string;
  private readonly quota: { bytes: number; used: number } | undefined;

  /** `quota`: the owner's quota and the bytes its stored files take; none: no quota. */
  constructor(db: SqlDb, id: string, quota: { bytes: number; used: number } | undefined) {
    this.db = db;
    this.id = id;
    this.quota = quota;
  }

  async write(data: Buffer): Promise<void> {
    this.bytes += data.length;
    if (this.quota && this.quota.used + this.bytes > this.quota.bytes)
      throw quotaError(this.bytes, this.quota.bytes, this.quota.used);
    // A copy: `data` may be a slice of a larger buffer that should not stay alive with it.
    this.pending.push(Buffer.from(data));
    this.pendingBytes += data.length;
    while (this.pendingBytes >= FILE_CHUNK_BYTES) {
      const all = Buffer.concat(this.pending);
      await this.store(all.subarray(0, FILE_CHUNK_BYTES), false);
      this.pending = [all.subarray(FILE_CHUNK_BYTES)];
      this.pendingBytes = all.length - FILE_CHUNK_BYTES;
    }
  }

  /** Stores what is still pending. */
  async end(): Promise<void> {
    await this.store(Buffer.concat(this.pending), true);
    this.pending = [];
    this.pendingBytes = 0;
  }

  async abort(): Promise<void> {
    this.pending = [];
    await this.db.run('DELETE FROM gateway_file_chunks WHERE file_id = ?', [this.id]);
  }

  private async store(bytes: Buffer, last: boolean): Promise<void> {
    let text: string;
    try {
      text = this.decoder.decode(bytes, { stream: !last });
    } catch {
      throw new InvalidRequestError('file: a batch input file must be UTF-8 JSONL.');
    }
    if (text === '') return;
    await this.db.run('INSERT INTO gateway_file_chunks (file_id, seq, data, created_at) VALUES (?, ?, ?, ?)', [
      this.id,
      this.seq++,
      text,
      Math.floor(Date.now() / 1000),
    ]);
  }
}

/** The text of a stored upload, chunk by chunk in order: one chunk in memory at a time. */
export async function* storedChunks(db: SqlDb, fileId: string): AsyncGenerator<string> {
  for (let seq = 0; ; seq++) {
    const row = (
      await db.all<{ data: string }>('SELECT data FROM gateway_file_chunks WHERE file_id = ? AND seq = ?', [
        fileId,
        seq,
      ])
    )[0];
    if (!row) return;
    yield row.data;
  }
}
