import { EnvFile } from '../admin/env-file.ts';
import { keyInvalidationChannel } from '../auth/key-invalidation.ts';
import { describeKeyStore, openKeyStore } from '../auth/open-key-store.ts';
import { BatchStore } from '../batches/batch-store.ts';
import { openBatchDb } from '../batches/sql-db.ts';
import { loadSettings, type Settings } from '../config/settings.ts';
import { createRedis, waitForReady } from '../redis/connections.ts';
import { CliUsageError, processIo, type CliIo } from './cli-io.ts';
import { KEYS_USAGE, runKeysCommand } from './keys-command.ts';

/**
 * `gateway <command>`: the operator's command line (package.json "bin").
 * It reads the same environment as the server (DATABASE_URL or KEY_DB_PATH,
 * REDIS_*, REDIS_KEY_PREFIX, ENV_FILE).
 */

const USAGE = `gateway — LLM gateway administration

${KEYS_USAGE}`;

/** Publishes a key change so running gateways drop their cached lookup. Best effort, 2 s at most. */
async function announceKeyChange(settings: Settings, keyHash: string): Promise<boolean> {
  const redis = createRedis(settings, 'command', 'cli');
  redis.on('error', () => {});
  try {
    if (!(await waitForReady(redis, 2_000))) return false;
    await redis.publish(keyInvalidationChannel(settings.REDIS_KEY_PREFIX), keyHash);
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Runs the CLI with `argv` (without node and script); returns the exit code. */
export async function runCli(
  argv: readonly string[],
  io: CliIo = processIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      io.out(USAGE);
      return command === undefined ? 2 : 0;
    }
    if (command !== 'keys') throw new CliUsageError(`unknown command '${command}'`);
    if (rest[0] === undefined || rest[0] === 'help' || rest[0] === '--help') {
      io.out(KEYS_USAGE);
      return rest[0] === undefined ? 2 : 0;
    }
    EnvFile.applyAtStart(env);
    const settings = loadSettings(env);
    const store = openKeyStore(settings);
    // Batches share the key store's database; it is opened only by a revoke, which cancels the key's running batches.
    const batchDb = openBatchDb(settings);
    try {
      await store.migrate();
      return await runKeysCommand(rest, {
        store,
        io,
        announce: (keyHash) => announceKeyChange(settings, keyHash),
        cancelBatches: (keyId) => new BatchStore(batchDb).cancelByKey(keyId),
      });
    } catch (err) {
      if (err instanceof CliUsageError) throw err;
      io.err(`gateway: ${(err as Error).message} (key store: ${describeKeyStore(settings)})`);
      return 1;
    } finally {
      await Promise.all([store.close(), batchDb.close()]);
    }
  } catch (err) {
    if (err instanceof CliUsageError) {
      io.err(`gateway: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`gateway: ${(err as Error).message}`);
    return 1;
  }
}
