import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { trioConfig } from './batches.ts';
import { startUpstreamTrio, type FakeUpstream, type ProviderLetter } from './fake-upstream.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { startGateway, type Gateway } from './processes.ts';
import { startRedisServer, type RedisServer } from './redis-server.ts';

/** What the durability tests kill and restart around: the upstream trio, a private Redis without persistence, and PostgreSQL when reachable. */
export interface DurabilityRig {
  upstreams: Record<ProviderLetter, FakeUpstream>;
  /** The provider keys of the trio, for the gateway's environment. */
  upstreamEnv: Record<string, string>;
  redis: RedisServer;
  postgres: TestDatabase | undefined;
}

/** Starts the rig before the file's tests (`database`: the PostgreSQL database to create) and stops it after them. */
export function useDurabilityRig(database: string): DurabilityRig {
  const rig = {} as DurabilityRig;
  beforeAll(async () => {
    const trio = await startUpstreamTrio();
    rig.upstreams = trio.upstreams;
    rig.upstreamEnv = trio.env;
    rig.redis = await startRedisServer();
    rig.postgres = await createTestDatabase(database).catch(() => undefined);
    if (!rig.postgres) console.warn(`\n*** ${database}: PostgreSQL unreachable, its case is skipped ***\n`);
  }, 60_000);
  afterAll(async () => {
    await rig.redis?.stop();
    await rig.postgres?.drop();
    await Promise.all(Object.values(rig.upstreams ?? {}).map((u) => u.close()));
  });
  return rig;
}

/** The two key-store databases a durability test runs on: a fresh SQLite file, and the rig's PostgreSQL (undefined when unreachable). */
export function databaseBackends(
  rig: DurabilityRig,
): Array<{ name: string; env: () => Record<string, string> | undefined }> {
  return [
    {
      name: 'sqlite',
      env: () => ({ KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-durable-')), 'gateway.sqlite') }),
    },
    { name: 'postgres', env: () => (rig.postgres ? { DATABASE_URL: rig.postgres.url } : undefined) },
  ];
}

/**
 * A gateway on the rig: `database` its key store, `provider` the fields of each provider of the
 * trio, `env` more settings. Runners poll every 100 ms, and a restarted API takes the batches and
 * jobs of a killed one over once its 1.5 s claims lapse.
 */
export function startOnRig(
  rig: DurabilityRig,
  options: {
    key: string;
    prefix: string;
    database: Record<string, string>;
    provider: Record<string, unknown>;
    providers: string[];
    env?: Record<string, string>;
  },
): Promise<Gateway> {
  return startGateway({
    env: {
      REDIS_PORT: String(rig.redis.port),
      REDIS_KEY_PREFIX: options.prefix,
      API_KEYS: options.key,
      ...rig.upstreamEnv,
      ...options.database,
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '1000000',
      BATCH_POLL_MS: '100',
      BATCH_LEASE_MS: '1500',
      ...options.env,
    },
    config: trioConfig(rig.upstreams, options.provider),
    providers: options.providers,
  });
}
