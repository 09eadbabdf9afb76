import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PinoPretty } from 'pino-pretty';
import type { Settings } from '../config/settings.ts';
import { environmentSecrets, errorSerializer } from './log-error.ts';

export type { Logger } from 'pino';

/**
 * Paths pino blanks in every log line. Keys, auth headers and message bodies
 * never reach the logs, even at DEBUG.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
  'headers["proxy-authorization"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers["x-goog-api-key"]',
  'apiKey',
  'api_key',
  'key',
  'password',
  '*.apiKey',
  '*.api_key',
  '*.password',
  'messages',
  '*.messages',
  'content',
  '*.content',
];

function pinoLevel(level: Settings['LOG_LEVEL'], debug: boolean): string {
  if (debug && level !== 'trace') return 'debug';
  if (level === 'warning') return 'warn';
  if (level === 'critical') return 'fatal';
  return level;
}

/** Ids of the trace a log line belongs to, as OpenTelemetry names them in logs. */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /**
   * The trace of the work in progress, added to every line written during it.
   * Set only when tracing is on. @defaultValue none
   */
  traceIds?: () => TraceIds | undefined;
  /** Where credential-holding variables are found ({@link environmentSecrets}). @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Where JSON lines go (tests read them back). @defaultValue stdout */
  destination?: DestinationStream;
}

type LoggerSettings = Pick<Settings, 'LOG_LEVEL' | 'LOG_FORMAT' | 'DEBUG'> &
  Partial<Pick<Settings, 'API_KEYS' | 'ADMIN_API_KEYS' | 'REDIS_PASSWORD'>>;

/**
 * The process logger: JSON lines by default, readable text with
 * LOG_FORMAT=text (pino-pretty in the process, one line per entry so the
 * access log stays one line per request; docs/decisions/text-logs-in-process.md
 * says why no transport thread). DEBUG=true lowers the level to debug whatever
 * LOG_LEVEL says; redaction applies at every level. Every line names the
 * host and pid; `err` is written as type, message and stack, scrubbed of the
 * process's secrets (log-error.ts).
 */
export function createLogger(settings: LoggerSettings, name: string, options: LoggerOptions = {}): Logger {
  const given = [
    ...(settings.API_KEYS ?? []),
    ...(settings.ADMIN_API_KEYS ?? []),
    ...(settings.REDIS_PASSWORD ? [settings.REDIS_PASSWORD] : []),
  ];
  const traceIds = options.traceIds;
  const config = {
    name,
    level: pinoLevel(settings.LOG_LEVEL, settings.DEBUG),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    base: { pid: process.pid, hostname: hostname() },
    serializers: { err: errorSerializer(environmentSecrets(options.env ?? process.env, given)) },
    ...(traceIds ? { mixin: () => traceIds() ?? {} } : {}),
  };
  if (settings.LOG_FORMAT === 'text') {
    // Loaded only here: JSON-line processes (the images, the bench) would carry it for nothing (about 12 MiB).
    const prettyStream = (createRequire(import.meta.url)('pino-pretty') as { PinoPretty: typeof PinoPretty })
      .PinoPretty;
    const pretty = prettyStream({
      colorize: false,
      translateTime: 'SYS:standard',
      singleLine: true,
      ignore: '',
      sync: true,
      ...(options.destination ? { destination: options.destination } : {}),
    });
    return pino(config, pretty);
  }
  return options.destination ? pino(config, options.destination) : pino(config);
}
