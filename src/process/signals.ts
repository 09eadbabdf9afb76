import type { Logger } from '../observability/logger.ts';

/** What the reload signal needs: the reloader of the API or worker root. */
export interface ReloadTarget {
  reload(trigger: string): Promise<{ message: string; processes: unknown }>;
}

/**
 * Process signals of both entry points: SIGTERM and SIGINT stop gracefully
 * (once), SIGHUP reloads config.yaml and ENV_FILE here and, through the
 * reloader's broadcast, in every API and worker process.
 */
export function handleSignals(options: {
  stop: (signal: string) => Promise<void>;
  reloader: ReloadTarget;
  logger: Logger;
}): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    void options.stop(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    options.reloader.reload('SIGHUP').then(
      (result) => options.logger.info({ processes: result.processes }, result.message),
      () => {}, // the reloader has logged why; the old configuration stays
    );
  });
}
