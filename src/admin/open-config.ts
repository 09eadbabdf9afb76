import { ConfigStore } from '../config/config-store.ts';
import { ConfigError } from '../config/gateway-config.ts';
import type { Logger } from '../observability/logger.ts';
import { emptyConfig } from './config-reloader.ts';

/**
 * Opens config.yaml for the API. When it is unreadable or invalid the API
 * still starts, with no providers and the reason in `startupError`, so
 * /health/ready answers 503 with that reason and a fixed file can be loaded
 * with a reload instead of a restart loop.
 */
export async function openConfigLeniently(
  path: string,
  logger: Logger,
): Promise<{ configStore: ConfigStore; startupError?: string }> {
  try {
    return { configStore: await ConfigStore.open(path) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    logger.error({ err }, 'configuration failed to load: not ready until it is fixed and reloaded');
    return { configStore: new ConfigStore(emptyConfig(), path), startupError: err.message };
  }
}
