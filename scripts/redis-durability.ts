import { EnvFile } from '../src/admin/env-file.ts';
import { loadSettings } from '../src/config/settings.ts';
import { createRedis } from '../src/redis/connections.ts';
import { durabilityProblems, readRedisDurability } from '../src/redis/durability-check.ts';

/**
 * Run once by scripts/start.sh before it starts the gateway: says in plain sentences, one per problem, whether
 * the Redis of these settings may lose jobs (the processes it starts then log that at debug only), or that it
 * is not reachable yet. Prints nothing when Redis keeps its data. Always exits 0: the gateway starts either way.
 */
// The same settings the processes will read: ENV_FILE layered over the environment.
EnvFile.applyAtStart();
const settings = loadSettings();
const redis = createRedis(settings, 'command', 'start-check');
redis.on('error', () => {});
try {
  await Promise.race([
    new Promise<void>((resolve) => redis.once('ready', () => resolve())),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2_000).unref()),
  ]);
  for (const problem of durabilityProblems(await readRedisDurability(redis))) console.error(`${problem}.`);
} catch {
  console.error('Redis is not reachable yet: requests that need it answer 503 until it is.');
} finally {
  redis.disconnect();
}
