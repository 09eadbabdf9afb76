import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { durabilityProblems, readRedisDurability, warnIfRedisMayLoseJobs } from '../../src/redis/durability-check.ts';
import { startRedisServer, type RedisServer } from '../support/redis-server.ts';

/** The start-up check of Redis persistence and eviction, against a private redis-server whose settings it changes. */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING redis-durability: no redis-server binary on PATH ***\n');

function capturingLogger(level = 'info'): { logger: pino.Logger; lines: () => Array<{ level: number; msg: string }> } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return {
    logger: pino({ level }, sink),
    lines: () => lines.map((l) => JSON.parse(l) as { level: number; msg: string }),
  };
}

describe('durabilityProblems', () => {
  const durable = {
    readable: true as const,
    appendonly: 'yes',
    save: '3600 1 300 100 60 10000',
    maxmemoryPolicy: 'noeviction',
  };

  it('finds nothing wrong with AOF and noeviction', () => {
    expect(durabilityProblems(durable)).toEqual([]);
  });

  it('names each way to lose jobs in its own sentence', () => {
    expect(durabilityProblems({ ...durable, appendonly: 'no', save: '' })).toEqual([
      expect.stringContaining('persistence is off'),
    ]);
    expect(durabilityProblems({ ...durable, appendonly: 'no' })).toEqual([
      expect.stringContaining('only RDB snapshots are on (save "3600 1 300 100 60 10000"'),
    ]);
    const both = durabilityProblems({ ...durable, appendonly: 'no', save: '', maxmemoryPolicy: 'volatile-lru' });
    expect(both).toHaveLength(2);
    expect(both[1]).toContain('maxmemory-policy is volatile-lru');
    for (const line of both) expect(line).toMatch(/^Redis may lose jobs: /);
  });

  it('says so when CONFIG cannot be read', () => {
    expect(durabilityProblems({ readable: false, reason: 'NOPERM no permissions' })).toEqual([
      expect.stringContaining('cannot read its persistence settings (CONFIG GET refused: NOPERM no permissions)'),
    ]);
  });
});

describe.skipIf(!hasRedisServer)('the check against a running Redis', () => {
  let server: RedisServer;
  let admin: Redis;

  beforeAll(async () => {
    server = await startRedisServer({ args: ['--save', '', '--appendonly', 'no'] });
    admin = new Redis({ port: server.port, host: '127.0.0.1' });
  });

  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  it('reads what Redis runs with, and warns once per problem', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const { logger, lines } = capturingLogger();
    await warnIfRedisMayLoseJobs(admin, logger);
    expect(lines().map((l) => [l.level, l.msg.slice(0, 45)])).toEqual([
      [40, 'Redis may lose jobs: persistence is off (appe'],
      [40, 'Redis may lose jobs: maxmemory-policy is allk'],
    ]);
  });

  it('logs the same problems at debug when the start script has said them (REDIS_DURABILITY_WARNING=false)', async () => {
    const { logger, lines } = capturingLogger('debug');
    await warnIfRedisMayLoseJobs(admin, logger, 'debug');
    expect(lines().map((l) => [l.level, l.msg.slice(0, 45)])).toEqual([
      [20, 'Redis may lose jobs: persistence is off (appe'],
      [20, 'Redis may lose jobs: maxmemory-policy is allk'],
    ]);
  });

  it('is silent once Redis runs with AOF and noeviction', async () => {
    await admin.config('SET', 'appendonly', 'yes');
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    expect(await readRedisDurability(admin)).toMatchObject({
      readable: true,
      appendonly: 'yes',
      maxmemoryPolicy: 'noeviction',
    });
    const { logger, lines } = capturingLogger();
    await warnIfRedisMayLoseJobs(admin, logger);
    expect(lines()).toEqual([]);
  });

  it('warns that it cannot tell when the user may not run CONFIG', async () => {
    await admin.call('ACL', 'SETUSER', 'limited', 'on', '>limited-pw', '~*', '&*', '+@all', '-config');
    const limited = new Redis({ port: server.port, host: '127.0.0.1', username: 'limited', password: 'limited-pw' });
    try {
      const { logger, lines } = capturingLogger();
      await warnIfRedisMayLoseJobs(limited, logger);
      // Not ready yet at the call: the check runs once the connection is.
      await expect.poll(() => lines().length).toBe(1);
      expect(lines()[0]?.msg).toMatch(
        /^Redis may lose jobs: cannot read its persistence settings \(CONFIG GET refused: NOPERM/,
      );
    } finally {
      limited.disconnect();
    }
  });
});
