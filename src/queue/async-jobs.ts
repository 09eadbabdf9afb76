import type { Redis } from 'ioredis';
import type { ChatCompletion } from '../chat/types.ts';
import { InvalidRequestError, JobLostError, NotFoundError } from '../errors/catalog.ts';
import type { AsyncJobIds } from './async-job-id.ts';
import { asyncJobKey, FINAL_STATUSES, transitionAsyncJob, type AsyncJobStatus } from './async-job-record.ts';

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
  /** Epoch seconds after which the record is deleted. */
  expires_at: number;
}

/** Options of {@link AsyncJobStore}. */
export interface AsyncJobStoreOptions {
  /** Command connection. */
  redis: Redis;
  prefix: string;
  /** How long records (and results) are kept, seconds. */
  ttlSeconds: number;
  /** Mints ids that still vouch for a job once its record is gone. */
  ids: AsyncJobIds;
}

/**
 * API side of asynchronous jobs: records live in Redis hashes with a TTL and
 * are visible only to the key owner that created them (others get 404, so ids
 * cannot be probed). A record missing although its id says it cannot have
 * expired yet was lost by Redis: its owner gets 410 `job_lost`.
 */
export class AsyncJobStore {
  private readonly options: AsyncJobStoreOptions;

  constructor(options: AsyncJobStoreOptions) {
    this.options = options;
  }

  get ttlSeconds(): number {
    return this.options.ttlSeconds;
  }

  newId(owner: string): string {
    return this.options.ids.mint(owner);
  }

  key(id: string): string {
    return asyncJobKey(this.options.prefix, id);
  }

  async create(id: string, owner: string, model: string): Promise<AsyncJobView> {
    const now = Math.floor(Date.now() / 1000);
    const key = this.key(id);
    await this.options.redis
      .multi()
      .hset(key, { id, status: 'queued', owner, model, created_at: String(now) })
      .expire(key, this.options.ttlSeconds)
      .exec();
    return this.view({ id, status: 'queued', owner, model, created_at: String(now) }, this.options.ttlSeconds);
  }

  /** The record, if it exists and belongs to `owner`; 410 if Redis lost it; 404 otherwise. */
  async get(id: string, owner: string): Promise<AsyncJobView> {
    const key = this.key(id);
    const [fields, ttl] = await Promise.all([this.options.redis.hgetall(key), this.options.redis.ttl(key)]);
    if (fields.status && fields.owner === owner) return this.view(fields, ttl);
    // Another owner's record, or the tombstone of a deleted one.
    if (fields.owner !== undefined) throw new NotFoundError(`No asynchronous job '${id}'.`);
    const createdAt = this.options.ids.createdAt(id, owner);
    if (createdAt === undefined) throw new NotFoundError(`No asynchronous job '${id}'.`);
    // Every write renews the TTL, so a record cannot expire within ttlSeconds of its creation.
    if (Date.now() / 1000 - createdAt < this.options.ttlSeconds) throw new JobLostError(id, new Date(createdAt * 1000));
    throw new NotFoundError(`No asynchronous job '${id}': records are kept ${this.options.ttlSeconds} seconds after their last change.`);
  }

  /** Cancels a queued or running job; 400 when it already finished. */
  async cancel(id: string, owner: string): Promise<AsyncJobView> {
    const before = await this.get(id, owner);
    if (FINAL_STATUSES.has(before.status) && before.status !== 'cancelled') {
      throw new InvalidRequestError(`Job '${id}' is already ${before.status} and cannot be cancelled.`);
    }
    await transitionAsyncJob(this.options.redis, this.key(id), this.options.ttlSeconds, 'cancelled', {
      completed_at: String(Math.floor(Date.now() / 1000)),
    });
    return this.get(id, owner);
  }

  /**
   * Deletes the record, leaving a tombstone (the owner only) for the TTL, so
   * that the id answers 404 rather than `job_lost`; resolves with what it held.
   */
  async delete(id: string, owner: string): Promise<AsyncJobView> {
    const job = await this.get(id, owner);
    const key = this.key(id);
    await this.options.redis.multi().del(key).hset(key, { owner, deleted: '1' }).expire(key, this.options.ttlSeconds).exec();
    return job;
  }

  /** Removes the record of a job that was never accepted (the client got an error, never its id): no tombstone needed. */
  async discard(id: string): Promise<void> {
    await this.options.redis.del(this.key(id));
  }

  private view(fields: Record<string, string>, ttl: number): AsyncJobView {
    const num = (v: string | undefined) => (v ? Number(v) : null);
    return {
      id: fields.id ?? '',
      object: 'chat.completion.job',
      status: fields.status as AsyncJobStatus,
      model: fields.model ?? '',
      created_at: Number(fields.created_at),
      started_at: num(fields.started_at),
      completed_at: num(fields.completed_at),
      result: fields.result ? (JSON.parse(fields.result) as ChatCompletion) : null,
      error: fields.error ? (JSON.parse(fields.error) as { code: string; message: string }) : null,
      expires_at: Math.floor(Date.now() / 1000) + Math.max(0, ttl),
    };
  }
}
