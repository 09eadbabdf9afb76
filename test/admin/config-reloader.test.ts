import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigReloader } from '../../src/admin/config-reloader.ts';
import { ControlBus } from '../../src/admin/control-bus.ts';
import { EnvFile, EnvFileError } from '../../src/admin/env-file.ts';
import { ConfigStore } from '../../src/config/config-store.ts';
import { ConfigError } from '../../src/config/gateway-config.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { waitFor } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * ConfigReloader between two "processes" (two reloaders with their own
 * files, connections and buses) on the real Redis.
 */

const prefix = uniquePrefix('reloader');
const admin = testRedis();
const connections: Redis[] = [];
const logger = pino({ level: 'silent' });

function connection(): Redis {
  const redis = new Redis({ host: '127.0.0.1', port: 6379, maxRetriesPerRequest: 1 });
  connections.push(redis);
  return redis;
}

afterAll(async () => {
  for (const c of connections) c.disconnect();
  await deletePrefix(admin, prefix);
  admin.disconnect();
});

function configDoc(models: string[]) {
  return { providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', models }] };
}

async function member(scope: string, role: 'api' | 'worker', models: string[]) {
  const scoped = `${prefix}:${scope}`;
  const dir = mkdtempSync(join(tmpdir(), 'gw-reloader-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, stringify(configDoc(models)));
  const configStore = await ConfigStore.open(path);
  const subscriber = connection();
  const redis = connection();
  const bus = new ControlBus({ subscriber, publisher: redis, logger });
  const reloader = new ConfigReloader({
    role,
    configStore,
    settings: loadSettings({ REDIS_KEY_PREFIX: scoped }),
    bus,
    redis,
    prefix: scoped,
    logger,
    env: {},
    ackTimeoutMs: 3_000,
  });
  reloader.start();
  await waitFor(() => bus.isSubscribed(`${scoped}:config:reload`), 5_000, 'subscription');
  return {
    reloader,
    configStore,
    subscriber,
    write: (doc: unknown) => writeFileSync(path, typeof doc === 'string' ? doc : stringify(doc)),
    models: () => [...configStore.current.modelIndex.keys()],
  };
}

describe('ConfigReloader', () => {
  it('reloads locally, broadcasts, and reports who followed and who failed', async () => {
    const a = await member('t1', 'api', ['m1']);
    const b = await member('t1', 'worker', ['m1']);
    const c = await member('t1', 'api', ['m1']);
    a.write(configDoc(['m1', 'm2']));
    b.write(configDoc(['m1', 'm2']));
    c.write({ providers: 'not a list' });

    const result = await a.reloader.reload('test');
    expect(a.models()).toEqual(['m1', 'm2']);
    expect(b.models()).toEqual(['m1', 'm2']);
    expect(c.models()).toEqual(['m1']);
    expect(result.processes.notified).toBe(2);
    expect(result.processes.reloaded).toBe(1);
    expect(result.processes.failed).toEqual([
      { process: expect.any(String), role: 'api', error: expect.stringContaining('providers') },
    ]);
    expect(result.message).toContain('1 failed and kept their old configuration');
  });

  it('throws the validation error and changes nothing when its own file is invalid; nobody is told', async () => {
    const a = await member('t2', 'api', ['x1']);
    const b = await member('t2', 'worker', ['x1']);
    a.write('providers:\n  - name: [');
    b.write(configDoc(['x1', 'x2']));
    await expect(a.reloader.reload('test')).rejects.toBeInstanceOf(ConfigError);
    expect(a.models()).toEqual(['x1']);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(b.models()).toEqual(['x1']);
  });

  it('a process that missed a broadcast catches up when its subscription reconnects', async () => {
    const a = await member('t3', 'api', ['y1']);
    const b = await member('t3', 'worker', ['y1']);
    b.subscriber.disconnect();
    a.write(configDoc(['y1', 'y2']));
    b.write(configDoc(['y1', 'y2']));
    const result = await a.reloader.reload('test');
    expect(result.processes.notified).toBe(0);
    expect(b.models()).toEqual(['y1']);
    await b.subscriber.connect();
    await waitFor(() => b.models().includes('y2'), 5_000, 'the catch-up reload');
  });

  it('runs concurrent reloads one after the other', async () => {
    const a = await member('t4', 'api', ['z1']);
    a.write(configDoc(['z1', 'z2']));
    const results = await Promise.all([a.reloader.reload('one'), a.reloader.reload('two'), a.reloader.reload('three')]);
    expect(results.every((r) => r.status === 'success')).toBe(true);
    expect(a.models()).toEqual(['z1', 'z2']);
  });
});

describe('EnvFile', () => {
  function file(text: string) {
    const path = join(mkdtempSync(join(tmpdir(), 'gw-env-')), '.env');
    writeFileSync(path, text);
    return path;
  }

  it('applies at start over the environment, and restores variables the file stops setting', async () => {
    const path = file('RATE_LIMIT_REQUESTS=7\nPROVIDER_A_API_KEY="quoted key"\n# comment\nENV_FILE=/elsewhere\n');
    const env: NodeJS.ProcessEnv = { ENV_FILE: path, RATE_LIMIT_REQUESTS: '3', KEEP: 'me' };
    const envFile = EnvFile.applyAtStart(env)!;
    expect(env).toEqual({ ENV_FILE: path, RATE_LIMIT_REQUESTS: '7', PROVIDER_A_API_KEY: 'quoted key', KEEP: 'me' });

    writeFileSync(path, 'RATE_LIMIT_WINDOW=30\n');
    const vars = await envFile.read();
    // preview leaves the environment alone
    expect(envFile.preview(vars)).toEqual({
      ENV_FILE: path,
      RATE_LIMIT_REQUESTS: '3',
      RATE_LIMIT_WINDOW: '30',
      KEEP: 'me',
    });
    expect(env.RATE_LIMIT_REQUESTS).toBe('7');
    envFile.apply(vars);
    expect(env).toEqual({ ENV_FILE: path, RATE_LIMIT_REQUESTS: '3', RATE_LIMIT_WINDOW: '30', KEEP: 'me' });
  });

  it('is optional, and an unreadable file is an EnvFileError naming it', async () => {
    expect(EnvFile.applyAtStart({})).toBeUndefined();
    expect(() => EnvFile.applyAtStart({ ENV_FILE: '/nonexistent/gw.env' })).toThrow(EnvFileError);
    await expect(new EnvFile('/nonexistent/gw.env', {}).read()).rejects.toThrow('/nonexistent/gw.env: ENOENT');
  });
});
