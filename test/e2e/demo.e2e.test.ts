import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { durabilityProblems, readRedisDurability } from '../../src/redis/durability-check.ts';
import { freePort, waitFor } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * `./scripts/start.sh --demo` as a new user runs it: loopback upstreams, the
 * API and a worker per provider, and the docs and dashboard pages open
 * without a key, their URLs printed; and a quiet terminal: one sentence per
 * concern, no JSON unless asked for, no Node warning about SQLite.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const prefix = uniquePrefix('demo');
const redis = testRedis();
let child: ChildProcess;
let output = '';
let port = 0;

beforeAll(async () => {
  port = await freePort();
  // Below the kernel's ephemeral range (32768 and up), where other tests' client sockets may hold a port.
  const upstreamBase = 20_000 + Math.floor(Math.random() * 12_000);
  child = spawn('bash', ['scripts/start.sh', '--demo'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      DEMO_UPSTREAM_PORT: String(upstreamBase),
      REDIS_KEY_PREFIX: prefix,
      SKIP_MODEL_SETUP: '1',
      SEMANTIC_CACHE_ENABLED: 'false',
      LOG_LEVEL: 'warning',
    },
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  // Stops waiting when the script exits too, and says why either way.
  await waitFor(
    async () =>
      child.exitCode !== null ||
      (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => undefined))?.status === 200,
    60_000,
    'the demo gateway',
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n--- start.sh output ---\n${output}`);
  });
  if (child.exitCode !== null) throw new Error(`start.sh --demo exited with ${child.exitCode}:\n${output}`);
}, 90_000);

afterAll(async () => {
  if (child?.pid && child.exitCode === null) {
    process.kill(-child.pid, 'SIGTERM');
    await once(child, 'exit');
  }
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('the demo', () => {
  it('prints the URLs of the API, the docs and the dashboard', () => {
    expect(output).toContain(`http://localhost:${port}/v1`);
    expect(output).toContain(`http://localhost:${port}/docs`);
    expect(output).toContain(`http://localhost:${port}/dashboard`);
  });

  it('prints one line per concern in words: Redis persistence said once, no JSON log line, no SQLite warning', async () => {
    const lines = output.split('\n').filter(Boolean);
    // The processes log at debug what the start script said; it says it only when this Redis may lose jobs.
    const redisMayLoseJobs = durabilityProblems(await readRedisDurability(redis)).length > 0;
    expect(lines.filter((line) => line.includes('Redis may lose jobs')).length).toBe(redisMayLoseJobs ? 1 : 0);
    if (redisMayLoseJobs) expect(lines).toContainEqual(expect.stringMatching(/^Redis may lose jobs: .*\.$/));
    expect(lines.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
    expect(output).not.toContain('ExperimentalWarning');
    expect(output).not.toContain('SQLite is an experimental feature');
  });

  it('opens the docs, the dashboard and what they read without a key', async () => {
    for (const path of ['/docs', '/redoc', '/openapi.json', '/dashboard', '/stats', '/metrics']) {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      expect(res.status, path).toBe(200);
    }
  });

  it('still needs the demo key for the API itself, and answers with it', async () => {
    const body = JSON.stringify({ model: 'c-sonnet-4-20250514', messages: [{ role: 'user', content: 'hello demo' }] });
    const anonymous = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(anonymous.status).toBe(401);
    await waitFor(
      async () =>
        (
          (await fetch(`http://127.0.0.1:${port}/health`, {
            headers: { 'x-api-key': 'gw_demo_local_key_change_me' },
          }).then((r) => r.json())) as { status: string }
        ).status === 'healthy',
      30_000,
      'the demo workers',
    );
    const answered = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer gw_demo_local_key_change_me' },
      body,
    });
    expect(answered.status).toBe(200);
    expect(
      ((await answered.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content,
    ).toBe('Echo: hello demo');
  });

  it('serves the Responses API and the embedding models of the shipped config.yaml', async () => {
    const headers = { 'content-type': 'application/json', authorization: 'Bearer gw_demo_local_key_change_me' };
    const response = await fetch(`http://127.0.0.1:${port}/v1/responses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'b-2.5-flash', input: 'hello responses' }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { output_text: string }).output_text).toBe('Echo: hello responses');
    for (const model of ['a-embedding-3-small', 'b-embedding-001']) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/embeddings`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model, input: ['one', 'two'] }),
      });
      expect(res.status, model).toBe(200);
      expect(((await res.json()) as { data: unknown[] }).data, model).toHaveLength(2);
    }
  });
});
