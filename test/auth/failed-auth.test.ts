import type { Request, Response } from 'express';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { generateApiKey, maskApiKey } from '../../src/auth/api-key.ts';
import { FailedAuthThrottle } from '../../src/auth/failed-auth-throttle.ts';
import { StaticKeyAuthenticator } from '../../src/auth/static-key-authenticator.ts';
import { addressGroup, clientAddress } from '../../src/http/client-address.ts';
import { authenticate } from '../../src/http/middleware/authenticate.ts';
import { openContext } from '../../src/pipeline/request-context.ts';
import { freePort } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/** The pieces of the key-guessing defence: masks, client addresses, the throttle on real Redis, the middleware's hot path. */

const prefix = uniquePrefix('failed-auth');
const redis = testRedis();
afterAll(async () => {
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('maskApiKey', () => {
  it('hides at least half of a key of any length', () => {
    for (let length = 0; length <= 80; length++) {
      const key = 'k'.repeat(length);
      const shown = maskApiKey(key).replace('…', '').length;
      expect(shown, `length ${length}`).toBeLessThanOrEqual(Math.floor(length / 2));
    }
  });

  it('keeps the issued-key form (first 6, last 4) and shortens short keys', () => {
    const key = generateApiKey();
    expect(maskApiKey(key)).toBe(`${key.slice(0, 6)}…${key.slice(-4)}`);
    expect(maskApiKey('gw_user_key_1')).toBe('gw_u…_1');
    expect(maskApiKey('abcd')).toBe('ab…');
    expect(maskApiKey('a')).toBe('…');
  });
});

describe('client address', () => {
  const req = (peer: string, forwarded?: string) =>
    ({
      socket: { remoteAddress: peer },
      headers: forwarded ? { 'x-forwarded-for': forwarded } : {},
    }) as unknown as Request;

  it('is the TCP peer unless proxies are trusted, then the hop that many places from the right', () => {
    expect(clientAddress(req('10.1.1.1', '6.6.6.6'), 0)).toBe('10.1.1.1');
    expect(clientAddress(req('10.1.1.1', '6.6.6.6, 203.0.113.5'), 1)).toBe('203.0.113.5');
    expect(clientAddress(req('10.1.1.1', '6.6.6.6, 203.0.113.5, 10.0.0.2'), 2)).toBe('203.0.113.5');
    // Fewer hops than trusted proxies: the leftmost one there is.
    expect(clientAddress(req('10.1.1.1'), 2)).toBe('10.1.1.1');
  });

  it('groups IPv6 by its /64 and unmaps IPv4-mapped addresses', () => {
    expect(addressGroup('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressGroup('192.0.2.1')).toBe('192.0.2.1');
  });
});

describe('FailedAuthThrottle on Redis', () => {
  it('counts `limit` failures, then reports a block that this process remembers without Redis', async () => {
    const throttle = new FailedAuthThrottle({ redis, prefix, limit: 3, windowMs: 10_000 });
    const verdicts = [];
    for (let i = 0; i < 4; i++) verdicts.push(await throttle.recordFailure('192.0.2.10'));
    expect(verdicts.map((v) => [v.blocked, v.remaining])).toEqual([
      [false, 2],
      [false, 1],
      [false, 0],
      [true, 0],
    ]);
    expect(verdicts[3]!.resetMs).toBeGreaterThan(9_000);
    expect(throttle.blocking).toBe(true);
    expect(throttle.blockedFor('192.0.2.10')?.blocked).toBe(true);
    expect(throttle.blockedFor('192.0.2.11')).toBeUndefined();
    // Refused attempts are not counted: the window holds the three failures only.
    expect(await redis.zcard(throttle.key('192.0.2.10'))).toBe(3);
  });

  it('shares the count between processes (two throttles, one Redis)', async () => {
    const a = new FailedAuthThrottle({ redis, prefix, limit: 2, windowMs: 10_000 });
    const b = new FailedAuthThrottle({ redis, prefix, limit: 2, windowMs: 10_000 });
    expect((await a.recordFailure('192.0.2.20')).blocked).toBe(false);
    expect((await a.recordFailure('192.0.2.20')).blocked).toBe(false);
    expect(b.blockedFor('192.0.2.20')).toBeUndefined();
    expect((await b.recordFailure('192.0.2.20')).blocked).toBe(true);
    expect(b.blockedFor('192.0.2.20')?.blocked).toBe(true);
  });

  it('counts in the process while Redis is unreachable, with the same rule', async () => {
    const down = new Redis({
      port: await freePort(),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const errors: Error[] = [];
    const clock = { t: 1_000 };
    const throttle = new FailedAuthThrottle({
      redis: down,
      prefix,
      limit: 2,
      windowMs: 5_000,
      now: () => clock.t,
      onError: (err) => errors.push(err),
    });
    expect((await throttle.recordFailure('192.0.2.30')).blocked).toBe(false);
    expect((await throttle.recordFailure('192.0.2.30')).blocked).toBe(false);
    expect(await throttle.recordFailure('192.0.2.30')).toMatchObject({ blocked: true, resetMs: 5_000 });
    expect(errors.length).toBe(3);
    clock.t += 5_001;
    expect(throttle.blockedFor('192.0.2.30')).toBeUndefined();
    expect((await throttle.recordFailure('192.0.2.30')).blocked).toBe(false);
    down.disconnect();
  });
});

describe('authenticate with the throttle', () => {
  const KEY = 'gw_throttle_unit_key_0123';
  const run = async (middleware: ReturnType<typeof authenticate>, headers: Record<string, string>) => {
    const req = { path: '/v1/models', headers, socket: { remoteAddress: '192.0.2.40' } } as unknown as Request;
    const res = { locals: {} } as unknown as Response;
    openContext(res, 'req_test');
    const next = vi.fn();
    const error = await middleware(req, res, next).then(
      () => undefined,
      (err: unknown) => err as { code?: string },
    );
    return { next, error };
  };

  it('a valid key never reaches the throttle while no address is blocked; a wrong one is counted', async () => {
    const throttle = {
      blocking: false,
      blockedFor: vi.fn(),
      recordFailure: vi.fn(async () => ({ blocked: false, limit: 1, remaining: 0, resetMs: 1_000 })),
    };
    const middleware = authenticate(new StaticKeyAuthenticator([KEY], []), [], {
      throttle: throttle as unknown as FailedAuthThrottle,
    });
    const ok = await run(middleware, { 'x-api-key': KEY });
    expect(ok.next).toHaveBeenCalledOnce();
    expect(throttle.blockedFor).not.toHaveBeenCalled();
    expect(throttle.recordFailure).not.toHaveBeenCalled();

    expect((await run(middleware, {})).error?.code).toBe('invalid_api_key');
    expect(throttle.recordFailure).not.toHaveBeenCalled();
    expect((await run(middleware, { 'x-api-key': 'wrong' })).error?.code).toBe('invalid_api_key');
    expect(throttle.recordFailure).toHaveBeenCalledWith('192.0.2.40');
  });
});
