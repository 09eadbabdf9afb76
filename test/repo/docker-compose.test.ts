import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { freePort } from '../support/processes.ts';

/**
 * docker-compose.yml, the Dockerfile and .dockerignore as far as they can be
 * checked without a Docker engine: the compose file parses (merge keys as
 * Compose reads them), its Redis keeps jobs (AOF on a volume, no eviction),
 * its services refer to things it defines and come back when they exit; the
 * image runs as an unprivileged user, holds only what the processes run, and
 * its HEALTHCHECK command, run here with Node, tells a serving API from a
 * failing or absent one. The reliability suite runs a redis-server with these
 * very flags through a crash (test/reliability/redis-persistence.test.ts).
 */

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: unknown;
  environment?: Record<string, string>;
  restart?: string;
}

const read = (path: string) => readFileSync(resolve(import.meta.dirname, '../..', path), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
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
      for (const dependency of Object.keys(service.depends_on ?? {}))
        expect(Object.keys(compose.services), `${name} depends on ${dependency}`).toContain(dependency);
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0] ?? '';
        if (!source.startsWith('.') && !source.startsWith('/'))
          expect(Object.keys(compose.volumes), `${name} mounts ${source}`).toContain(source);
      }
    }
  });
});

/** Instructions of a Dockerfile (continuation lines joined, comments dropped), per stage. */
function stages(dockerfile: string): string[][] {
  const lines = dockerfile
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const out: string[][] = [];
  for (const line of lines) {
    if (line.startsWith('FROM ')) out.push([]);
    out.at(-1)?.push(line);
  }
  return out;
}

describe('Dockerfile and .dockerignore', () => {
  const all = stages(read('Dockerfile'));
  const final = all.at(-1) ?? [];
  const deps = all.find((stage) => / AS deps$/.test(stage[0] ?? '')) ?? [];

  it('installs the lock without install scripts in a build stage, and runs as an unprivileged user', () => {
    expect(all.length).toBeGreaterThan(1);
    expect(deps.find((l) => l.startsWith('RUN ') && /\bci --omit=dev --ignore-scripts\b/.test(l))).toBeDefined();
    const user = final.filter((l) => l.startsWith('USER ')).at(-1);
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)(:|$)/);
    // The key store's folder is the user's (a named volume takes the image's ownership).
    expect(final.join('\n')).toMatch(/KEY_DB_PATH=\/data\/gateway\.sqlite/);
    expect(final.join('\n')).toMatch(/chown node:node \/data/);
  });

  it('copies into the image only what the processes run, and leaves npm out of it', () => {
    const copies = final.filter((l) => l.startsWith('COPY '));
    expect(copies).toContain('COPY --from=deps /app/node_modules ./node_modules');
    const fromContext = copies.filter((l) => !l.startsWith('COPY --from')).flatMap((l) => l.split(/\s+/).slice(1, -1));
    expect(new Set(fromContext)).toEqual(new Set(['package.json', 'config.yaml', 'src', 'workers', 'bin']));
    expect(final.join('\n')).toMatch(/rm -rf [^\n]*\/usr\/local\/lib\/node_modules\/npm/);
  });

  it('keeps only the native onnxruntime library of the platform it builds on', () => {
    const prune = deps.find((l) => l.includes('onnxruntime-node/bin/napi-v6'));
    expect(prune).toMatch(/^RUN /);
    const dir = mkdtempSync(join(tmpdir(), 'gw-prune-'));
    const bins = join(dir, 'node_modules/onnxruntime-node/bin/napi-v6');
    const targets = ['linux/x64', 'linux/arm64', 'darwin/arm64', 'win32/x64', `${process.platform}/${process.arch}`];
    for (const target of targets) mkdirSync(join(bins, target), { recursive: true });
    try {
      const run = spawnSync('sh', ['-c', (prune ?? '').replace(/^RUN /, '')], { cwd: dir, encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      for (const target of targets)
        expect(existsSync(join(bins, target)), target).toBe(target === `${process.platform}/${process.arch}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sends the builder only what the Dockerfile copies', () => {
    const rules = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(rules[0]).toBe('*');
    const copied = all.flatMap((stage) =>
      stage
        .filter((l) => l.startsWith('COPY ') && !l.startsWith('COPY --from'))
        .flatMap((l) =>
          l
            .split(/\s+/)
            .slice(1, -1)
            .map((path) => path.replace(/\/$/, '')),
        ),
    );
    expect(new Set(rules.slice(1).map((r) => r.replace(/^!/, '')))).toEqual(new Set(copied));
  });

  it('restarts every service that exits, and turns the API health check off only for workers', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      expect(['always', 'unless-stopped', 'on-failure'], name).toContain(service.restart);
      const disabled = (service.healthcheck as { disable?: boolean } | undefined)?.disable === true;
      expect(disabled, name).toBe(name.startsWith('worker_'));
    }
  });

  it('has a HEALTHCHECK that passes while the API answers and fails when it errs or is gone', async () => {
    const healthcheck = final.find((l) => l.startsWith('HEALTHCHECK '));
    const command = JSON.parse(/CMD (\[.*\])$/.exec(healthcheck ?? '')?.[1] ?? '[]') as string[];
    expect(command[0]).toBe('node');
    // Not spawnSync: the server below answers from this very event loop.
    const run = async (port: number) => {
      const child = spawn(process.execPath, command.slice(1), {
        env: { PORT: String(port) },
        stdio: 'ignore',
        timeout: 10_000,
      });
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    };
    let status = 401;
    const server = createServer((req, res) => res.writeHead(req.url === '/health/live' ? status : 404).end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      // Without PUBLIC_PATHS the API answers 401: it serves.
      expect(await run(port)).toBe(0);
      status = 200;
      expect(await run(port)).toBe(0);
      status = 503;
      expect(await run(port)).toBe(1);
    } finally {
      server.close();
    }
    expect(await run(await freePort())).toBe(1);
  });
});
