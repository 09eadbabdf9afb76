import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchLine, pollBatch, submitBatch } from '../support/batches.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Batches share a provider with interactive traffic and with each other:
 * one key's batches never take the queue places another key's interactive
 * requests need, and keys' batches share the queues evenly however many
 * batches each has. Real API and worker processes, issued keys, the official
 * client, one loopback upstream answering in 100 ms with two upstream slots.
 */

const ADMIN = 'gw_e2e_batch_sharing_admin_0123456789';
const MODEL = 'a-4o';
const DEPTH = 10;
const prefix = uniquePrefix('batch-sharing');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;

async function admin(method: string, path: string, body?: unknown): Promise<Untyped> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = res.status === 204 ? {} : await res.json();
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

const clientOf = (apiKey: string) =>
  new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey, maxRetries: 0, timeout: 30_000 });
const lines = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => batchLine(`${tag}-${i}`, MODEL, `line-${tag}-${i}`));

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a', behavior: { latencyMs: 100 } });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      ADMIN_API_KEYS: ADMIN,
      PROVIDER_A_API_KEY: 'up-a',
      DLP_ENABLED: 'false',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      BATCH_CONCURRENCY: '8',
      BATCH_KEY_CONCURRENCY: '4',
      BATCH_POLL_MS: '100',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: [MODEL],
          concurrency: 2,
          max_queue_depth: DEPTH,
          queue_timeout_ms: 30_000,
          timeout_ms: 10_000,
          max_retries: 0,
        },
      ],
    },
    providers: ['provider_a'],
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('batches and interactive traffic on one provider', () => {
  it('five batches of one key in flight leave every queue place to another key: bursts of max_queue_depth interactive requests get no 503', async () => {
    const a = clientOf((await admin('POST', '/admin/keys', { owner: 'batch-owner-a' })).key);
    const b = clientOf((await admin('POST', '/admin/keys', { owner: 'interactive-owner-b' })).key);
    const batches: OpenAI.Batch[] = [];
    for (let i = 0; i < 5; i++) batches.push(await submitBatch(a, lines(`crowd${i}`, 40)));
    await pollBatch(
      a,
      batches[4]!.id,
      20_000,
      (x) => x.status === 'in_progress' && (x.request_counts?.completed ?? 0) >= 1,
    );

    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const burst = await Promise.allSettled(
        Array.from({ length: DEPTH }, (_, i) =>
          b.chat.completions.create({
            model: MODEL,
            messages: [{ role: 'user', content: `interactive ${round}-${i}` }],
          }),
        ),
      );
      for (const r of burst)
        statuses.push(r.status === 'fulfilled' ? 200 : ((r.reason as { status?: number }).status ?? 0));
    }
    const running = await Promise.all(batches.map((x) => a.batches.retrieve(x.id)));
    // The batches were still running all along: the bursts met them in the queue.
    expect(running.some((x) => x.status === 'in_progress')).toBe(true);
    expect(statuses).toEqual(Array.from({ length: 3 * DEPTH }, () => 200));
    for (const x of batches) await a.batches.cancel(x.id);
    for (const x of batches) await pollBatch(a, x.id, 20_000);
  });

  it('a key with five batches gets no more of the provider than a key with one', async () => {
    const a = clientOf((await admin('POST', '/admin/keys', { owner: 'many-batches-a' })).key);
    const b = clientOf((await admin('POST', '/admin/keys', { owner: 'one-batch-b' })).key);
    const many: OpenAI.Batch[] = [];
    for (let i = 0; i < 5; i++) many.push(await submitBatch(a, lines(`many${i}`, 40)));
    await pollBatch(a, many[4]!.id, 20_000, (x) => x.status === 'in_progress');
    const completedOfA = async () =>
      (await Promise.all(many.map((x) => a.batches.retrieve(x.id)))).reduce(
        (n, x) => n + (x.request_counts?.completed ?? 0),
        0,
      );
    const before = await completedOfA();
    const one = await submitBatch(b, lines('one', 20));
    const done = await pollBatch(b, one.id, 60_000);
    const during = (await completedOfA()) - before;
    expect(done.status).toBe('completed');
    // Even shares would answer about as many of A's lines as B's 20 meanwhile; one share per batch, about five times as many.
    expect(during).toBeLessThan(50);
    for (const x of many) await a.batches.cancel(x.id);
    for (const x of many) await pollBatch(a, x.id, 20_000);
  });
});

describe('a revoked key', () => {
  it('DELETE /admin/keys/{id} cancels its running batches: the lines left never reach the upstream', async () => {
    const issued = await admin('POST', '/admin/keys', { owner: 'revoked-owner' });
    const a = clientOf(issued.key);
    const other = clientOf((await admin('POST', '/admin/keys', { owner: 'kept-owner' })).key);
    const revokedBatches = [await submitBatch(a, lines('revoke0', 40)), await submitBatch(a, lines('revoke1', 40))];
    const kept = await submitBatch(other, lines('kept', 10));
    await pollBatch(a, revokedBatches[0]!.id, 20_000, (x) => (x.request_counts?.completed ?? 0) >= 2);
    await admin('DELETE', `/admin/keys/${issued.id}`);
    const calledAtRevoke = upstream.requests.filter((r) => JSON.stringify(r.body).includes('line-revoke')).length;

    // The batches are the admin's to read now that their key is gone.
    const adminClient = clientOf(ADMIN);
    for (const x of revokedBatches) {
      const done = await pollBatch(adminClient, x.id, 20_000);
      expect(done.status).toBe('cancelled');
      expect(done.cancelling_at).not.toBeNull();
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const calledAfter = upstream.requests.filter((r) => JSON.stringify(r.body).includes('line-revoke')).length;
    // At most the lines a worker had already started (two upstream slots) finish; nothing new is sent.
    expect(calledAfter - calledAtRevoke).toBeLessThanOrEqual(2);
    expect(calledAfter).toBeLessThan(20);
    // Another key's batch is not touched.
    expect((await pollBatch(other, kept.id, 30_000)).status).toBe('completed');
  });
});

describe('a large batch file', () => {
  it('validating and storing 50,000 lines does not hold up the requests of the API process meanwhile', async () => {
    // A key restricted to some models: its lines' models are checked when the batch is created, too.
    const a = clientOf(
      (await admin('POST', '/admin/keys', { owner: 'large-file-owner', allowed_models: ['a-*'] })).key,
    );
    const text = `${lines('large', 50_000).join('\n')}\n`;
    const file = await a.files.create({ file: await toFile(Buffer.from(text), 'large.jsonl'), purpose: 'batch' });

    // Requests answered one after another while the batch is created and validated; the longest is the longest the process was held.
    let probing = true;
    let longest = 0;
    let probes = 0;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        const res = await fetch(`${gateway.baseUrl}/health/live`);
        await res.arrayBuffer();
        longest = Math.max(longest, performance.now() - started);
        probes += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const created = await a.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const started = await pollBatch(a, created.id, 60_000, (x) => x.status !== 'validating');
    probing = false;
    await probe;
    await a.batches.cancel(created.id);
    expect(started.status).toBe('in_progress');
    expect(started.request_counts?.total).toBe(50_000);
    console.log(
      `[batch-sharing] 50,000-line file: longest of ${probes} requests during creation and validation ${longest.toFixed(0)} ms`,
    );
    expect(probes).toBeGreaterThan(5);
    // Generous for a loaded 2-core machine: the whole file at once held the process for 1 to 3 s.
    expect(longest).toBeLessThan(500);
    await pollBatch(a, created.id, 30_000);
  });
});
