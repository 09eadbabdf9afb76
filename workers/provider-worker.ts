import { createWorkerRoot } from '../src/composition/worker-root.ts';
import { loadSettings } from '../src/config/settings.ts';
import { EnvFile } from '../src/admin/env-file.ts';

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

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    root.logger.info({ signal, active: root.executor.active }, 'worker shutting down: finishing active jobs');
    await root.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // SIGHUP: reload config.yaml and ENV_FILE here, then in every API and worker process.
  process.on('SIGHUP', () => {
    root.reloader.reload('SIGHUP').then(
      (result) => root.logger.info({ processes: result.processes }, result.message),
      () => {}, // the reloader has logged why; the old configuration stays
    );
  });
}

main().catch((err: Error) => {
  process.stderr.write(`worker failed to start: ${err.message}\n`);
  process.exit(1);
});
