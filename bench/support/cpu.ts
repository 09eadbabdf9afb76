import { readFile } from 'node:fs/promises';
import type { Redis } from 'ioredis';

/** CPU time (user + system, all threads) of a process in ms, from Linux /proc; NaN when unknown. */
export async function cpuMs(pid: number | undefined): Promise<number> {
  if (!pid) return NaN;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (!stat) return NaN;
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15, in clock ticks (100/s on Linux).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Process id of the Redis server behind `redis` (for CPU accounting when it runs on this machine). */
export async function redisPid(redis: Redis): Promise<number | undefined> {
  const info = await redis.info('server');
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  return Number.isFinite(pid) ? pid : undefined;
}

/**
 * Measures the CPU each named process spends while `work` runs. Resolves with
 * `work`'s result and, per process, CPU ms in that span.
 */
export async function withCpu<T>(
  pids: Record<string, number | undefined>,
  work: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = Object.fromEntries(
    await Promise.all(Object.entries(pids).map(async ([name, pid]) => [name, await cpuMs(pid)] as const)),
  );
  const result = await work();
  const cpu: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) cpu[name] = (await cpuMs(pid)) - (before[name] ?? NaN);
  return { result, cpu };
}
