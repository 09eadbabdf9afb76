import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.ts';
import { redisBaseOptions } from '../../src/redis/connections.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { freePort, startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { selfSignedCert } from '../support/self-signed-cert.ts';

/**
 * The PaaS path: the gateway finds its Redis through REDIS_URL alone, over
 * TLS (`rediss://`) with an ACL user, as hosted Redis add-ons hand it out. The
 * Redis here serves TLS only (no plain port), with a certificate made for the
 * test; the API and worker processes trust its CA through REDIS_TLS_CA_FILE.
 */

const KEY = 'gw_e2e_redis_tls_key_0123456789';
const dir = mkdtempSync(join(tmpdir(), 'gw-redis-tls-'));
const certificate = selfSignedCert();
const ca = certificate.certFile;
let port = 0;
let server: ChildProcess;
let upstream: FakeUpstream;
let gateway: Gateway;
let url = '';

beforeAll(async () => {
  port = await freePort();
  server = spawn(
    'redis-server',
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      ca,
      '--tls-key-file',
      certificate.keyFile,
      '--tls-ca-cert-file',
      ca,
      '--tls-auth-clients',
      'no',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--user',
      'default',
      'off',
      '--user',
      'gateway',
      'on',
      '>pa ss%word',
      '~*',
      '&*',
      '+@all',
    ],
    { stdio: 'ignore' },
  );
  url = `rediss://gateway:${encodeURIComponent('pa ss%word')}@127.0.0.1:${port}/0`;
  await waitFor(
    async () => {
      const probe = new Redis({
        ...redisBaseOptions(loadSettings({ REDIS_URL: url, REDIS_TLS_CA_FILE: ca })),
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on('error', () => {});
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG';
      } catch {
        return false;
      } finally {
        probe.disconnect();
      }
    },
    10_000,
    'the TLS redis-server',
  );
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-a-secret' });
  gateway = await startGateway({
    env: {
      REDIS_URL: url,
      REDIS_TLS_CA_FILE: ca,
      REDIS_KEY_PREFIX: 'gwtls',
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'upstream-a-secret',
      SEMANTIC_CACHE_ENABLED: 'false',
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
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
  rmSync(dir, { recursive: true, force: true });
  certificate.remove();
});

describe('Redis through REDIS_URL with TLS and an ACL user', () => {
  it('answers chat completions, cached and not, through the queue on a TLS-only Redis', async () => {
    const client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
    const first = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'over tls' }] })
      .withResponse();
    expect(first.data.choices[0]?.message.content).toBe('Echo: over tls');
    expect(first.response.headers.get('x-cache')).toBe('MISS');
    const again = await client.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'over tls' }] })
      .withResponse();
    expect(again.response.headers.get('x-cache')).toBe('HIT');
    const ready = await fetch(`${gateway.baseUrl}/health/ready`, { headers: { 'x-api-key': KEY } });
    expect(ready.status).toBe(200);
  });

  it('refuses a REDIS_URL it cannot use with a message that hides the password', () => {
    expect(() => redisBaseOptions(loadSettings({ REDIS_URL: 'http://u:topsecret@h:1' }))).toThrowError(
      /redis:\/\/ or rediss:\/\//,
    );
    expect(() => redisBaseOptions(loadSettings({ REDIS_URL: 'http://u:topsecret@h:1' }))).not.toThrowError(/topsecret/);
    expect(() => redisBaseOptions(loadSettings({ REDIS_URL: 'redis://h:1/x' }))).toThrowError(/database number/);
    expect(() =>
      redisBaseOptions(loadSettings({ REDIS_URL: 'rediss://h:1', REDIS_TLS_CA_FILE: join(dir, 'missing.pem') })),
    ).toThrowError(/REDIS_TLS_CA_FILE/);
    const options = redisBaseOptions(
      loadSettings({ REDIS_URL: 'redis://alice:p%40ss@cache.example:6380/3', REDIS_HOST: 'ignored' }),
    );
    expect(options).toMatchObject({ host: 'cache.example', port: 6380, db: 3, username: 'alice', password: 'p@ss' });
    expect(options.tls).toBeUndefined();
    expect(redisBaseOptions(loadSettings({ REDIS_URL: 'rediss://cache.example' })).tls).toMatchObject({
      servername: 'cache.example',
      rejectUnauthorized: true,
    });
  });
});
