import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiReplica } from '../support/api-replica.ts';
import { batchLine, pollBatch, readOutput, submitBatch, upstreamCallsByText } from '../support/batches.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway, type GatewayProcess } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * What a crash of each process costs a running batch, counted on the fake
 * upstream: every process of a gateway is stopped or killed, one at a time
 * or together, in the middle of a 40-line batch whose lines take 600 ms
 * upstream (four upstream slots, eight lines in flight); a new process
 * takes its place, the batch completes with each line once in its output
 * file, and the test counts the lines that reached the upstream more than
 * once. Redis and the database stay up (their loss is
 * test/reliability/batch-durability.test.ts's).
 */

const KEY = 'gw_batch_restarts_key_0123456789';
const MODEL = 'a-4o';
const LINES = 40;
const IN_FLIGHT = 8;
const prefix = uniquePrefix('batch-restarts');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
let env: Record<string, string>;

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a', behavior: { latencyMs: 600 } });
  env = {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: KEY,
    PROVIDER_A_API_KEY: 'up-a',
    DLP_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    RATE_LIMIT_REQUESTS: '100000',
    BATCH_CONCURRENCY: String(IN_FLIGHT),
    BATCH_KEY_CONCURRENCY: String(IN_FLIGHT),
    BATCH_POLL_MS: '100',
    BATCH_LEASE_MS: '1500',
    WORKER_LOCK_DURATION_MS: '2000',
    WORKER_STALLED_INTERVAL_MS: '1000',
  };
  gateway = await startGateway({
    env,
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: [MODEL],
          concurrency: 4,
          queue_timeout_ms: 60_000,
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
  await api?.kill('SIGTERM');
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** The API process in charge now (the first one, then each replacement). */
let api: GatewayProcess | undefined;
let baseUrl = '';

async function restartApi(signal: NodeJS.Signals): Promise<void> {
  await (api ?? gateway.api).kill(signal);
  const replica = await startApiReplica(env, gateway.configPath);
  api = replica.process;
  baseUrl = replica.baseUrl;
}

async function restartWorker(signal: NodeJS.Signals): Promise<void> {
  const worker = gateway.workers.get('provider_a')!.shift()!;
  await worker.kill(signal);
  await gateway.addWorker('provider_a');
}

const client = () => new OpenAI({ baseURL: `${baseUrl || gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });

/** Runs a batch, does `fault` once a few lines are answered and the next ones are upstream, and returns the upstream calls beyond one per line (and checks that no line went more than twice). */
async function repeatedCalls(tag: string, fault: () => Promise<void>): Promise<number> {
  const lines = Array.from({ length: LINES }, (_, i) => batchLine(`${tag}-${i}`, MODEL, `line-${tag}-${i}`));
  const created = await submitBatch(client(), lines);
  await pollBatch(client(), created.id, 30_000, (b) => (b.request_counts?.completed ?? 0) >= 6);
  await fault();
  const done = await pollBatch(client(), created.id, 90_000);
  expect(done.status).toBe('completed');
  expect(done.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
  const output = await readOutput(client(), done.output_file_id);
  expect(output.map((l) => l.custom_id)).toEqual(lines.map((_, i) => `${tag}-${i}`));
  const calls = [...upstreamCallsByText([upstream]).entries()].filter(([text]) => text.startsWith(`line-${tag}-`));
  expect(calls).toHaveLength(LINES);
  const repeated = calls.reduce((n, [, count]) => n + count - 1, 0);
  const most = Math.max(...calls.map(([, c]) => c));
  console.log(
    `[batch-restarts] ${tag}: ${repeated} upstream calls repeated for ${LINES} lines (${IN_FLIGHT} in flight); most calls of one line: ${most}`,
  );
  expect(most).toBeLessThanOrEqual(2);
  return repeated;
}

describe('a batch across process restarts, Redis and the database up', () => {
  it('SIGTERM of the API alone (a rolling deploy): no line reaches the upstream twice', async () => {
    expect(await repeatedCalls('api-term', () => restartApi('SIGTERM'))).toBe(0);
  });

  it('SIGKILL of the API alone: no line reaches the upstream twice', async () => {
    expect(await repeatedCalls('api-kill', () => restartApi('SIGKILL'))).toBe(0);
  });

  it('SIGTERM of the worker alone: no line reaches the upstream twice', async () => {
    expect(await repeatedCalls('worker-term', () => restartWorker('SIGTERM'))).toBe(0);
  });

  it('SIGKILL of the worker alone: only the lines its upstream calls were in flight run again, once', async () => {
    expect(await repeatedCalls('worker-kill', () => restartWorker('SIGKILL'))).toBeLessThanOrEqual(4);
  });

  it('SIGKILL of the API and the worker together: only the lines in flight at the worker run again, once', async () => {
    expect(
      await repeatedCalls('both-kill', () =>
        Promise.all([restartApi('SIGKILL'), restartWorker('SIGKILL')]).then(() => {}),
      ),
    ).toBeLessThanOrEqual(4);
  });
});
