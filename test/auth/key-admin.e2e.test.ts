import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayCli } from '../support/gateway-cli.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The `gateway keys` CLI and the `/admin/keys` API on one key store, SQLite
 * and PostgreSQL: what one writes the other reads, the running gateway
 * applies it, and usage written by the gateway is read back by both.
 */

const ADMIN = 'key-admin-e2e-admin';
const redis = testRedis();
let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a', behavior: { replyText: 'three word reply' } });
});
afterAll(async () => {
  await upstream?.close();
  redis.disconnect();
});

describe.each([{ store: 'sqlite' }, { store: 'postgres' }])(
  'keys CLI and admin API round trip ($store)',
  ({ store }) => {
    const prefix = uniquePrefix(`key-admin-${store}`);
    let database: TestDatabase | undefined;
    let env: Record<string, string>;
    let gateway: Gateway;

    const api = async (method: string, path: string, body?: unknown, key = ADMIN) => {
      const res = await fetch(`${gateway.baseUrl}${path}`, {
        method,
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Untyped };
    };
    const cli = async (...args: string[]) => {
      const run = await runGatewayCli(['keys', ...args], env);
      return { ...run, json: run.code === 0 && args.includes('--json') ? JSON.parse(run.stdout) : undefined };
    };

    beforeAll(async () => {
      database = store === 'postgres' ? await createTestDatabase('key_admin') : undefined;
      env = {
        REDIS_KEY_PREFIX: prefix,
        ADMIN_API_KEYS: ADMIN,
        PROVIDER_A_API_KEY: 'up-a',
        AUTH_CACHE_TTL_MS: '600000',
        CACHE_ENABLED: 'false',
        SEMANTIC_CACHE_ENABLED: 'false',
        ...(database
          ? { DATABASE_URL: database.url }
          : { KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-key-admin-')), 'keys.sqlite') }),
      };
      gateway = await startGateway({
        env,
        config: {
          providers: [
            {
              name: 'provider_a',
              api_key_env: 'PROVIDER_A_API_KEY',
              models: ['a-4o', 'a-mini'],
              base_url: upstream.url,
            },
          ],
          prices: { 'a-4o': { input_per_million: 2.5, output_per_million: 10 } },
        },
        providers: ['provider_a'],
      });
    });
    afterAll(async () => {
      await gateway?.stop();
      await database?.drop();
      await deletePrefix(redis, prefix);
    });

    it('a key made by the CLI with limits is read, changed and revoked through the admin API, and the gateway applies each change', async () => {
      const created = await cli(
        'create',
        '--owner',
        'svc-a',
        '--tpm',
        '5000',
        '--models',
        'a-4o',
        '--budget',
        '12.5/month',
        '--team',
        'search',
        '--expires',
        '30d',
        '--json',
      );
      expect(created.code, created.stderr).toBe(0);
      const { key, id } = created.json;
      const read = await api('GET', `/admin/keys/${id}`);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        id,
        owner: 'svc-a',
        tokens_per_minute: 5000,
        allowed_models: ['a-4o'],
        budget: { amount_usd: 12.5, period: 'month' },
        metadata: { team: 'search' },
      });
      expect(read.body.key).not.toBe(key);
      expect(Date.parse(read.body.expires_at)).toBeGreaterThan(Date.now() + 29 * 86_400_000);

      const openai = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
      await expect(
        openai.chat.completions.create({ model: 'a-mini', messages: [{ role: 'user', content: 'hi' }] }),
      ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);

      const patched = await api('PATCH', `/admin/keys/${id}`, {
        allowed_models: ['a-*'],
        tokens_per_minute: null,
        metadata: { user: 'u-1' },
      });
      expect(patched.status).toBe(200);
      const shown = await cli('show', id, '--json');
      expect(shown.json).toMatchObject({ allowed_models: ['a-*'], metadata: { team: 'search', user: 'u-1' } });
      expect(shown.json.tokens_per_minute).toBeUndefined();
      // The change reached the running gateway at once (its key cache lasts ten minutes here).
      const reply = await openai.chat.completions.create({
        model: 'a-mini',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(reply.choices[0]?.message.content).toBe('three word reply');

      const revoked = await api('DELETE', `/admin/keys/${id}`);
      expect(revoked.body).toMatchObject({ id, revoked: true });
      await waitFor(
        async () => (await fetch(`${gateway.baseUrl}/v1/models`, { headers: { 'x-api-key': key } })).status === 401,
        3_000,
        'revocation',
      );
      const listed = await cli('list', '--all', '--json');
      expect(listed.json.find((k: { id: string }) => k.id === id)).toMatchObject({
        revoked: true,
        allowed_models: ['a-*'],
      });
    });

    it('a key made by the admin API is changed by the CLI; its usage and spend are read back by both', async () => {
      const created = await api('POST', '/admin/keys', {
        owner: 'svc-b',
        rate_limit: { requests: 50 },
        metadata: { team: 'ads' },
      });
      expect(created.status).toBe(201);
      const { key, id } = created.body;
      expect(created.body).toMatchObject({
        owner: 'svc-b',
        admin: false,
        rate_limit: { requests: 50, window_seconds: 60 },
      });
      expect((await api('GET', '/admin/keys')).body.data.map((k: { id: string }) => k.id)).toContain(id);

      const updated = await cli('update', id, '--semantic-cache', 'off', '--rate-limit', 'none', '--json');
      expect(updated.code, updated.stderr).toBe(0);
      expect(updated.json.gateways_notified).toBe(true);
      const read = await api('GET', `/admin/keys/${id}`);
      expect(read.body).toMatchObject({ semantic_cache: false, metadata: { team: 'ads' } });
      expect(read.body.rate_limit).toBeUndefined();

      const openai = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
      const reply = await openai.chat.completions.create({
        model: 'a-4o',
        messages: [{ role: 'user', content: 'four words right here' }],
      });
      expect(reply.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3 });
      // 4 x 2.5 + 3 x 10 USD per million tokens = 40 micro-USD.
      let usage: Untyped;
      await waitFor(
        async () => (usage = (await api('GET', `/admin/keys/${id}/usage`)).body).total?.requests === 1,
        5_000,
        'usage in the key store',
      );
      expect(usage.total).toEqual({
        requests: 1,
        prompt_tokens: 4,
        completion_tokens: 3,
        cached_tokens: 0,
        cache_write_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: 0.00004,
      });
      const fromCli = await cli('usage', id, '--json');
      expect(fromCli.json.total).toEqual(usage.total);
      expect(fromCli.json.by_day[0]).toMatchObject({ day: new Date().toISOString().slice(0, 10), model: 'a-4o' });
      expect((await api('GET', `/admin/keys/${id}/usage?from=2000-01-01&to=2000-01-02`)).body.total.requests).toBe(0);
    });

    it('bad input is refused with the error envelope (API) or the usage (CLI)', async () => {
      const bad = await api('POST', '/admin/keys', { owner: 'x', budget: { amount_usd: -1, period: 'week' } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_request');
      expect(bad.body.error.message).toContain('budget');
      expect((await api('POST', '/admin/keys', { owner: 'x', surprise: true })).status).toBe(400);
      expect((await api('PATCH', '/admin/keys/key_0000000000000000', { tokens_per_minute: 5 })).body.error.code).toBe(
        'not_found',
      );
      expect((await api('GET', '/admin/keys/key_0000000000000000/usage?from=yesterday')).status).toBe(404);
      const { key } = (await api('POST', '/admin/keys', { owner: 'plain' })).body;
      expect((await api('GET', '/admin/keys', undefined, key)).body.error.code).toBe('admin_required');
      const run = await cli('create', '--owner', 'x', '--tpm', 'lots');
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('--tpm takes a whole number');
    });
  },
);
