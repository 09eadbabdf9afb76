import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callJobs, submitJob, waitForJobStatus } from '../support/async-jobs.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

/**
 * The ACL rule docs/deployment.md gives for the gateway's Redis user is
 * enough, and needed as written: the API and worker processes run as a user
 * created from that very line, on a redis-server whose default user is off,
 * and every Redis feature of the request path is exercised while Redis' ACL
 * LOG (every command or key refused) holds nothing but the optional start-up
 * check (`CONFIG GET`), which the documentation leaves out on purpose.
 */

const KEY = 'gw_e2e_redis_acl_key_0123456789';
const ADMIN = 'gw_e2e_redis_acl_admin_0123456789';
const PREFIX = 'gwacl';
const PASSWORD = 'acl-pass-word';
let server: RedisServer;
let admin: Redis;
let upstream: FakeUpstream;
let gateway: Gateway;

/** The `ACL SETUSER gateway …` line of docs/deployment.md, for this test's password and prefix. */
function documentedRule(): string[] {
  const doc = readFileSync(resolve(import.meta.dirname, '../../docs/deployment.md'), 'utf8');
  const line = doc.split('\n').find((l) => l.startsWith('ACL SETUSER gateway '));
  if (!line) throw new Error('docs/deployment.md has no ACL SETUSER gateway line');
  return line.replace('>PASSWORD', `>${PASSWORD}`).replaceAll('gw:*', `${PREFIX}:*`).split(' ').slice(1);
}

beforeAll(async () => {
  server = await startRedisServer({
    args: ['--save', '', '--appendonly', 'no', '--user', 'admin', 'on', '>admin-pass', '~*', '&*', '+@all'],
  });
  admin = new Redis({ host: '127.0.0.1', port: server.port, username: 'admin', password: 'admin-pass' });
  await admin.call('ACL', 'SETUSER', 'default', 'off');
  await admin.call('ACL', ...documentedRule());
  await admin.call('ACL', 'LOG', 'RESET');
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-a-secret' });
  gateway = await startGateway({
    env: {
      REDIS_URL: `redis://gateway:${PASSWORD}@127.0.0.1:${server.port}`,
      REDIS_KEY_PREFIX: PREFIX,
      API_KEYS: KEY,
      ADMIN_API_KEYS: ADMIN,
      PROVIDER_A_API_KEY: 'upstream-a-secret',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '8',
    },
    config: {
      providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] }],
    },
    providers: ['provider_a'],
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  admin?.disconnect();
  await server?.stop('SIGTERM');
});

describe('the documented Redis ACL', () => {
  it('serves chat (JSON, streamed, cached), the rate limit, asynchronous jobs and the cache admin with nothing else refused', async () => {
    const client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
    const ask = (content: string) =>
      client.chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content }] }).withResponse();
    const first = await ask('under an acl');
    expect(first.data.choices[0]?.message.content).toBe('Echo: under an acl');
    expect(first.response.headers.get('x-cache')).toBe('MISS');
    expect((await ask('under an acl')).response.headers.get('x-cache')).toBe('HIT');

    const stream = await client.chat.completions.create({
      model: 'a-4o',
      stream: true,
      messages: [{ role: 'user', content: 'streamed under an acl' }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Echo: streamed under an acl');

    const job = await submitJob(gateway.baseUrl, KEY, 'a-4o', 'async under an acl');
    expect(job.status).toBe(202);
    await waitForJobStatus(gateway.baseUrl, KEY, job.body.id as string, 'completed');
    expect(
      (await callJobs(gateway.baseUrl, KEY, `/v1/chat/completions/jobs/${job.body.id}`)).body.result?.choices[0]
        ?.message.content,
    ).toBe('Echo: async under an acl');

    const stats = await fetch(`${gateway.baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN } });
    expect(stats.status).toBe(200);
    expect(((await stats.json()) as { cache_store: { connected: boolean } }).cache_store.connected).toBe(true);
    const cleared = await fetch(`${gateway.baseUrl}/admin/cache/clear`, {
      method: 'POST',
      headers: { 'x-api-key': ADMIN },
    });
    // The JSON reply, the streamed one and the job's: an asynchronous job goes through the caches too.
    expect(((await cleared.json()) as { cleared: { exact_cache: number } }).cleared.exact_cache).toBe(3);

    // The limit (8 per window) counts the job's polls too: within 8 more requests one is refused.
    let limited: { status: number; code?: string } = { status: 0 };
    for (let i = 0; i < 8 && limited.status !== 429; i++) {
      const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: `limit ${i}` }] }),
      });
      limited = { status: res.status, code: ((await res.json()) as { error?: { code: string } }).error?.code };
    }
    expect(limited).toEqual({ status: 429, code: 'rate_limit_exceeded' });

    // Only the optional start-up check was refused, once per process (API and worker), and said so.
    const refused = ((await admin.call('ACL', 'LOG')) as unknown[][]).map(
      (entry) => entry[entry.indexOf('object') + 1],
    );
    expect(new Set(refused)).toEqual(new Set(['config|get']));
    expect(gateway.api.output()).toMatch(/Redis may lose jobs/);
  }, 60_000);

  it('keeps the user to its rule: other keys and commands are refused', async () => {
    const user = new Redis({
      host: '127.0.0.1',
      port: server.port,
      username: 'gateway',
      password: PASSWORD,
      maxRetriesPerRequest: 0,
    });
    try {
      await expect(user.set('other:key', '1')).rejects.toThrow(/NOPERM/);
      await expect(user.call('FLUSHALL')).rejects.toThrow(/NOPERM/);
      expect(await user.set(`${PREFIX}:probe`, '1')).toBe('OK');
    } finally {
      user.disconnect();
      await admin.call('ACL', 'LOG', 'RESET');
    }
  });
});
