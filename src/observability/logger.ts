import { pino, type Logger } from 'pino';
import type { Settings } from '../config/settings.ts';

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

/**
 * The process logger: JSON lines by default, readable text with
 * LOG_FORMAT=text (pino-pretty, one line per entry so the access log stays
 * one line per request). DEBUG=true lowers the level to debug whatever
 * LOG_LEVEL says; redaction applies at every level.
 */
export function createLogger(settings: Pick<Settings, 'LOG_LEVEL' | 'LOG_FORMAT' | 'DEBUG'>, name: string): Logger {
  const options = {
    name,
    level: pinoLevel(settings.LOG_LEVEL, settings.DEBUG),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    base: { pid: process.pid },
  };
  if (settings.LOG_FORMAT === 'text') {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: false, translateTime: 'SYS:standard', singleLine: true } } });
  }
  return pino(options);
}
