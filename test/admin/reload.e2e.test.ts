import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Configuration reload through running processes: two API replicas and a
 * worker share config.yaml and ENV_FILE. A reload on one (HTTP or SIGHUP)
 * must reach the others over Redis pub/sub; an invalid file must change
 * nothing anywhere.
 */

const CLIENT = 'reload-client-key-01';
const ADMIN = 'reload-admin-key-001';
const prefix = uniquePrefix('reload');
const redis = testRedis();
const envFile = join(mkdtempSync(join(tmpdir(), 'gw-envfile-')), 'gateway.env');
let first: FakeUpstream;
let second: FakeUpstream;
let gateway: Gateway;
let replica: ApiReplica;

function providerConfig(models: string[], upstream: FakeUpstream) {
  return {
    providers: [
      { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models, base_url: upstream.url, max_retries: 0 },
    ],
  };
}

function writeConfig(doc: unknown): void {
  writeFileSync(gateway.configPath, typeof doc === 'string' ? doc : stringify(doc));
}

async function call(baseUrl: string, path: string, key: string | null, init: RequestInit = {}) {
  const res = await fetch(`${baseUrl}${path}`, { ...init, headers: key ? { 'x-api-key': key } : {} });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Untyped };
}

const reload = (baseUrl: string, key: string | null = ADMIN) =>
  call(baseUrl, '/admin/reload-config', key, { method: 'POST' });

async function models(baseUrl: string): Promise<string[]> {
  return (await call(baseUrl, '/v1/models', CLIENT)).body.data.map((m: { id: string }) => m.id);
}

async function chat(baseUrl: string, model: string, text: string) {
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: CLIENT, maxRetries: 0 });
  return client.chat.completions.create({ model, messages: [{ role: 'user', content: text }] });
}

function served(upstream: FakeUpstream, text: string): boolean {
  return upstream.requests.some((r) => JSON.stringify(r.body).includes(text));
}

beforeAll(async () => {
  first = await startFakeUpstream({ format: 'openai', apiKey: 'up-a' });
  second = await startFakeUpstream({ format: 'openai', apiKey: 'up-a' });
  writeFileSync(envFile, 'RATE_LIMIT_REQUESTS=1000\n');
  const env = {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: CLIENT,
    ADMIN_API_KEYS: ADMIN,
    PROVIDER_A_API_KEY: 'up-a',
    ENV_FILE: envFile,
    DLP_ENABLED: 'false',
    CACHE_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    RATE_LIMIT_REQUESTS: '5', // ENV_FILE wins
  };
  gateway = await startGateway({ env, config: providerConfig(['a-4o'], first), providers: ['provider_a'] });
  replica = await startApiReplica(env, gateway.configPath);
});

afterAll(async () => {
  await Promise.all([gateway?.stop(), replica?.stop(), first?.close(), second?.close()]);
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('POST /admin/reload-config', () => {
  it('needs an admin key: 401 without a key, 403 admin_required with a client key', async () => {
    expect((await reload(gateway.baseUrl, null)).status).toBe(401);
    const denied = await reload(gateway.baseUrl, CLIENT);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toEqual({
      code: 'admin_required',
      message: expect.any(String),
      type: 'permission_error',
    });
  });

  it('re-reads config.yaml, swaps it, and every API and worker process follows before it answers', async () => {
    expect(await models(replica.baseUrl)).toEqual(['a-4o']);
    writeConfig(providerConfig(['a-4o', 'a-new'], second));
    const before = Date.now();
    const { status, body } = await reload(gateway.baseUrl);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'success',
      config: { providers: 1, models: 2 },
      processes: { notified: 2, reloaded: 2, failed: [] },
    });
    expect(body.message).toMatch(
      /^Configuration reloaded: 1 providers, 2 models\. 2 other processes notified, 2 reloaded\.$/,
    );
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    expect(Date.parse(body.timestamp)).toBeGreaterThanOrEqual(before - 1000);

    // Acknowledged means done: no waiting needed on the other replica or the worker.
    expect(await models(replica.baseUrl)).toEqual(['a-4o', 'a-new']);
    const reply = await chat(replica.baseUrl, 'a-new', 'routed after reload');
    expect(reply.choices[0]?.message.content).toContain('routed after reload');
    // The worker picked up the new base_url too.
    expect(served(second, 'routed after reload')).toBe(true);
    expect(served(first, 'routed after reload')).toBe(false);
  });

  it('an invalid file answers 400 invalid_request with the reason, and every process keeps the old configuration', async () => {
    writeConfig({ providers: [] });
    const empty = await reload(replica.baseUrl);
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe('invalid_request');
    expect(empty.body.error.type).toBe('invalid_request_error');
    expect(empty.body.error.message).toContain('the current one stays');
    expect(empty.body.error.message).toContain('providers');

    writeConfig('providers: [unclosed');
    const broken = await reload(gateway.baseUrl);
    expect(broken.status).toBe(400);
    expect(broken.body.error.message).toContain('not valid YAML');

    writeConfig({
      providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models: ['a-4o'], timeout_ms: 'soon' }],
    });
    const wrongType = await reload(gateway.baseUrl);
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain('providers.0.timeout_ms');

    for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) expect(await models(baseUrl)).toEqual(['a-4o', 'a-new']);
    await chat(gateway.baseUrl, 'a-new', 'still the old config');
    expect(served(second, 'still the old config')).toBe(true);
  });
});

describe('SIGHUP', () => {
  it('to a worker: it reloads and broadcasts, so both API replicas follow', async () => {
    writeConfig(providerConfig(['a-4o', 'a-sighup'], first));
    const [worker] = gateway.workers.get('provider_a')!;
    worker!.child.kill('SIGHUP');
    for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
      await waitFor(async () => (await models(baseUrl)).includes('a-sighup'), 5_000, `a-sighup on ${baseUrl}`);
    }
    await chat(gateway.baseUrl, 'a-sighup', 'after the worker hangup');
    expect(served(first, 'after the worker hangup')).toBe(true);
    expect(worker!.output()).toContain('configuration reloaded');
  });

  it('to an API replica: the other replica follows; the process keeps serving', async () => {
    writeConfig(providerConfig(['a-4o', 'a-api-hup'], first));
    replica.process.child.kill('SIGHUP');
    await waitFor(
      async () => (await models(gateway.baseUrl)).includes('a-api-hup'),
      5_000,
      'a-api-hup on the first API',
    );
    expect(await models(replica.baseUrl)).toContain('a-api-hup');
    expect(replica.process.child.exitCode).toBeNull();
  });
});

describe('ENV_FILE: the environment is re-read too', () => {
  it('a new rate limit applies on every replica after a reload; an invalid value changes nothing', async () => {
    expect((await call(gateway.baseUrl, '/v1/models', CLIENT)).headers.get('x-ratelimit-limit')).toBe('1000');
    writeFileSync(envFile, 'RATE_LIMIT_REQUESTS=700\n');
    expect((await reload(gateway.baseUrl)).status).toBe(200);
    for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
      expect((await call(baseUrl, '/v1/models', CLIENT)).headers.get('x-ratelimit-limit')).toBe('700');
    }

    writeFileSync(envFile, 'RATE_LIMIT_REQUESTS=lots\n');
    const bad = await reload(replica.baseUrl);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('RATE_LIMIT_REQUESTS');
    expect((await call(replica.baseUrl, '/v1/models', CLIENT)).headers.get('x-ratelimit-limit')).toBe('700');
  });

  it('a rotated provider key reaches the worker', async () => {
    writeFileSync(envFile, 'RATE_LIMIT_REQUESTS=700\nPROVIDER_A_API_KEY=rotated-upstream-key\n');
    expect((await reload(gateway.baseUrl)).body.processes).toMatchObject({ reloaded: 2 });
    const failed = await chat(gateway.baseUrl, 'a-4o', 'with the rotated key').catch((e: unknown) => e);
    // The fake upstream only knows the old key, so it refuses the rotated one.
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    const sent = first.requests.filter((r) => JSON.stringify(r.body).includes('with the rotated key'));
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((r) => r.headers.authorization === 'Bearer rotated-upstream-key')).toBe(true);

    writeFileSync(envFile, 'RATE_LIMIT_REQUESTS=1000\n');
    expect((await reload(gateway.baseUrl)).status).toBe(200);
    expect((await chat(gateway.baseUrl, 'a-4o', 'old key restored')).choices[0]?.message.content).toContain(
      'old key restored',
    );
  });
});

describe('a config.yaml that fails to load at start', () => {
  const badPrefix = uniquePrefix('reload-bad');
  let broken: Gateway;
  beforeAll(async () => {
    broken = await startGateway({
      env: {
        REDIS_KEY_PREFIX: badPrefix,
        API_KEYS: CLIENT,
        ADMIN_API_KEYS: ADMIN,
        PROVIDER_A_API_KEY: 'up-a',
        PUBLIC_PATHS: '/health/ready',
      },
      config: { providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY' }] },
      providers: [],
    });
  });
  afterAll(async () => {
    await broken?.stop();
    await deletePrefix(redis, badPrefix);
  });

  it('keeps the API up but not ready, says why, and a fixed file plus a reload makes it ready', async () => {
    const ready = await call(broken.baseUrl, '/health/ready', null);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'not_ready', checks: { cache_store: 'connected', config: 'failed' } });
    expect(ready.body.config_error).toContain('providers.0.models');
    // Only /health/ready is public here.
    expect((await call(broken.baseUrl, '/health', null)).status).toBe(401);
    const health = await call(broken.baseUrl, '/health', CLIENT);
    expect(health).toMatchObject({
      status: 503,
      body: { status: 'unhealthy', details: { config: { loaded: false } } },
    });
    const v1 = await call(broken.baseUrl, '/v1/models', CLIENT);
    expect(v1.status).toBe(503);
    expect(v1.body.error.message).toContain('no valid configuration');

    writeFileSync(broken.configPath, stringify(providerConfig(['a-4o'], first)));
    expect((await reload(broken.baseUrl)).status).toBe(200);
    expect((await call(broken.baseUrl, '/health/ready', null)).status).toBe(200);
    expect(await models(broken.baseUrl)).toEqual(['a-4o']);
  });
});
