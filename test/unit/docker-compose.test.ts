import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * docker-compose.yml as far as it can be checked without a Docker engine: it
 * parses, its Redis keeps jobs (AOF on a volume, no eviction), and the
 * services it wires refer to things it defines. The reliability suite runs a
 * redis-server with these very flags through a crash
 * (test/reliability/redis-persistence.test.ts).
 */

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: unknown;
  environment?: Record<string, string>;
}

const compose = parse(readFileSync(resolve(import.meta.dirname, '../../docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};

/** `--flag value` pairs of a redis-server command line. */
function flags(command: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 1; i < command.length; i += 2) out.set(command[i] ?? '', command[i + 1] ?? '');
  return out;
}

describe('docker-compose.yml', () => {
  const redis = compose.services.redis;

  it('runs Redis with AOF and noeviction, and nothing that turns them off', () => {
    expect(redis?.command?.[0]).toBe('redis-server');
    const redisFlags = flags(redis?.command ?? []);
    expect(redisFlags.get('--appendonly')).toBe('yes');
    expect(redisFlags.get('--maxmemory-policy')).toBe('noeviction');
    expect(redisFlags.has('--appendfsync') ? redisFlags.get('--appendfsync') : 'everysec').not.toBe('no');
    expect(redis?.healthcheck).toBeDefined();
  });

  it('keeps Redis data in a named volume at /data, the working folder of the redis image', () => {
    expect(redis?.image).toMatch(/^redis:7/);
    const mount = (redis?.volumes ?? []).find((v) => v.endsWith(':/data'));
    expect(mount).toBeDefined();
    const volume = mount?.split(':')[0] ?? '';
    expect(Object.keys(compose.volumes)).toContain(volume);
  });

  it('every service is built or pulled, and waits only for services it defines', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.image ?? service.build, name).toBeDefined();
      for (const dependency of Object.keys(service.depends_on ?? {})) expect(Object.keys(compose.services), `${name} depends on ${dependency}`).toContain(dependency);
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0] ?? '';
        if (!source.startsWith('.') && !source.startsWith('/')) expect(Object.keys(compose.volumes), `${name} mounts ${source}`).toContain(source);
      }
    }
  });
});
