import type { Server } from 'node:http';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { awaitRateLimit, rateLimit } from '../../src/http/middleware/rate-limit.ts';
import {
  SlidingWindowLimiter,
  type RateLimitDecision,
  type RateLimitRule,
} from '../../src/ratelimit/sliding-window-limiter.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { openContext } from '../../src/pipeline/request-context.ts';
import { createPrincipal } from '../../src/auth/principal.ts';

/**
 * The middleware asks the limiter to send its script at once only for a
 * request that is alone in the process; under load the script leaves with the
 * turn's other writes. The limiter here is the real one on the real Redis,
 * recording what it was asked.
 */

const prefix = uniquePrefix('ratelimit-send-now');
const redis = testRedis();

class RecordingLimiter extends SlidingWindowLimiter {
  readonly sendNow: boolean[] = [];
  override consume(
    subject: string,
    rule: RateLimitRule,
    statsLabel = '',
    options: { sendNow?: boolean } = {},
  ): Promise<RateLimitDecision> {
    this.sendNow.push(options.sendNow === true);
    return super.consume(subject, rule, statsLabel, options);
  }
}

const limiter = new RecordingLimiter({ redis, prefix });
let release: (() => void) | undefined;
const app = express();
app.use((_req, res, next) => {
  // The request-id middleware's part: every request has its context.
  openContext(res, 'req_send_now').principal = createPrincipal({
    keyHash: 'send-now-subject',
    owner: 'o',
    maskedKey: 'gw_…test',
    admin: false,
  });
  next();
});
app.use(rateLimit({ limiter, rule: () => ({ limit: 1_000, windowMs: 60_000 }) }), awaitRateLimit());
app.get('/v1/now', (_req, res) => {
  res.json({ ok: true });
});
app.get('/v1/hold', (_req, res) => {
  release = () => res.json({ held: true });
});
app.get('/health', (_req, res) => {
  res.json({ ok: true });
});

const server: Server = await new Promise((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('rate limit: the script of a lone request is sent at once', () => {
  it('alone: sendNow; with another request in flight: held for the turn; alone again once it closed', async () => {
    expect((await fetch(`${base}/v1/now`)).status).toBe(200);
    expect(limiter.sendNow).toEqual([true]);

    const held = fetch(`${base}/v1/hold`);
    await expect.poll(() => release !== undefined).toBe(true);
    expect(limiter.sendNow).toEqual([true, true]);

    const concurrent = await fetch(`${base}/v1/now`);
    expect(concurrent.status).toBe(200);
    expect(concurrent.headers.get('x-ratelimit-remaining')).toBe('997');
    expect(limiter.sendNow).toEqual([true, true, false]);

    release?.();
    expect((await held).status).toBe(200);
    expect((await fetch(`${base}/v1/now`)).status).toBe(200);
    expect(limiter.sendNow).toEqual([true, true, false, true]);
  });

  it('paths outside /v1 are neither limited nor counted as in flight', async () => {
    const before = limiter.sendNow.length;
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(limiter.sendNow.length).toBe(before);
  });
});
