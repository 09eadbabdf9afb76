import { spawnSync } from 'node:child_process';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { openBatchDb } from '../../src/batches/sql-db.ts';
import {
  batchLine,
  killAll,
  pollBatch,
  readOutput,
  submitBatch,
  TRIO_MODELS,
  upstreamCallsByText,
} from '../support/batches.ts';
import { databaseBackends, startOnRig, useDurabilityRig } from '../support/durability-rig.ts';
import type { Gateway } from '../support/processes.ts';
import type { ProviderLetter } from '../support/fake-upstream.ts';
import { uniquePrefix } from '../support/redis.ts';

/**
 * A batch survives the loss of everything but its database: Redis (no
 * persistence, so every queue, job and reply stream is gone), the API and
 * every worker are SIGKILLed mid-batch and started again; the batch completes
 * with every line answered exactly once in the output file, and no line
 * answered before the crash reaches an upstream again. On SQLite and on
 * PostgreSQL.
 */

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
if (!hasRedisServer) console.warn('\n*** SKIPPING batch-durability: no redis-server binary on PATH ***\n');

const KEY = 'gw_batch_durable_key_0123456789';
const MODELS = TRIO_MODELS;
const LINES = 90;
const CONCURRENCY = 4;

const rig = useDurabilityRig('batch_durability');

function start(database: Record<string, string>, prefix: string): Promise<Gateway> {
  const provider = { timeout_ms: 5000, stream_idle_timeout_ms: 2000, queue_timeout_ms: 10000, concurrency: 2 };
  return startOnRig(rig, {
    key: KEY,
    prefix,
    database,
    provider,
    providers: ['provider_a', 'provider_b', 'provider_c'],
    env: { BATCH_CONCURRENCY: String(CONCURRENCY) },
  });
}

const backends = databaseBackends(rig);

describe.skipIf(!hasRedisServer).each(backends)('on $name', (backend) => {
  it('completes after Redis, the API and every worker are killed mid-batch, each line answered once', async (ctx) => {
    const database = backend.env();
    if (!database) return ctx.skip();
    for (const u of Object.values(rig.upstreams)) {
      u.reset();
      u.setBehavior({ latencyMs: 120 });
    }
    const prefix = uniquePrefix('batch-durable');
    const letters: ProviderLetter[] = ['a', 'b', 'c'];
    const lines = Array.from({ length: LINES }, (_, i) =>
      batchLine(`id-${i}`, MODELS[letters[i % 3]!], `line-${backend.name}-${i}`),
    );

    let gateway = await start(database, prefix);
    let client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
    const created = await submitBatch(client, lines);
    await pollBatch(client, created.id, 30_000, (b) => (b.request_counts?.completed ?? 0) >= 20);

    await killAll(gateway);
    await rig.redis.stop('SIGKILL');
    const db = openBatchDb({ KEY_DB_PATH: '', DATABASE_URL: undefined, ...database });
    const before = await db.all<{ custom_id: string; status: string }>(
      'SELECT custom_id, status FROM gateway_batch_lines WHERE batch_id = ?',
      [created.id],
    );
    await db.close();
    const answeredBefore = before.filter((l) => l.status === 'succeeded').map((l) => Number(l.custom_id.slice(3)));
    expect(answeredBefore.length).toBeGreaterThanOrEqual(20);
    expect(answeredBefore.length).toBeLessThan(LINES);

    await rig.redis.start();
    gateway = await start(database, prefix);
    client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
    try {
      const done = await pollBatch(client, created.id, 60_000);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
      const output = await readOutput(client, done.output_file_id);
      expect(output.map((l) => l.custom_id)).toEqual(lines.map((_, i) => `id-${i}`));
      for (const [i, line] of output.entries())
        expect(line.response?.body.choices[0].message.content).toContain(`line-${backend.name}-${i}`);

      const calls = upstreamCallsByText(Object.values(rig.upstreams));
      for (const i of answeredBefore)
        expect(calls.get(`line-${backend.name}-${i}`), `line ${i} answered before the crash`).toBe(1);
      for (let i = 0; i < LINES; i++) expect(calls.get(`line-${backend.name}-${i}`) ?? 0).toBeGreaterThanOrEqual(1);
      // Only lines in flight at the crash (at most the concurrency cap) may have reached an upstream twice.
      const total = [...calls.values()].reduce((a, b) => a + b, 0);
      expect(total - LINES).toBeLessThanOrEqual(CONCURRENCY);
      console.log(
        `[batch-durability ${backend.name}] answered before the crash: ${answeredBefore.length}/${LINES}; upstream calls: ${total} for ${LINES} lines`,
      );
    } finally {
      await gateway.stop();
    }
  });
});
