import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { InvalidRequestError, NotFoundError } from '../errors/catalog.ts';
import {
  FINAL_BATCH_STATUSES,
  listPage,
  type BatchErrorItem,
  type BatchObject,
  type BatchStatus,
  type FileObject,
  type FilePurpose,
  type ListPage,
} from './batch-objects.ts';
import {
  batchView,
  fileView,
  visible,
  type BatchRow,
  type BatchState,
  type FileRow,
  type Viewer,
} from './batch-rows.ts';
import { FileUpload, quotaError, storedChunks } from './file-upload.ts';
import type { SqlDb, SqlValue } from './sql-db.ts';

/** A request line as stored for execution. */
export interface LineRow {
  line_index: number;
  custom_id: string;
  body: string;
  status: 'pending' | 'dispatched' | 'succeeded' | 'failed';
  job_id: string | null;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Lines stored per transaction when a batch starts (a few milliseconds of SQLite work each). */
const START_CHUNK = 500;

/** Statuses in which a runner still has something to do. */
const ACTIVE = "('validating', 'in_progress', 'finalizing', 'cancelling')";

/**
 * Files, batches and their lines in the key-store database (SQLite or
 * PostgreSQL), so a batch outlives Redis and every process. Records the API
 * routes read and the batch runner advances; a line's outcome is written once
 * (a line already answered is never answered again).
 */
export class BatchStore {
  private readonly db: SqlDb;
  /** How long an uploaded file is kept, seconds; 0: until deleted. */
  readonly fileTtlSeconds: number;
  private lastMs = 0;

  /** `fileTtlSeconds`: how long an uploaded file is kept (`FILES_TTL`); 0 keeps it until deleted. */
  constructor(db: SqlDb, options: { fileTtlSeconds?: number } = {}) {
    this.db = db;
    this.fileTtlSeconds = options.fileTtlSeconds ?? 0;
  }

  /**
   * Ids that sort by creation, so lists page by id alone: a millisecond
   * count in 12 hex digits (strictly increasing in this process), then 64
   * random bits.
   */
  private newId(prefix: string): string {
    this.lastMs = Math.max(Date.now(), this.lastMs + 1);
    return `${prefix}${this.lastMs.toString(16).padStart(12, '0')}${randomBytes(8).toString('hex')}`;
  }

  /**
   * Starts an upload for `owner`: its bytes go to chunks as they are written.
   * With `quotaBytes`, the upload fails with the quota's 400 as soon as its
   * bytes and the owner's stored files exceed it.
   */
  async openUpload(owner: string, quotaBytes?: number): Promise<FileUpload> {
    return new FileUpload(
      this.db,
      this.newId('file-'),
      quotaBytes === undefined ? undefined : { bytes: quotaBytes, used: await this.storedBytes(owner) },
    );
  }

  /**
   * Stores an uploaded file whose chunks `upload` wrote, unless the owner's
   * uploaded files would then take more than `quotaBytes` (checked again in
   * the same statement, for uploads that ran side by side): 400
   * `invalid_request` saying how much is used, and the chunks are removed.
   */
  async createFile(input: {
    owner: string;
    filename: string;
    purpose: FilePurpose;
    /** The content, or the upload that stored it. */
    content: string | FileUpload;
    quotaBytes?: number;
  }): Promise<FileObject> {
    let upload = input.content;
    if (typeof upload === 'string') {
      const text = upload;
      upload = await this.openUpload(input.owner, input.quotaBytes);
      await upload.write(Buffer.from(text));
    }
    try {
      await upload.end();
      const created = nowSeconds();
      const quota = input.quotaBytes ?? Number.MAX_SAFE_INTEGER;
      const stored = await this.db.run(
        'INSERT INTO gateway_files (id, owner, purpose, filename, bytes, created_at) SELECT ?, ?, ?, ?, ?, ? WHERE (SELECT COALESCE(SUM(bytes), 0) FROM gateway_files WHERE owner = ? AND batch_id IS NULL) + ? <= ?',
        [
          upload.id,
          input.owner,
          input.purpose,
          input.filename,
          upload.bytes,
          created,
          input.owner,
          upload.bytes,
          quota,
        ],
      );
      if (stored === 0) throw quotaError(upload.bytes, quota, await this.storedBytes(input.owner));
      return fileView(
        {
          id: upload.id,
          owner: input.owner,
          purpose: input.purpose,
          filename: input.filename,
          bytes: upload.bytes,
          created_at: created,
          batch_id: null,
        },
        this.fileTtlSeconds,
      );
    } catch (err) {
      await upload.abort().catch(() => undefined);
      throw err;
    }
  }

  /** Bytes of the files `owner` uploaded and keeps. */
  private async storedBytes(owner: string): Promise<number> {
    const rows = await this.db.all<{ used: unknown }>(
      'SELECT COALESCE(SUM(bytes), 0) AS used FROM gateway_files WHERE owner = ? AND batch_id IS NULL',
      [owner],
    );
    return Number(rows[0]?.used ?? 0);
  }

  /** Deletes uploaded files older than `FILES_TTL`, except the input of a batch that still runs. Returns how many. */
  async purgeExpiredFiles(): Promise<number> {
    if (this.fileTtlSeconds <= 0) return 0;
    const before = nowSeconds() - this.fileTtlSeconds;
    const purged = await this.db.run(
      `DELETE FROM gateway_files WHERE batch_id IS NULL AND created_at < ? AND id NOT IN (SELECT input_file_id FROM gateway_batches WHERE kind = 'batch' AND status IN ${ACTIVE})`,
      [before],
    );
    // Chunks of purged files, and of uploads that never finished (their process died), once as old.
    await this.db.run(
      'DELETE FROM gateway_file_chunks WHERE created_at < ? AND file_id NOT IN (SELECT id FROM gateway_files)',
      [before],
    );
    return purged;
  }

  async file(id: string, viewer: Viewer): Promise<FileObject & { batch_id: string | null }> {
    const rows = await this.db.all<FileRow>(
      'SELECT id, owner, purpose, filename, bytes, created_at, batch_id FROM gateway_files WHERE id = ?',
      [id],
    );
    const row = rows[0];
    if (!row || !visible(row.owner, viewer)) throw new NotFoundError(`No file with id '${id}'.`);
    return { ...fileView(row, this.fileTtlSeconds), batch_id: row.batch_id };
  }

  /**
   * The file's text in pieces, in order: an uploaded file as it came, chunk
   * by chunk; an output or error file rendered from its batch's lines. Checks
   * the file and the viewer before it resolves.
   */
  async fileContent(id: string, viewer: Viewer): Promise<AsyncIterable<string>> {
    const file = await this.file(id, viewer);
    if (file.batch_id === null) return storedChunks(this.db, id);
    const batch = (
      await this.db.all<{ output_file_id: string | null }>('SELECT output_file_id FROM gateway_batches WHERE id = ?', [
        file.batch_id,
      ])
    )[0];
    const text = (await this.outputLines(file.batch_id, batch?.output_file_id === id ? 'succeeded' : 'failed'))
      .map((line) => `${line}\n`)
      .join('');
    return (async function* () {
      yield text;
    })();
  }

  async listFiles(
    viewer: Viewer,
    page: { after?: string; limit: number; purpose?: string },
  ): Promise<ListPage<FileObject>> {
    const rows = await this.page<FileRow>(
      'gateway_files',
      'id, owner, purpose, filename, bytes, created_at, batch_id',
      viewer,
      page,
      page.purpose ? ['purpose = ?', page.purpose] : undefined,
    );
    return listPage(
      rows.slice(0, page.limit).map((row) => fileView(row, this.fileTtlSeconds)),
      rows.length > page.limit,
    );
  }

  async deleteFile(id: string, viewer: Viewer): Promise<{ id: string; object: 'file'; deleted: true }> {
    await this.file(id, viewer);
    await this.db.run('DELETE FROM gateway_files WHERE id = ?', [id]);
    await this.db.run('DELETE FROM gateway_file_chunks WHERE file_id = ?', [id]);
    return { id, object: 'file', deleted: true };
  }

  /** A new batch, `validating`; or `failed` at once with `errors` found while the creating key was at hand. */
  async createBatch(input: {
    owner: string;
    /** The issued key's public id; absent for a static key. */
    keyId?: string | undefined;
    inputFileId: string;
    endpoint: string;
    completionWindow: string;
    windowSeconds: number;
    metadata: Record<string, string> | null;
    errors?: BatchErrorItem[];
  }): Promise<BatchObject> {
    const id = this.newId('batch_');
    const created = nowSeconds();
    const failed = input.errors !== undefined && input.errors.length > 0;
    await this.db.run(
      'INSERT INTO gateway_batches (id, owner, endpoint, input_file_id, completion_window, status, metadata, created_at, expires_at, failed_at, errors, key_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        id,
        input.owner,
        input.endpoint,
        input.inputFileId,
        input.completionWindow,
        failed ? 'failed' : 'validating',
        input.metadata ? JSON.stringify(input.metadata) : null,
        created,
        created + input.windowSeconds,
        failed ? created : null,
        failed ? JSON.stringify(input.errors) : null,
        input.keyId ?? null,
      ],
    );
    return this.batch(id, { owner: input.owner, admin: false });
  }

  async batch(id: string, viewer: Viewer): Promise<BatchObject> {
    const row = (await this.db.all<BatchRow>('SELECT * FROM gateway_batches WHERE id = ?', [id]))[0];
    if (!row || row.kind !== 'batch' || !visible(row.owner, viewer))
      throw new NotFoundError(`No batch with id '${id}'.`);
    return this.batchView(row);
  }

  async listBatches(viewer: Viewer, page: { after?: string; limit: number }): Promise<ListPage<BatchObject>> {
    const rows = await this.page<BatchRow>('gateway_batches', '*', viewer, page, ['kind = ?', 'batch']);
    return listPage(
      await Promise.all(rows.slice(0, page.limit).map((row) => this.batchView(row))),
      rows.length > page.limit,
    );
  }

  /** Asks for a batch to stop: `cancelling` until the runner has stopped its lines. */
  async requestCancel(id: string, viewer: Viewer): Promise<BatchObject> {
    const batch = await this.batch(id, viewer);
    if (FINAL_BATCH_STATUSES.has(batch.status) && batch.status !== 'cancelled') {
      throw new InvalidRequestError(`Batch '${id}' is already ${batch.status} and cannot be cancelled.`);
    }
    await this.db.run(
      "UPDATE gateway_batches SET status = 'cancelling', cancelling_at = ? WHERE id = ? AND status IN ('validating', 'in_progress')",
      [nowSeconds(), id],
    );
    return this.batch(id, viewer);
  }

  /**
   * Asks every running batch created with issued key `keyId` to stop (its key
   * was revoked): they go `cancelling`, as on a cancel, and their runners
   * stop their lines at their next step. Returns how many.
   */
  async cancelByKey(keyId: string): Promise<number> {
    return this.db.run(
      "UPDATE gateway_batches SET status = 'cancelling', cancelling_at = ? WHERE key_id = ? AND kind = 'batch' AND status IN ('validating', 'in_progress')",
      [nowSeconds(), keyId],
    );
  }

  // ---- for the runner ----

  /**
   * Takes (or renews) for `runner`, until `leaseMs` from now, every batch and
   * asynchronous job something still has to happen to and no other runner
   * holds a live lease on; resolves with the ones it holds, oldest first. Two
   * statements however many there are, so a backlog of jobs costs no more per poll.
   */
  async claimAll(runner: string, leaseMs: number): Promise<string[]> {
    const now = Date.now();
    await this.db.run(
      `UPDATE gateway_batches SET lease_owner = ?, lease_until = ? WHERE status IN ${ACTIVE} AND (lease_owner IS NULL OR lease_owner = ? OR lease_until < ?)`,
      [runner, now + leaseMs, runner, now],
    );
    const rows = await this.db.all<{ id: string }>(
      `SELECT id FROM gateway_batches WHERE status IN ${ACTIVE} AND lease_owner = ? ORDER BY created_at, id`,
      [runner],
    );
    return rows.map((row) => row.id);
  }

  /** Takes (or renews) the batch for `runner` until `leaseMs` from now, unless another runner holds a live lease. */
  async claim(id: string, runner: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    const changed = await this.db.run(
      'UPDATE gateway_batches SET lease_owner = ?, lease_until = ? WHERE id = ? AND (lease_owner IS NULL OR lease_owner = ? OR lease_until < ?)',
      [runner, now + leaseMs, id, runner, now],
    );
    return changed === 1;
  }

  async release(id: string, runner: string): Promise<void> {
    await this.db.run(
      'UPDATE gateway_batches SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?',
      [id, runner],
    );
  }

  async state(id: string): Promise<BatchState | undefined> {
    const row = (
      await this.db.all<BatchRow & { priority: unknown; key_id: unknown }>(
        'SELECT status, owner, input_file_id, expires_at, kind, priority, key_id FROM gateway_batches WHERE id = ?',
        [id],
      )
    )[0];
    if (!row) return undefined;
    return {
      status: row.status as BatchStatus,
      owner: row.owner,
      input_file_id: String(row.input_file_id),
      expires_at: Number(row.expires_at),
      kind: row.kind === 'job' ? 'job' : 'batch',
      priority: row.priority === null || row.priority === undefined ? undefined : Number(row.priority),
      keyId: typeof row.key_id === 'string' ? row.key_id : undefined,
    };
  }

  /** An uploaded input file's text, chunk by chunk; undefined once it is gone. */
  async inputContent(fileId: string): Promise<AsyncIterable<string> | undefined> {
    const rows = await this.db.all<{ id: string }>("SELECT id FROM gateway_files WHERE id = ? AND purpose = 'batch'", [
      fileId,
    ]);
    return rows[0] ? storedChunks(this.db, fileId) : undefined;
  }

  async failValidation(id: string, errors: BatchErrorItem[]): Promise<void> {
    await this.db.run(
      "UPDATE gateway_batches SET status = 'failed', failed_at = ?, errors = ? WHERE id = ? AND status = 'validating'",
      [nowSeconds(), JSON.stringify(errors), id],
    );
  }

  /**
   * Stores the validated lines and moves the batch to `in_progress`. The
   * lines go in chunks, one transaction each with a turn of the event loop
   * between them (SQLite's calls are synchronous: 50,000 rows at once held
   * the process for a second); the status moves last, so a runner that died
   * halfway starts over.
   */
  async start(id: string, lines: ReadonlyArray<{ customId: string; body: string }>): Promise<void> {
    await this.db.run('DELETE FROM gateway_batch_lines WHERE batch_id = ?', [id]);
    for (let from = 0; from < lines.length; from += START_CHUNK) {
      if (from > 0) await nextTurn();
      await this.db.runMany(
        "INSERT INTO gateway_batch_lines (batch_id, line_index, custom_id, body, status) VALUES (?, ?, ?, ?, 'pending')",
        lines.slice(from, from + START_CHUNK).map((line, i) => [id, from + i, line.customId, line.body]),
      );
    }
    await this.db.run(
      "UPDATE gateway_batches SET status = 'in_progress', in_progress_at = ? WHERE id = ? AND status = 'validating'",
      [nowSeconds(), id],
    );
  }

  /** Lines not answered yet, in order, skipping `exclude` (lines this runner has in flight). */
  async openLines(id: string, limit: number, exclude: ReadonlySet<number>): Promise<LineRow[]> {
    const rows = await this.db.all<LineRow>(
      `SELECT line_index, custom_id, body, status, job_id FROM gateway_batch_lines WHERE batch_id = ? AND status IN ('pending', 'dispatched') ORDER BY line_index LIMIT ?`,
      [id, limit + exclude.size],
    );
    return rows
      .map((row) => ({ ...row, line_index: Number(row.line_index) }))
      .filter((row) => !exclude.has(row.line_index))
      .slice(0, limit);
  }

  /**
   * Notes the job a line is enqueued as, before it is enqueued, so a restarted
   * runner can follow that job instead of calling again; false (enqueue
   * nothing) once the batch or job stopped, so a cancel that read no job id
   * has nothing left to take off a queue.
   */
  async markDispatched(id: string, index: number, jobId: string): Promise<boolean> {
    const changed = await this.db.run(
      "UPDATE gateway_batch_lines SET status = 'dispatched', job_id = ? WHERE batch_id = ? AND line_index = ? AND status IN ('pending', 'dispatched') AND EXISTS (SELECT 1 FROM gateway_batches WHERE id = ? AND status = 'in_progress')",
      [jobId, id, index, id],
    );
    return changed === 1;
  }

  /**
   * Records a line's outcome once, while its batch runs; false when the line
   * was already answered or the batch stopped (a reply arriving after a
   * cancel does not change files already written).
   */
  async finishLine(id: string, index: number, outcome: 'succeeded' | 'failed', output: string): Promise<boolean> {
    const changed = await this.db.run(
      "UPDATE gateway_batch_lines SET status = ?, output = ? WHERE batch_id = ? AND line_index = ? AND status IN ('pending', 'dispatched') AND EXISTS (SELECT 1 FROM gateway_batches WHERE id = ? AND status = 'in_progress')",
      [outcome, output, id, index, id],
    );
    return changed === 1;
  }

  /**
   * Gives every unanswered line of a batch that stopped (expired, cancelled)
   * its error-file line, `outputOf` the line as it stood (`pending`: never
   * sent; `dispatched`: its job was queued, and may have reached the
   * upstream). In chunks, as {@link start}.
   */
  async failUnanswered(
    id: string,
    outputOf: (line: { custom_id: string; status: 'pending' | 'dispatched' }) => string,
  ): Promise<void> {
    const rows = await this.db.all<{ line_index: unknown; custom_id: string; status: 'pending' | 'dispatched' }>(
      "SELECT line_index, custom_id, status FROM gateway_batch_lines WHERE batch_id = ? AND status IN ('pending', 'dispatched')",
      [id],
    );
    for (let from = 0; from < rows.length; from += START_CHUNK) {
      if (from > 0) await nextTurn();
      await this.db.runMany(
        "UPDATE gateway_batch_lines SET status = 'failed', output = ? WHERE batch_id = ? AND line_index = ? AND status IN ('pending', 'dispatched')",
        rows.slice(from, from + START_CHUNK).map((row) => [outputOf(row), id, Number(row.line_index)]),
      );
    }
  }

  async setStatus(id: string, from: readonly BatchStatus[], to: BatchStatus, stampColumn: string): Promise<boolean> {
    const placeholders = from.map(() => '?').join(', ');
    return (
      (await this.db.run(
        `UPDATE gateway_batches SET status = ?, ${stampColumn} = ? WHERE id = ? AND status IN (${placeholders})`,
        [to, nowSeconds(), id, ...from],
      )) === 1
    );
  }

  /** Writes the output and error files of a batch whose lines are settled, then moves it to `to`. */
  async finish(id: string, from: BatchStatus, to: BatchStatus, stampColumn: string): Promise<void> {
    const owner = (await this.state(id))?.owner ?? '';
    const fileOf = async (status: 'succeeded' | 'failed', name: string): Promise<string | null> => {
      const lines = await this.outputLines(id, status);
      if (lines.length === 0) return null;
      const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
      const filename = `${id}_${name}.jsonl`;
      // A runner that died between writing the file and the status left it behind: reuse it.
      const earlier = await this.db.all<{ id: string }>(
        'SELECT id FROM gateway_files WHERE batch_id = ? AND filename = ?',
        [id, filename],
      );
      if (earlier[0]) return earlier[0].id;
      const fileId = this.newId('file-');
      await this.db.run(
        'INSERT INTO gateway_files (id, owner, purpose, filename, bytes, created_at, batch_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [fileId, owner, 'batch_output', filename, bytes, nowSeconds(), id],
      );
      return fileId;
    };
    const output = await fileOf('succeeded', 'output');
    const error = await fileOf('failed', 'error');
    await this.db.run(
      `UPDATE gateway_batches SET status = ?, ${stampColumn} = ?, output_file_id = ?, error_file_id = ? WHERE id = ? AND status = ?`,
      [to, nowSeconds(), output, error, id, from],
    );
  }

  private async outputLines(batchId: string, status: 'succeeded' | 'failed'): Promise<string[]> {
    const rows = await this.db.all<{ output: string }>(
      'SELECT output FROM gateway_batch_lines WHERE batch_id = ? AND status = ? ORDER BY line_index',
      [batchId, status],
    );
    return rows.map((row) => row.output);
  }

  private async counts(id: string): Promise<BatchObject['request_counts']> {
    const rows = await this.db.all<{ status: string; n: unknown }>(
      'SELECT status, COUNT(*) AS n FROM gateway_batch_lines WHERE batch_id = ? GROUP BY status',
      [id],
    );
    const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0);
    return {
      total: rows.reduce((sum, row) => sum + Number(row.n), 0),
      completed: count('succeeded'),
      failed: count('failed'),
    };
  }

  /** Newest first (ids sort by creation); `after` is the last id of the previous page. One row more than asked tells `has_more`. */
  private async page<R>(
    table: string,
    columns: string,
    viewer: Viewer,
    page: { after?: string; limit: number },
    filter?: [string, SqlValue],
  ): Promise<R[]> {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (!viewer.admin) {
      where.push('owner = ?');
      params.push(viewer.owner);
    }
    if (filter) {
      where.push(filter[0]);
      params.push(filter[1]);
    }
    if (page.after) {
      where.push('id < ?');
      params.push(page.after);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    return this.db.all<R>(`SELECT ${columns} FROM ${table} ${clause} ORDER BY id DESC LIMIT ?`, [
      ...params,
      page.limit + 1,
    ]);
  }

  private async batchView(row: BatchRow): Promise<BatchObject> {
    return batchView(row, await this.counts(String(row.id)));
  }
}
