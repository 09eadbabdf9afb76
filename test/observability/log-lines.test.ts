import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Log lines: every one names the host; an `err` is an object with type,
 * message and stack and carries no secret, for errors that hold one: a Redis
 * AUTH failure (ioredis keeps the command, password included, on the error),
 * URL credentials, a provider key quoted by a server.
 */

const REDIS_PASSWORD = 'redis-pw-7f3a9c2e1b';
const PROVIDER_KEY = 'prov-secret-value-5d8e2a';
const GATEWAY_KEY = 'gw_logs_key_0123456789abcdefghijklmnop';

function capture(
  env: NodeJS.ProcessEnv,
  settings: { API_KEYS?: string[]; LOG_FORMAT?: 'json' | 'text' } = {},
): { logger: Logger; text: () => string; lines: () => Record<string, Untyped>[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ LOG_LEVEL: 'debug', LOG_FORMAT: 'json', DEBUG: false, ...settings }, 'log-test', {
    env,
    destination: destination as never,
  });
  const text = () => chunks.join('');
  return {
    logger,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe('log lines', () => {
  it('name the host and pid on every line', () => {
    const { logger, lines } = capture({});
    logger.info('one');
    logger.child({ component: 'x' }).warn({ a: 1 }, 'two');
    expect(lines()).toHaveLength(2);
    for (const line of lines()) expect(line).toMatchObject({ hostname: hostname(), pid: process.pid });
  });

  it('write a Redis authentication failure as type, message and stack, without the password ioredis keeps on it', async () => {
    const { logger, lines } = capture({ REDIS_PASSWORD });
    // An ACL user that does not exist: the test Redis answers WRONGPASS.
    const redis = new Redis({
      port: 6379,
      host: '127.0.0.1',
      username: 'no-such-user',
      password: REDIS_PASSWORD,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const emitted = new Promise<Error>((resolve) => redis.once('error', resolve));
    await redis.connect().catch(() => {});
    const err = await emitted;
    redis.disconnect();
    expect(err).toBeInstanceOf(Error);
    // The raw error does hold the password: this is what the serializer must not let through.
    expect((err as { command?: { args?: string[] } }).command?.args).toContain(REDIS_PASSWORD);
    logger.error({ err }, 'redis down');
    const line = lines()[0]!;
    expect(line.err).toEqual({
      type: 'ReplyError',
      message: expect.stringMatching(/WRONGPASS|invalid/i),
      stack: expect.stringContaining('ReplyError'),
    });
    expect(JSON.stringify(line)).not.toContain(REDIS_PASSWORD);
  });

  it('remove credentials from message, stack and cause: configured keys, URL passwords, bearer tokens', () => {
    const { logger, lines } = capture(
      { PROVIDER_A_API_KEY: PROVIDER_KEY, REDIS_URL: 'redis://app:url-pass-9c1d7e@cache:6379/0' },
      { API_KEYS: [GATEWAY_KEY] },
    );
    const cause = Object.assign(new Error(`upstream said: invalid key ${PROVIDER_KEY}`), { code: 'ECONNRESET' });
    const err = new Error(
      `fetch https://user:url-pass-9c1d7e@proxy.local/ failed with Authorization: Bearer ${GATEWAY_KEY}`,
      { cause },
    );
    logger.warn({ err }, 'upstream failed');
    logger.warn({ err: `plain text with ${PROVIDER_KEY}` }, 'a string');
    const [first, second] = lines() as [Record<string, Untyped>, Record<string, Untyped>];
    expect(first.err.type).toBe('Error');
    expect(first.err.message).toContain('[redacted]');
    expect(first.err.stack).toContain('log-lines.test.ts');
    expect(first.err.cause).toMatchObject({
      type: 'Error',
      code: 'ECONNRESET',
      message: 'upstream said: invalid key [redacted]',
    });
    expect(second.err).toEqual({ type: 'Error', message: 'plain text with [redacted]' });
    const text = JSON.stringify(lines());
    for (const secret of [PROVIDER_KEY, GATEWAY_KEY, 'url-pass-9c1d7e']) expect(text).not.toContain(secret);
  });

  it('in text form are written in the process before the call returns, one line each, secrets still redacted', () => {
    const { logger, text } = capture({}, { LOG_FORMAT: 'text', API_KEYS: [GATEWAY_KEY] });
    logger.info({ req: { headers: { authorization: `Bearer ${GATEWAY_KEY}` } }, status: 200 }, 'GET /v1/models 200');
    // No transport thread: the line is in the destination before info() returned.
    expect(text()).toMatch(/^\[.+\] INFO \(log-test\/\d+ on .+\): GET \/v1\/models 200 \{.*"status":200.*\}\n$/);
    logger.error({ err: new Error(`failed with ${GATEWAY_KEY}`) }, 'request failed');
    expect(text()).toContain('ERROR (log-test/');
    expect(text()).toContain('[redacted]');
    expect(text()).not.toContain(GATEWAY_KEY);
  });
});
