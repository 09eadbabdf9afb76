import { z } from 'zod';
import { envBoolean, envEnum, envList, envNumber, envOptionalString, envString } from './env-parsers.ts';

/**
 * Every environment variable the gateway reads, validated in one place.
 * A wrong value is a start-up error naming the variable. Provider keys are not
 * read here: config.yaml names their variables (`api_key_env`) and they are
 * read where the upstream is called.
 */

const LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'warn', 'error', 'critical', 'fatal'] as const;

const settingsSchema = z.object({
  /** HTTP port of the API. Default 8000. */
  PORT: envNumber(8000, { int: true, min: 0, max: 65535 }),
  /** Listen address. Default 0.0.0.0. */
  HOST: envString('0.0.0.0'),
  /** Path of config.yaml. Default ./config.yaml. */
  CONFIG_PATH: envString('config.yaml'),

  REDIS_HOST: envString('localhost'),
  REDIS_PORT: envNumber(6379, { int: true, min: 1, max: 65535 }),
  REDIS_PASSWORD: envOptionalString(),
  REDIS_DB: envNumber(0, { int: true, min: 0, max: 15 }),
  /** Prefix of every Redis key the gateway writes. Default `gw`. */
  REDIS_KEY_PREFIX: envString('gw'),

  API_KEYS: envList(),
  ADMIN_API_KEYS: envList(),
  /** Paths served without a key (exact match). Default none. */
  PUBLIC_PATHS: envList(),

  CACHE_TTL: envNumber(3600, { int: true, min: 1 }),
  SEMANTIC_CACHE_THRESHOLD: envNumber(0.95, { min: 0, max: 1 }),
  SEMANTIC_CACHE_ENABLED: envBoolean(true),

  RATE_LIMIT_REQUESTS: envNumber(10, { int: true, min: 1 }),
  RATE_LIMIT_WINDOW: envNumber(60, { int: true, min: 1 }),

  DLP_ENABLED: envBoolean(true),
  DLP_CONFIDENCE_THRESHOLD: envNumber(0.8, { min: 0, max: 1 }),
  DLP_ACTION: envEnum(['redact', 'block', 'log'] as const, 'redact'),

  PROMETHEUS_METRICS_ENABLED: envBoolean(true),
  METRICS_PORT: envNumber(8000, { int: true, min: 0, max: 65535 }),

  LOG_LEVEL: envEnum(LOG_LEVELS, 'info'),
  LOG_FORMAT: envEnum(['json', 'text'] as const, 'json'),
  DEBUG: envBoolean(false),
  /** Accepted for compatibility; use `npm run dev` for reload on code changes. */
  RELOAD: envBoolean(false),

  /** Largest accepted request body in bytes. Default 1 MiB. */
  MAX_REQUEST_BYTES: envNumber(1024 * 1024, { int: true, min: 1024 }),
  /** How long a reply stream lives in Redis, seconds. Default 300. */
  RESPONSE_STREAM_TTL: envNumber(300, { int: true, min: 5 }),
  /** BullMQ lock of an active job, ms; a dead worker's job is retaken after it expires. Default 10000. */
  WORKER_LOCK_DURATION_MS: envNumber(10_000, { int: true, min: 500 }),
  /** How often workers look for stalled jobs, ms. Default 5000. */
  WORKER_STALLED_INTERVAL_MS: envNumber(5_000, { int: true, min: 200 }),
  /** Time allowed for in-flight work on SIGTERM, ms. Default 25000. */
  SHUTDOWN_GRACE_MS: envNumber(25_000, { int: true, min: 0 }),

  DATABASE_URL: envOptionalString(),
  /** SQLite file of the key store when DATABASE_URL is unset. Default ./data/gateway.sqlite. */
  KEY_DB_PATH: envString('data/gateway.sqlite'),
});

export type Settings = z.output<typeof settingsSchema>;

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** Reads and validates settings; throws {@link SettingsError} naming each bad variable. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new SettingsError(`Invalid environment: ${lines.join('; ')}`);
  }
  return parsed.data;
}
