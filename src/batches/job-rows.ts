import type { BatchOutputLine } from './batch-objects.ts';
import type { SqlDb } from './sql-db.ts';

/**
 * Asynchronous jobs (`/v1/chat/completions/jobs`) in the batch tables: a row
 * of `gateway_batches` with `kind = 'job'` and its one line, run by the batch
 * runner like any batch. Row statuses: `in_progress` while it waits or runs,
 * then `completed`, `failed` or `cancelled`; `deleted` keeps the id (and no
 * content) until it expires, so it answers 404 rather than `job_lost`.
 * `expires_at` is the last change plus `retain_seconds`.
 */
export interface JobRow {
  id: string;
  owner: string;
  status: string;
  created_at: number;
  completed_at: number | null;
  expires_at: number;
  /** The request as queued (validated, DLP-screened). */
  body: string;
  /** BullMQ job id of its line, once enqueued. */
  job_id: string | null;
  /** The line's output (see {@link BatchOutputLine}), once answered. */
  output: BatchOutputLine | null;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The job rows of the batch tables: what the jobs API and the runner read and change. */
export class JobRows {
  private readonly db: SqlDb;

  constructor(db: SqlDb) {
    this.db = db;
  }

  /** Stores a job ready to run: its line first, so a row never exists without it. */
  async insert(job: {
    id: string;
    owner: string;
    keyId?: string | undefined;
    body: string;
    priority: number;
    retainSeconds: number;
    createdAt: number;
  }): Promise<void> {
    await this.db.run(
      "INSERT INTO gateway_batch_lines (batch_id, line_index, custom_id, body, status) VALUES (?, 0, ?, ?, 'pending')",
      [job.id, job.id, job.body],
    );
    await this.db.run(
      `INSERT INTO gateway_batches (id, owner, endpoint, input_file_id, completion_window, status, created_at, expires_at, kind, priority, retain_seconds, key_id)
       VALUES (?, ?, '/v1/chat/completions', '', '', 'in_progress', ?, ?, 'job', ?, ?, ?)`,
      [
        job.id,
        job.owner,
        job.createdAt,
        job.createdAt + job.retainSeconds,
        job.priority,
        job.retainSeconds,
        job.keyId ?? null,
      ],
    );
  }

  /** The job, if it exists and has not expired (whoever owns it). */
  async get(id: string): Promise<JobRow | undefined> {
    const rows = await this.db.all<Record<string, unknown>>(
      `SELECT b.id, b.owner, b.status, b.created_at, b.completed_at, b.expires_at, l.body, l.job_id, l.output
       FROM gateway_batches b LEFT JOIN gateway_batch_lines l ON l.batch_id = b.id AND l.line_index = 0
       WHERE b.id = ? AND b.kind = 'job'`,
      [id],
    );
    const row = rows[0];
    if (!row || Number(row.expires_at) <= nowSeconds()) return undefined;
    return {
      id: String(row.id),
      owner: String(row.owner),
      status: String(row.status),
      created_at: Number(row.created_at),
      completed_at: row.completed_at === null || row.completed_at === undefined ? null : Number(row.completed_at),
      expires_at: Number(row.expires_at),
      body: String(row.body ?? ''),
      job_id: (row.job_id as string | null) ?? null,
      output: row.output ? (JSON.parse(String(row.output)) as BatchOutputLine) : null,
    };
  }

  /** Moves a job that still waits or runs to `cancelled`; false when it had already finished. */
  async cancel(id: string): Promise<boolean> {
    return (await this.settle(id, "status = 'in_progress'", 'cancelled')) === 1;
  }

  /** Forgets the request and its answer; the id stays (as `deleted`) until it expires. */
  async delete(id: string): Promise<void> {
    await this.settle(id, "status <> 'deleted'", 'deleted');
    await this.db.run("UPDATE gateway_batch_lines SET body = '', output = NULL WHERE batch_id = ?", [id]);
  }

  /** The runner's last step: the job takes its line's outcome (`completed` or `failed`). */
  async finish(id: string): Promise<void> {
    const line = (
      await this.db.all<{ status: string }>(
        'SELECT status FROM gateway_batch_lines WHERE batch_id = ? AND line_index = 0',
        [id],
      )
    )[0];
    await this.settle(id, "status = 'in_progress'", line?.status === 'succeeded' ? 'completed' : 'failed');
  }

  /** Removes jobs past their expiry, finished or not (an unfinished one is past `ASYNC_JOB_TTL` and nobody may read it any more). */
  async purgeExpired(): Promise<string[]> {
    const now = nowSeconds();
    const expired = await this.db.all<{ id: string; status: string }>(
      "SELECT id, status FROM gateway_batches WHERE kind = 'job' AND expires_at <= ?",
      [now],
    );
    if (expired.length === 0) return [];
    await this.db.runMany(
      'DELETE FROM gateway_batch_lines WHERE batch_id = ?',
      expired.map((row) => [row.id]),
    );
    await this.db.runMany(
      "DELETE FROM gateway_batches WHERE id = ? AND kind = 'job'",
      expired.map((row) => [row.id]),
    );
    return expired.filter((row) => row.status === 'in_progress').map((row) => row.id);
  }

  private settle(id: string, when: string, status: string): Promise<number> {
    const now = nowSeconds();
    return this.db.run(
      `UPDATE gateway_batches SET status = ?, completed_at = ?, expires_at = ? + retain_seconds WHERE id = ? AND kind = 'job' AND ${when}`,
      [status, now, now, id],
    );
  }
}
