import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskApiKey } from '../../src/auth/api-key.ts';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Key guessing against two real API processes sharing one Redis: `api`
 * counts the TCP peer (TRUST_PROXY=0, the default), `proxied` sits behind
 * one trusted proxy (TRUST_PROXY=1) and counts the last X-Forwarded-For hop.
 * AUTH_FAILURE_LIMIT=5 per AUTH_FAILURE_WINDOW=4 s. Then what /stats shows to
 * whom, and how much of a short static key its mask gives away.
 */

const LIMIT = 5;
const WINDOW_S = 4;
const USER = 'gw_user_key_1';
const OTHER = 'gw_other_user_key_0002';
const ADMIN = 'gw_admin_key_for_stats_0003';
const prefix = uniquePrefix('key-guessing');
const redis = testRedis();
let gateway: Gateway;
let proxied: ApiReplica;

beforeAll(async () => {
  const env = {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: `${USER},${OTHER}`,
    ADMIN_API_KEYS: ADMIN,
    AUTH_FAILURE_LIMIT: String(LIMIT),
    AUTH_FAILURE_WINDOW: String(WINDOW_S),
    RATE_LIMIT_REQUESTS: '100000',
    DLP_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    PROVIDER_A_API_KEY: 'unused',
  };
  gateway = await startGateway({
    env,
    config: {
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: 'http://127.0.0.1:9/v1', models: ['a-4o'] },
      ],
    },
    providers: [],
  });
  proxied = await startApiReplica({ ...env, TRUST_PROXY: '1' }, gateway.configPath);
}, 60_000);

afterAll(async () => {
  await Promise.all([gateway?.stop(), proxied?.stop()]);
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

async function get(baseUrl: string, path: string, headers: Record<string, string>) {
  const res = await fetch(`${baseUrl}${path}`, { headers });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (text.startsWith('{') ? JSON.parse(text) : {}) as {
      error?: { code: string; type: string; message: string };
    } & Record<string, unknown>,
  };
}

describe('failed authentication is throttled per client address', () => {
  it('a flood of guesses from one address gets at most the limit of 401s, across both replicas; then 429 for every request', async () => {
    const bases = [gateway.baseUrl, proxied.baseUrl];
    const statuses: number[] = [];
    const until = Date.now() + 1_000;
    let n = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          const i = n++;
          statuses.push((await get(bases[i % 2]!, '/v1/models', { 'x-api-key': `gw_guess_${i}` })).status);
        }
      }),
    );
    expect(statuses.length).toBeGreaterThan(50);
    expect(statuses.filter((s) => s === 401)).toHaveLength(LIMIT);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);

    const refused = await get(gateway.baseUrl, '/v1/models', { 'x-api-key': 'gw_one_more_guess' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'too_many_failed_auth', type: 'rate_limit_error' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_S);
    expect(refused.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('x-ratelimit-reset')).toBe(String(retryAfter));
    expect(refused.body.request_id).toBe(refused.headers.get('x-request-id'));

    // A correct key from the blocked address is refused too, on both replicas: otherwise a 200 among the 429s would still tell a guess apart.
    for (const base of bases)
      expect((await get(base, '/v1/models', { 'x-api-key': USER })).body.error?.code).toBe('too_many_failed_auth');
    // A client-written X-Forwarded-For does not change the address where no proxy is trusted.
    expect(
      (await get(gateway.baseUrl, '/v1/models', { 'x-api-key': USER, 'x-forwarded-for': '192.0.2.77' })).status,
    ).toBe(429);
    // The count lives in Redis, by address, expiring with the window.
    const ttl = await redis.pttl(`${prefix}:authfail:127.0.0.1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(WINDOW_S * 1000);
  });

  it('other addresses are not affected; behind a trusted proxy the last X-Forwarded-For hop is the address', async () => {
    const other = { 'x-forwarded-for': '203.0.113.7' };
    expect((await get(proxied.baseUrl, '/v1/models', { ...other, 'x-api-key': USER })).status).toBe(200);
    // Entries left of the trusted hop are the client's own words: a guesser cannot rotate them to escape.
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      statuses.push(
        (
          await get(proxied.baseUrl, '/v1/models', {
            'x-forwarded-for': `10.0.0.${i}, 198.51.100.20`,
            'x-api-key': `gw_guess_b_${i}`,
          })
        ).status,
      );
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), 429, 429]);
    expect((await get(proxied.baseUrl, '/v1/models', { ...other, 'x-api-key': USER })).status).toBe(200);
  });

  it('requests without any key are not guesses and are not counted', async () => {
    const headers = { 'x-forwarded-for': '198.51.100.30' };
    for (let i = 0; i < LIMIT * 2; i++) {
      const res = await get(proxied.baseUrl, '/v1/models', headers);
      expect(res.status).toBe(401);
      expect(res.body.error?.code).toBe('invalid_api_key');
    }
    expect((await get(proxied.baseUrl, '/v1/models', { ...headers, 'x-api-key': USER })).status).toBe(200);
  });

  it('the block ends with the window: the address is served again', async () => {
    const address = { 'x-forwarded-for': '198.51.100.50' };
    for (let i = 0; i < LIMIT; i++)
      expect((await get(proxied.baseUrl, '/v1/models', { ...address, 'x-api-key': `gw_guess_c_${i}` })).status).toBe(
        401,
      );
    const refused = await get(proxied.baseUrl, '/v1/models', { ...address, 'x-api-key': USER });
    expect(refused.status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, Number(refused.headers.get('retry-after')) * 1000 + 300));
    expect((await get(proxied.baseUrl, '/v1/models', { ...address, 'x-api-key': USER })).status).toBe(200);
    expect((await get(proxied.baseUrl, '/v1/models', { ...address, 'x-api-key': 'gw_wrong_again' })).status).toBe(401);
  });
});

describe('/stats shows a non-admin key only its own entry, masked so that at least half stays hidden', () => {
  type Stats = { rate_limit_stats: { top_users: Array<{ api_key: string; requests: number }> } };
  const fresh = { 'x-forwarded-for': '198.51.100.40' };

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) await get(proxied.baseUrl, '/v1/models', { ...fresh, 'x-api-key': USER });
    for (let i = 0; i < 2; i++) await get(proxied.baseUrl, '/v1/models', { ...fresh, 'x-api-key': OTHER });
  });

  it('a non-admin key sees its own entry alone; an admin key sees every busy key', async () => {
    const mine = (await get(proxied.baseUrl, '/stats', { ...fresh, 'x-api-key': OTHER })).body as unknown as Stats;
    expect(mine.rate_limit_stats.top_users).toEqual([{ api_key: maskApiKey(OTHER), requests: 2 }]);
    const all = (await get(proxied.baseUrl, '/stats', { ...fresh, 'x-api-key': ADMIN })).body as unknown as Stats;
    expect(all.rate_limit_stats.top_users.map((u) => u.api_key).sort()).toEqual(
      [maskApiKey(OTHER), maskApiKey(USER)].sort(),
    );
  });

  it('the short static key gw_user_key_1 shows at most half of its characters', async () => {
    const stats = (await get(proxied.baseUrl, '/stats', { ...fresh, 'x-api-key': USER })).body as unknown as Stats;
    const [entry] = stats.rate_limit_stats.top_users;
    expect(entry?.requests).toBeGreaterThanOrEqual(3);
    const shown = (entry?.api_key ?? '').replace('…', '');
    expect(shown.length).toBeLessThanOrEqual(Math.floor(USER.length / 2));
    expect(USER.startsWith(shown.slice(0, 2))).toBe(true);
    expect(entry?.api_key).not.toBe('gw_use…ey_1');
  });
});
