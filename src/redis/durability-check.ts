import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.ts';

/** What Redis says about keeping data: `CONFIG GET` replies, or why it would not answer. */
export type RedisDurability =
  { readable: true; appendonly: string; save: string; maxmemoryPolicy: string } | { readable: false; reason: string };

/** Prefix of every warning, one log line per problem. */
const DURABILITY_WARNING = 'Redis may lose jobs';

/**
 * Reads the settings that decide whether queued jobs and asynchronous job
 * records survive a Redis restart or memory pressure. Managed Redis services
 * often refuse CONFIG (NOPERM, a renamed command): that is reported, not thrown.
 */
export async function readRedisDurability(redis: Redis): Promise<RedisDurability> {
  try {
    const reply = (await redis.call('CONFIG', 'GET', 'appendonly', 'save', 'maxmemory-policy')) as string[];
    const values = new Map<string, string>();
    for (let i = 0; i + 1 < reply.length; i += 2) values.set(String(reply[i]), String(reply[i + 1]));
    return {
      readable: true,
      appendonly: values.get('appendonly') ?? 'unknown',
      save: values.get('save') ?? '',
      maxmemoryPolicy: values.get('maxmemory-policy') ?? 'unknown',
    };
  } catch (err) {
    return { readable: false, reason: (err as Error).message };
  }
}

/** One sentence per way this Redis would lose jobs; empty when it keeps them. */
export function durabilityProblems(durability: RedisDurability): string[] {
  if (!durability.readable) {
    return [
      `${DURABILITY_WARNING}: cannot read its persistence settings (CONFIG GET refused: ${durability.reason}); ` +
        'make sure it runs with appendonly yes and maxmemory-policy noeviction, or a restart or memory pressure can drop queued requests',
    ];
  }
  const problems: string[] = [];
  if (durability.appendonly !== 'yes') {
    problems.push(
      durability.save.trim() === ''
        ? `${DURABILITY_WARNING}: persistence is off (appendonly ${durability.appendonly}, no RDB snapshots): a Redis restart loses every queued request (batches and asynchronous jobs are kept in the database and queued again); run Redis with --appendonly yes`
        : `${DURABILITY_WARNING}: only RDB snapshots are on (save "${durability.save}", appendonly ${durability.appendonly}): a Redis crash loses the jobs accepted since the last snapshot; run Redis with --appendonly yes`,
    );
  }
  if (durability.maxmemoryPolicy !== 'noeviction') {
    problems.push(
      `${DURABILITY_WARNING}: maxmemory-policy is ${durability.maxmemoryPolicy}: at maxmemory Redis evicts keys, queued jobs among them; run Redis with --maxmemory-policy noeviction`,
    );
  }
  return problems;
}

/**
 * Logs one line per durability problem of the Redis behind `redis`, once:
 * now if the connection is ready, else when it first is. Resolves when the
 * check has run or been scheduled; never throws. A warning, unless `level` is
 * `debug` (REDIS_DURABILITY_WARNING=false: scripts/start.sh has said it once for
 * all its processes).
 */
export async function warnIfRedisMayLoseJobs(
  redis: Redis,
  logger: Logger,
  level: 'warn' | 'debug' = 'warn',
): Promise<void> {
  const check = async () => {
    const durability = await readRedisDurability(redis);
    for (const problem of durabilityProblems(durability)) logger[level]({ redis: durability }, problem);
  };
  if (redis.status === 'ready') await check();
  else redis.once('ready', () => void check());
}
