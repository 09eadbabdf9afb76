import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { createKeyWithCli, runGatewayCli } from '../support/gateway-cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Issued keys through the running gateway: keys made with the `gateway` CLI
 * authenticate on every API replica, admin keys reach /admin, and a revocation
 * is pushed to every replica at once (their cache TTL is ten minutes here,
 * so only the Redis broadcast can explain a prompt rejection).
 */

const CONFIG = { providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models: ['a-4o'] }] };
const redis = testRedis();
afterAll(() => redis.disconnect());

function client(baseUrl: string, apiKey: string): OpenAI {
  return new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0 });
}

async function status(
  baseUrl: string,
  path: string,
  key: string | undefined,
  init: RequestInit = {},
): Promise<{ status: number; body: Untyped }> {
  const res = await fetch(`${baseUrl}${path}`, { ...init, headers: key ? { 'X-API-Key': key } : {} });
  return { status: res.status, body: await res.json() };
}

describe.each([
  { store: 'sqlite', database: false },
  { store: 'postgres', database: true },
])('issued keys on a running gateway ($store)', ({ database: usePostgres }) => {
  const prefix = uniquePrefix(`auth-e2e`);
  let database: TestDatabase | undefined;
  let env: Record<string, string>;
  let gateway: Gateway;
  let replica: ApiReplica;

  beforeAll(async () => {
    database = usePostgres ? await createTestDatabase('auth_e2e') : undefined;
    env = {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: 'static-client-key',
      AUTH_CACHE_TTL_MS: '600000',
      RATE_LIMIT_REQUESTS: '1000',
      PROVIDER_A_API_KEY: 'unused',
      ...(database
        ? { DATABASE_URL: database.url }
        : { KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-auth-')), 'keys.sqlite') }),
    };
    gateway = await startGateway({ env, config: CONFIG, providers: [] });
    replica = await startApiReplica(env, gateway.configPath);
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), replica?.stop()]);
    await database?.drop();
    await deletePrefix(redis, prefix);
  });

  it('a key from `gateway keys create` works on every replica, as Bearer (OpenAI SDK) and as X-API-Key', async () => {
    const { key } = await createKeyWithCli(env, 'alice');
    for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
      const models = await client(baseUrl, key).models.list();
      expect(models.data.map((m) => m.id)).toEqual(['a-4o']);
      expect((await status(baseUrl, '/v1/models', key)).status).toBe(200);
    }
  });

  it('API_KEYS keep working beside issued keys; a wrong or missing key is 401 invalid_api_key', async () => {
    expect((await status(gateway.baseUrl, '/v1/models', 'static-client-key')).status).toBe(200);
    const wrong = await client(gateway.baseUrl, `gw_${'x'.repeat(43)}`)
      .models.list()
      .catch((err: unknown) => err);
    expect(wrong).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((wrong as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
    const missing = await status(gateway.baseUrl, '/v1/models', undefined);
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error' });
  });

  it('only admin keys reach /admin/*: 403 admin_required for a client key, 200 for `create --admin`', async () => {
    const { key: plain } = await createKeyWithCli(env, 'bob');
    const { key: admin } = await createKeyWithCli(env, 'ops', true);
    const denied = await status(gateway.baseUrl, '/admin/reload-config', plain, { method: 'POST' });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'admin_required', type: 'permission_error' });
    expect((await status(gateway.baseUrl, '/admin/anything-else', 'static-client-key')).status).toBe(403);
    const allowed = await status(replica.baseUrl, '/admin/reload-config', admin, { method: 'POST' });
    expect(allowed.status).toBe(200);
    expect(allowed.body.status).toBe('success');
  });

  it('a revoked key is rejected by every replica at once, despite a ten-minute cache', async () => {
    const { key, id } = await createKeyWithCli(env, 'carol');
    // Both replicas now hold the key in their cache.
    for (const baseUrl of [gateway.baseUrl, replica.baseUrl])
      expect((await status(baseUrl, '/v1/models', key)).status).toBe(200);

    const revoked = await runGatewayCli(['keys', 'revoke', id], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).not.toContain('could not be notified');
    for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
      await waitFor(
        async () => (await status(baseUrl, '/v1/models', key)).status === 401,
        3_000,
        `revocation on ${baseUrl}`,
      );
    }
    const err = await client(replica.baseUrl, key)
      .models.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
