import { createWorkerRoot } from '../src/composition/worker-root.ts';
import { loadSettings } from '../src/config/settings.ts';
import { EnvFile } from '../src/admin/env-file.ts';
import { handleSignals } from '../src/process/signals.ts';

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
  const providers = fromArgs.length > 0 ? fromArgs : (process.env.WORKER_PROVIDERS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (providers.length === 0) throw new Error('name at least one provider: node workers/provider-worker.ts provider_a');
  const root = await createWorkerRoot(settings, providers, envFile ? { envFile } : {});

  const stop = async (signal: string) => {
    root.logger.info({ signal, active: root.executor.active }, 'worker shutting down: finishing active jobs');
    await root.close();
    process.exit(0);
  };
  handleSignals({ stop, reloader: root.reloader, logger: root.logger });
}

main().catch((err: Error) => {
  process.stderr.write(`worker failed to start: ${err.message}\n`);
  process.exit(1);
});
