import type { Redis } from 'ioredis';

/**
 * The Redis record of an asynchronous chat job: a hash the API creates and
 * the workers move on (start, finish). Part of the web <-> worker contract,
 * like the job data. The job itself lives in the key-store database
 * (`src/batches/job-rows.ts`); the API reads only `status` and `started_at`
 * here, to tell a running job from a waiting one.
 *
 * Fields: `id`, `status`, `owner`, `created_at`, `started_at`,
 * `completed_at` (epoch seconds), `result` (`chat.completion` JSON),
 * `error` (`{code,message}` JSON).
 */
export type AsyncJobStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

export function asyncJobKey(prefix: string, id: string): string {
  return `${prefix}:async:${id}`;
}

/**
 * Moves a record to `status` with extra fields, unless it is already final
 * (a cancelled job stays cancelled even if a worker finishes it) or gone.
 * KEYS[1] record; ARGV[1] ttl seconds, ARGV[2] status, ARGV[3..] field/value pairs.
 */
const TRANSITION = `
local current = redis.call('HGET', KEYS[1], 'status')
if not current or current == 'completed' or current == 'failed' or current == 'cancelled' then
  return 0
end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 3, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
`;

/** Applies a status change atomically; false when the record was final or missing. */
export async function transitionAsyncJob(
  redis: Redis,
  key: string,
  ttlSeconds: number,
  status: AsyncJobStatus,
  fields: Record<string, string> = {},
): Promise<boolean> {
  const args = Object.entries(fields).flat();
  const changed = await redis.eval(TRANSITION, 1, key, String(ttlSeconds), status, ...args);
  return changed === 1;
}
