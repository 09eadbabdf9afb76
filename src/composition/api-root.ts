import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { StaticKeyAuthenticator } from '../auth/static-key-authenticator.ts';
import { ConfigStore } from '../config/config-store.ts';
import type { Settings } from '../config/settings.ts';
import { createApp } from '../http/app.ts';
import { chatCompletionsRouter } from '../http/routes/chat-completions.ts';
import { modelsRouter } from '../http/routes/models.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { ChatDispatcher } from '../queue/chat-dispatcher.ts';
import { ChatQueues } from '../queue/chat-queues.ts';
import { createRedis, waitForReady } from '../redis/connections.ts';
import { StreamReader } from '../streams/stream-reader.ts';

/** Everything the API process is made of. */
export interface ApiRoot {
  settings: Settings;
  logger: Logger;
  app: Express;
  configStore: ConfigStore;
  redis: Redis;
  close(): Promise<void>;
}

/** BullMQ's key prefix under the gateway's prefix. */
export function bullPrefix(settings: Settings): string {
  return `${settings.REDIS_KEY_PREFIX}:bull`;
}

/** The composition root of the API: builds every dependency once and wires the app. */
export async function createApiRoot(settings: Settings, options: { logger?: Logger } = {}): Promise<ApiRoot> {
  const logger = options.logger ?? createLogger(settings, 'gateway-api');
  const configStore = await ConfigStore.open(settings.CONFIG_PATH);
  warnUnconfiguredProviders(configStore, logger);

  const redis = createRedis(settings, 'command', 'api');
  redis.on('error', (err) => logger.debug({ err: err.message }, 'redis command connection error'));
  if (!(await waitForReady(redis, 2_000))) logger.warn('Redis is not reachable yet: requests that need it answer 503 until it is');
  const queues = new ChatQueues({ connection: redis, prefix: bullPrefix(settings) });
  const reader = new StreamReader({ connect: () => createRedis(settings, 'blocking', 'api-reader') });
  const dispatcher = new ChatDispatcher({
    config: () => configStore.current,
    queues,
    reader,
    redis,
    prefix: settings.REDIS_KEY_PREFIX,
  });
  const authenticator = new StaticKeyAuthenticator(settings.API_KEYS, settings.ADMIN_API_KEYS);
  if (authenticator.size === 0) logger.warn('no API keys configured: set API_KEYS or create keys; every request will be rejected');

  const app = createApp({
    logger,
    authenticator,
    publicPaths: settings.PUBLIC_PATHS,
    maxBodyBytes: settings.MAX_REQUEST_BYTES,
    routers: [
      modelsRouter(() => configStore.current),
      chatCompletionsRouter({ dispatcher, logger, maxBodyBytes: settings.MAX_REQUEST_BYTES }),
    ],
  });

  return {
    settings,
    logger,
    app,
    configStore,
    redis,
    async close() {
      await reader.close();
      await queues.close();
      redis.disconnect();
    },
  };
}

function warnUnconfiguredProviders(configStore: ConfigStore, logger: Logger): void {
  for (const provider of configStore.current.providers) {
    if (!process.env[provider.api_key_env]) {
      logger.warn({ provider: provider.name, env: provider.api_key_env }, 'provider key not set: its models will answer provider_error');
    }
  }
}
