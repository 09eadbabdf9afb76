import type { Server } from 'node:http';
import { createApiRoot } from './composition/api-root.ts';
import { loadSettings } from './config/settings.ts';
import { EnvFile } from './admin/env-file.ts';
import { handleSignals } from './process/signals.ts';
import { ShutdownDeadline } from './process/shutdown-deadline.ts';

/** API process entry point: `node src/server.ts`. */
async function main(): Promise<void> {
  // ENV_FILE (optional) is layered over the environment before settings are read.
  const envFile = EnvFile.applyAtStart();
  const settings = loadSettings();
  const root = await createApiRoot(settings, envFile ? { envFile } : {});
  // Built: its background parts start, then it takes requests.
  root.start();
  const server: Server = root.http.createServer().listen(settings.PORT, settings.HOST, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : settings.PORT;
    root.logger.info({ port, host: settings.HOST }, `gateway listening on ${settings.HOST}:${port}`);
  });
  server.keepAliveTimeout = 65_000;
  // /metrics also on METRICS_PORT when it is set apart from PORT; failing to bind it fails the start
  let metricsServer: Server | undefined;
  if (root.metricsHttp) {
    const metricsPort = settings.METRICS_PORT;
    const listener = root.metricsHttp.createServer();
    await new Promise<void>((resolve, reject) => {
      listener.once('error', (err) =>
        reject(new Error(`cannot serve metrics on METRICS_PORT ${metricsPort}: ${err.message}`)),
      );
      listener.listen(metricsPort, settings.HOST, resolve);
    });
    metricsServer = listener;
    root.logger.info(
      { port: metricsPort, host: settings.HOST },
      `metrics listening on ${settings.HOST}:${metricsPort}`,
    );
  }

  const stop = async (signal: string) => {
    root.logger.info({ signal }, 'shutting down');
    // One deadline for the whole shutdown: in-flight replies first, then every part in reverse order of building.
    const deadline = new ShutdownDeadline(settings.SHUTDOWN_GRACE_MS);
    // Stop accepting; keep-alive connections are closed as soon as their in-flight reply ends.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    const sweeper = setInterval(() => server.closeIdleConnections(), 50);
    server.closeIdleConnections();
    await deadline.step('in-flight requests', () => closed);
    clearInterval(sweeper);
    const unfinished = await root.close(deadline);
    if (unfinished.length > 0)
      root.logger.warn({ unfinished }, 'stopped at the end of the shutdown grace: gave up on what was still pending');
    process.exit(0);
  };
  handleSignals({ stop, reloader: root.reloader, logger: root.logger });
}

main().catch((err: Error) => {
  process.stderr.write(`gateway failed to start: ${err.message}\n`);
  process.exit(1);
});
