import { createWorkerRoot } from '../src/composition/worker-root.ts';
import { loadSettings } from '../src/config/settings.ts';
import { EnvFile } from '../src/admin/env-file.ts';
import { handleSignals } from '../src/process/signals.ts';
import { ShutdownDeadline } from '../src/process/shutdown-deadline.ts';

/** How long after the grace the last-resort exit fires, ms: close() is bounded by the grace itself, this only catches a bug in it. */
const HARD_EXIT_SLACK_MS = 250;

/**
 * Provider worker entry point:
 *   node workers/provider-worker.ts provider_a [provider_b ...]
 * or WORKER_PROVIDERS=provider_a,provider_b. Run as many as needed per provider.
 */
async function main(): Promise<void> {
  // ENV_FILE (optional) is layered over the environment before settings are read.
  const envFile = EnvFile.applyAtStart();
  const settings = loadSettings();
  const fromArgs = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const providers =
    fromArgs.length > 0
      ? fromArgs
      : (process.env.WORKER_PROVIDERS ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  if (providers.length === 0) throw new Error('name at least one provider: node workers/provider-worker.ts provider_a');
  const root = await createWorkerRoot(settings, providers, envFile ? { envFile } : {});
  // Built: it starts consuming its queues.
  root.start();

  const stop = async (signal: string) => {
    const deadline = new ShutdownDeadline(settings.SHUTDOWN_GRACE_MS);
    root.logger.info(
      { signal, active: root.executor.active, graceMs: settings.SHUTDOWN_GRACE_MS },
      'worker shutting down: finishing active jobs',
    );
    setTimeout(() => {
      root.logger.error(
        { unfinished: deadline.unfinished, active: root.executor.active },
        'worker shutdown: grace over, exiting with work still pending',
      );
      process.exit(1);
    }, settings.SHUTDOWN_GRACE_MS + HARD_EXIT_SLACK_MS);
    const unfinished = await root.close(deadline);
    if (unfinished.length === 0) process.exit(0);
    // Exit 1: something was abandoned (an active job's reply, counters, a clean goodbye to Redis).
    root.logger.warn(
      { unfinished, active: root.executor.active },
      'worker stopped at the end of its grace: gave up on what was still pending',
    );
    process.exit(1);
  };
  handleSignals({ stop, reloader: root.reloader, logger: root.logger });
}

main().catch((err: Error) => {
  process.stderr.write(`worker failed to start: ${err.message}\n`);
  process.exit(1);
});
