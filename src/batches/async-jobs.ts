import type { Redis } from 'ioredis';
import type { JobRow, JobRows } from './job-rows.ts';
import type { ChatCompletion } from '../chat/types.ts';
import { InvalidRequestError, JobLostError, NotFoundError } from '../errors/catalog.ts';
import type { AsyncJobIds } from './async-job-id.ts';
import { asyncJobKey, type AsyncJobStatus } from '../queue/async-job-record.ts';

/** What clients see of an asynchronous job (`object: "chat.completion.job"`). */
export interface AsyncJobView {
  id: string;
  object: 'chat.completion.job';
  status: AsyncJobStatus;
  model: string;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  /** The `chat.completion`, once `completed`. */
  result: ChatCompletion | null;
  /** `{code, message}` from the error catalog, once `failed`. */
  error: { code: string; message: string } | null;
  /** Epoch seconds after which the job is deleted. */
  expires_at: number;
}

/** Options of {@link AsyncJobStore}. */
export interface AsyncJobStoreOptions {
  /** The jobs' rows in the key-store database: what a job is. */
  rows: JobRows;
  /** Command connection: each job's Redis record, which its worker marks `in_progress`. */
  redis: Redis;
  prefix: string;
  /** How long jobs (and results) are kept after their last change, seconds. */
  ttlSeconds: number;
  /** Mints ids that still vouch for a job once its row is gone. */
  ids: AsyncJobIds;
}

/**
 * API side of asynchronous jobs. A job is a one-line batch in the key-store
 * database (`src/batches/job-rows.ts`), run by the batch runner, so it
 * outlives Redis and every process. Its small Redis record only tells a
 * waiting job from a running one (the worker marks it `in_progress`, with
 * `started_at`); when Redis lost it, a running job reads as `queued` until
 * it finishes. Jobs are visible only to the key owner that created them
 * (others get 404, so ids cannot be probed). A row missing although its id
 * says it cannot have expired yet was lost by the database: 410 `job_lost`.
 */
export class AsyncJobStore {
  private readonly options: AsyncJobStoreOptions;

  constructor(options: AsyncJobStoreOptions) {
    this.options = options;
  }

  newId(owner: string): string {
    return this.options.ids.mint(owner);
  }

  key(id: string): string {
    return asyncJobKey(this.options.prefix, id);
  }

  /** Stores a job ready to run: `request` is the validated, screened request JSON. */
  async create(
    id: string,
    owner: string,
    request: { model: string; json: string; priority: number; keyId?: string | undefined },
  ): Promise<AsyncJobView> {
    const now = Math.floor(Date.now() / 1000);
    const key = this.key(id);
    const { ttlSeconds } = this.options;
    await this.options.redis
      .multi()
      .hset(key, { id, status: 'queued', owner, created_at: String(now) })
      .expire(key, ttlSeconds)
      .exec();
    await this.options.rows.insert({
      id,
      owner,
      keyId: request.keyId,
      body: request.json,
      priority: request.priority,
      retainSeconds: ttlSeconds,
      createdAt: now,
    });
    return {
      id,
      object: 'chat.completion.job',
      status: 'queued',
      model: request.model,
      created_at: now,
      started_at: null,
      completed_at: null,
      result: null,
      error: null,
      expires_at: now + ttlSeconds,
    };
  }

  /** The job, if it exists and belongs to `owner`; 410 if the database lost it; 404 otherwise. */
  async get(id: string, owner: string): Promise<AsyncJobView> {
    return this.view(await this.row(id, owner));
  }

  /** Cancels a queued or running job; 400 when it already finished. Resolves with the job and the queue job to stop, if any. */
  async cancel(
    id: string,
    owner: string,
  ): Promise<{ job: AsyncJobView; queued: { jobId: string; model: string } | undefined }> {
    const before = await this.row(id, owner);
    const cancelled = await this.options.rows.cancel(id);
    if (!cancelled && before.status !== 'cancelled') {
      throw new InvalidRequestError(`Job '${id}' is already ${statusOf(before.status)} and cannot be cancelled.`);
    }
    // Read after the cancel: no line is queued once it is stored, so this job id is the last one.
    const after = await this.row(id, owner);
    return { job: await this.view(after), queued: cancelled ? queuedJob(after) : undefined };
  }

  /** Forgets the job and its result; its id answers 404 (not `job_lost`) until it would have expired. */
  async delete(id: string, owner: string): Promise<{ queued: { jobId: string; model: string } | undefined }> {
    const before = await this.row(id, owner);
    await this.options.rows.delete(id);
    await this.options.redis.del(this.key(id)).catch(() => {});
    if (before.status !== 'in_progress') return { queued: undefined };
    // Read after the delete (see cancel); the request is gone from the row by now, the model was read before.
    const jobId = (await this.options.rows.get(id))?.job_id;
    return { queued: jobId ? { jobId, model: modelOf(before.body) } : undefined };
  }

  private async row(id: string, owner: string): Promise<JobRow> {
    const row = await this.options.rows.get(id);
    if (row && row.owner === owner && row.status !== 'deleted') return row;
    // Another owner's job, or a deleted one.
    if (row) throw new NotFoundError(`No asynchronous job '${id}'.`);
    const createdAt = this.options.ids.createdAt(id, owner);
    if (createdAt === undefined) throw new NotFoundError(`No asynchronous job '${id}'.`);
    // A row is kept ttlSeconds after its last change, so it cannot have expired within ttlSeconds of its creation.
    if (Date.now() / 1000 - createdAt < this.options.ttlSeconds) throw new JobLostError(id, new Date(createdAt * 1000));
    throw new NotFoundError(
      `No asynchronous job '${id}': jobs are kept ${this.options.ttlSeconds} seconds after their last change.`,
    );
  }

  private async view(row: JobRow): Promise<AsyncJobView> {
    const status = statusOf(row.status);
    // Only the worker knows when a job starts; Redis unreachable or without the record is no error.
    const record = await this.options.redis.hmget(this.key(row.id), 'status', 'started_at').catch(() => [null, null]);
    const started = record[1] ? Number(record[1]) : null;
    const body = row.output?.response?.body as { error?: { code?: string; message?: string } } | undefined;
    return {
      id: row.id,
      object: 'chat.completion.job',
      status: status === 'queued' && record[0] !== null && record[0] !== 'queued' ? 'in_progress' : status,
      model: modelOf(row.body),
      created_at: row.created_at,
      started_at: started,
      completed_at: status === 'queued' ? null : row.completed_at,
      result: status === 'completed' ? ((body ?? null) as ChatCompletion | null) : null,
      error:
        status === 'failed'
          ? {
              code: body?.error?.code ?? row.output?.error?.code ?? 'internal_error',
              message: body?.error?.message ?? row.output?.error?.message ?? 'The job failed.',
            }
          : null,
      expires_at: row.expires_at,
    };
  }
}

/** A row's status as the API names it: a job that waits or runs is `in_progress` in the batch tables. */
function statusOf(rowStatus: string): AsyncJobStatus {
  return rowStatus === 'in_progress' ? 'queued' : (rowStatus as AsyncJobStatus);
}

function modelOf(body: string): string {
  try {
    return String((JSON.parse(body) as { model?: unknown }).model ?? '');
  } catch {
    return '';
  }
}

/** The queue job of a job that was waiting or running, to take off its queue or abort. */
function queuedJob(row: JobRow): { jobId: string; model: string } | undefined {
  return row.job_id ? { jobId: row.job_id, model: modelOf(row.body) } : undefined;
}
