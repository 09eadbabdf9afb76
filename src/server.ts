import type { Server } from 'node:http';
import { createApiRoot } from './composition/api-root.ts';
import { loadSettings } from './config/settings.ts';

/** API process entry point: `node src/server.ts`. */
async function main(): Promise<void> {
  const settings = loadSettings();
  const root = await createApiRoot(settings);
  const server: Server = root.app.listen(settings.PORT, settings.HOST, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : settings.PORT;
    root.logger.info({ port, host: settings.HOST }, `gateway listening on ${settings.HOST}:${port}`);
  });
  server.keepAliveTimeout = 65_000;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    root.logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => process.exit(0), settings.SHUTDOWN_GRACE_MS).unref();
    server.close();
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.once('close', () => resolve()));
    clearTimeout(timer);
    await root.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: Error) => {
  process.stderr.write(`gateway failed to start: ${err.message}\n`);
  process.exit(1);
});
