import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  batchLine,
  pollBatch,
  readOutput,
  submitBatch,
  TRIO_MODELS,
  trioConfig,
  upstreamCallsByText,
} from '../support/batches.ts';
import { startUpstreamTrio, type FakeUpstream, type ProviderLetter } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * OpenAI's Batch API through the real API and worker processes, driven by the
 * official `openai` client unchanged, against loopback upstreams in all three
 * wire formats: upload, create, poll, download, cancel, list; validation up
 * front; a line failing after the gateway's retries; expiry; ownership;
 * interactive requests overtaking batch lines.
 */

const KEY = 'gw_e2e_batches_key_0123456789';
const OTHER_KEY = 'gw_e2e_batches_other_0123456789';
const ADMIN_KEY = 'gw_e2e_batches_admin_0123456789';
const prefix = uniquePrefix('batches');
const redis = testRedis();
const MODELS = TRIO_MODELS;
let gateway: Gateway;
let client: OpenAI;
let upstreams: Record<ProviderLetter, FakeUpstream>;
const all = () => Object.values(upstreams);

beforeAll(async () => {
  const trio = await startUpstreamTrio();
  upstreams = trio.upstreams;
  const provider = {
    timeout_ms: 5000,
    stream_idle_timeout_ms: 2000,
    queue_timeout_ms: 10000,
    max_retries: 2,
    concurrency: 1,
  };
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: `${KEY},${OTHER_KEY}`,
      ADMIN_API_KEYS: ADMIN_KEY,
      ...trio.env,
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      MAX_REQUEST_BYTES: '4096',
      BATCH_CONCURRENCY: '3',
      BATCH_POLL_MS: '100',
    },
    config: trioConfig(upstreams, provider),
    providers: ['provider_a', 'provider_b', 'provider_c'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all(Object.values(upstreams ?? {}).map((u) => u.close()));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('the whole flow with the openai client', () => {
  it('answers every line of a batch spread over the three wire formats, once each, in the output file', async () => {
    for (const u of all()) u.reset();
    const letters: ProviderLetter[] = ['a', 'b', 'c'];
    const lines = Array.from({ length: 12 }, (_, i) =>
      batchLine(`req-${i}`, MODELS[letters[i % 3]!], `line-flow-${i}`),
    );
    const created = await submitBatch(client, lines, { metadata: { job: 'nightly' } });
    expect(created).toMatchObject({
      object: 'batch',
      status: 'validating',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect(created.id).toMatch(/^batch_/);
    expect(created.expires_at).toBe(created.created_at + 86_400);

    const done = await pollBatch(client, created.id, 30_000);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 12, completed: 12, failed: 0 });
    expect(done.error_file_id).toBeNull();
    for (const stamp of [done.in_progress_at, done.finalizing_at, done.completed_at])
      expect(stamp).toBeGreaterThanOrEqual(done.created_at);

    const output = await readOutput(client, done.output_file_id);
    expect(output.map((l) => l.custom_id)).toEqual(lines.map((_, i) => `req-${i}`));
    for (const [i, line] of output.entries()) {
      expect(line.id).toMatch(/^batch_req_/);
      expect(line.error).toBeNull();
      expect(line.response?.status_code).toBe(200);
      expect(line.response?.body.object).toBe('chat.completion');
      expect(line.response?.body.choices[0].message.content).toContain(`line-flow-${i}`);
    }
    const calls = upstreamCallsByText(all());
    for (let i = 0; i < 12; i++) expect(calls.get(`line-flow-${i}`)).toBe(1);
    expect(upstreams.b.requests.length).toBe(4);
    expect(upstreams.c.requests.length).toBe(4);

    const file = await client.files.retrieve(done.output_file_id!);
    expect(file).toMatchObject({ object: 'file', purpose: 'batch_output', id: done.output_file_id });
    const text = await (await client.files.content(done.output_file_id!)).text();
    expect(file.bytes).toBe(Buffer.byteLength(text));
  });

  it('lists batches and files page by page with the SDK cursor', async () => {
    const ids: string[] = [];
    for (const page of [0, 1])
      ids.push((await submitBatch(client, [batchLine(`p${page}`, MODELS.a, `line-list-${page}`)])).id);
    const first = await client.batches.list({ limit: 1 });
    expect(first.data).toHaveLength(1);
    expect(first.data[0]!.id).toBe(ids[1]);
    expect(first.has_more).toBe(true);
    const seen: string[] = [];
    for await (const batch of client.batches.list({ limit: 1 })) seen.push(batch.id);
    expect(seen.slice(0, 2)).toEqual([ids[1], ids[0]]);
    expect(new Set(seen).size).toBe(seen.length);
    const files: string[] = [];
    for await (const file of client.files.list({ purpose: 'batch' })) files.push(file.id);
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const id of ids) await pollBatch(client, id, 20_000);
  });

  it('deletes a file', async () => {
    const file = await client.files.create({ file: new File(['{}\n'], 'x.jsonl'), purpose: 'batch' });
    expect(await client.files.delete(file.id)).toEqual({ id: file.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });
});

describe('validation up front', () => {
  it('fails the batch in validating, naming each bad line, and calls no upstream', async () => {
    for (const u of all()) u.reset();
    const lines = [
      batchLine('ok-1', MODELS.a, 'line-valid-1'),
      '{"custom_id": "broken", ',
      batchLine('ok-1', MODELS.b, 'line-valid-dup'),
      batchLine('unknown', 'no-such-model', 'line-valid-unknown'),
      batchLine('big', MODELS.c, `line-valid-big ${'x'.repeat(5000)}`),
      JSON.stringify({ custom_id: 'wrong-url', method: 'POST', url: '/v1/embeddings', body: {} }),
    ];
    const batch = await pollBatch(client, (await submitBatch(client, lines)).id, 20_000);
    expect(batch.status).toBe('failed');
    expect(batch.failed_at).not.toBeNull();
    expect(batch.in_progress_at).toBeNull();
    expect(batch.errors?.data?.map((e) => [e.line, e.code])).toEqual([
      [2, 'invalid_json_line'],
      [3, 'duplicate_custom_id'],
      [4, 'model_not_found'],
      [5, 'request_too_large'],
      [6, 'mismatched_endpoint'],
    ]);
    expect(all().reduce((n, u) => n + u.requests.length, 0)).toBe(0);
  });

  it('refuses what is not a batch request with the error envelope', async () => {
    await expect(
      client.files.create({ file: new File(['{}'], 'x.jsonl'), purpose: 'assistants' }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      client.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/chat/completions', completion_window: '24h' }),
    ).rejects.toMatchObject({ status: 404 });
    const file = await client.files.create({
      file: new File([batchLine('x', MODELS.a, 'line-x')], 'x.jsonl'),
      purpose: 'batch',
    });
    await expect(
      client.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/embeddings' as '/v1/chat/completions',
        completion_window: '24h',
      }),
    ).rejects.toMatchObject({ status: 400 });
    const bad = await fetch(`${gateway.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'multipart/form-data; boundary=zzz' },
      body: 'not multipart',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
  });
});

describe('execution', () => {
  it('writes a line that fails after the retries to the error file; the others complete', async () => {
    for (const u of all()) u.reset();
    // One c line: three attempts (max_retries 2) all get 500.
    upstreams.c.setBehavior({ failNext: { count: 3, status: 500 } });
    const lines = [
      batchLine('good-a', MODELS.a, 'line-fail-a'),
      batchLine('bad-c', MODELS.c, 'line-fail-c'),
      batchLine('good-b', MODELS.b, 'line-fail-b'),
    ];
    const batch = await pollBatch(client, (await submitBatch(client, lines)).id, 30_000);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    expect((await readOutput(client, batch.output_file_id)).map((l) => l.custom_id)).toEqual(['good-a', 'good-b']);
    const errors = await readOutput(client, batch.error_file_id);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      custom_id: 'bad-c',
      error: null,
      response: { status_code: 502, body: { error: { code: 'provider_error' } } },
    });
    expect(upstreams.c.requests.length).toBe(3);
  });

  it('cancels: lines in flight stop, the batch ends cancelled with what was answered, every other line in the error file as batch_cancelled', async () => {
    for (const u of all()) u.reset();
    upstreams.a.setBehavior({ latencyMs: 400 });
    const lines = Array.from({ length: 20 }, (_, i) => batchLine(`c${i}`, MODELS.a, `line-cancel-${i}`));
    const created = await submitBatch(client, lines);
    await pollBatch(client, created.id, 20_000, (b) => b.request_counts!.completed >= 1);
    const cancelling = await client.batches.cancel(created.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);
    const done = await pollBatch(client, created.id, 20_000);
    upstreams.a.setBehavior({ latencyMs: 0 });
    expect(done.status).toBe('cancelled');
    expect(done.cancelling_at).not.toBeNull();
    expect(done.cancelled_at).not.toBeNull();
    expect(done.request_counts!.total).toBe(20);
    expect(done.request_counts!.completed).toBeLessThan(20);
    const output = await readOutput(client, done.output_file_id);
    expect(output).toHaveLength(done.request_counts!.completed);
    // The lines never answered are listed, each once: those that never ran, and those stopped in flight.
    const errors = await readOutput(client, done.error_file_id);
    expect(done.request_counts!.failed).toBe(20 - done.request_counts!.completed);
    expect([...output, ...errors].map((l) => l.custom_id).sort()).toEqual(lines.map((_, i) => `c${i}`).sort());
    for (const line of errors) expect(line).toMatchObject({ response: null, error: { code: 'batch_cancelled' } });
    expect(errors.filter((l) => l.error?.message.includes('never ran')).length).toBeGreaterThan(0);
    expect(errors.filter((l) => l.error?.message.includes('in flight')).length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(upstreams.a.requests.length).toBeLessThan(20);
    await expect(client.batches.cancel(created.id)).resolves.toMatchObject({ status: 'cancelled' });
  });

  it('expires after its completion window: unanswered lines end in the error file as batch_expired', async () => {
    for (const u of all()) u.reset();
    upstreams.b.setBehavior({ latencyMs: 800 });
    const lines = Array.from({ length: 10 }, (_, i) => batchLine(`e${i}`, MODELS.b, `line-expire-${i}`));
    const done = await pollBatch(client, (await submitBatch(client, lines, { window: '2s' })).id, 20_000);
    upstreams.b.setBehavior({ latencyMs: 0 });
    expect(done.status).toBe('expired');
    expect(done.expired_at).not.toBeNull();
    const errors = await readOutput(client, done.error_file_id);
    const answered = await readOutput(client, done.output_file_id);
    expect(answered.length + errors.length).toBe(10);
    expect(errors.length).toBeGreaterThan(0);
    for (const line of errors) expect(line).toMatchObject({ response: null, error: { code: 'batch_expired' } });
  });

  it('runs its lines behind interactive requests on the same provider', async () => {
    for (const u of all()) u.reset();
    upstreams.a.setBehavior({ latencyMs: 300 });
    const lines = Array.from({ length: 6 }, (_, i) => batchLine(`q${i}`, MODELS.a, `line-priority-${i}`));
    const created = await submitBatch(client, lines);
    // The batch holds the provider's one worker, with more lines queued behind.
    await pollBatch(client, created.id, 20_000, (b) => b.status === 'in_progress' && upstreams.a.requests.length >= 1);
    const started = Date.now();
    await client.chat.completions.create({
      model: MODELS.a,
      messages: [{ role: 'user', content: 'line-interactive' }],
    });
    const elapsed = Date.now() - started;
    // At most the line the worker already holds, then this request: never behind the queued lines.
    expect(elapsed).toBeLessThan(3 * 300 + 500);
    const order = upstreams.a.requests.map((r) => /line-[\w-]+/.exec(JSON.stringify(r.body))?.[0]);
    expect(order.indexOf('line-interactive')).toBeLessThanOrEqual(2);
    await pollBatch(client, created.id, 20_000);
    upstreams.a.setBehavior({ latencyMs: 0 });
  });

  it('applies DLP and the cache to lines as to a synchronous call', async () => {
    for (const u of all()) u.reset();
    const text = 'line-dlp mail me at jane.doe@example.com';
    const first = await pollBatch(client, (await submitBatch(client, [batchLine('d', MODELS.a, text)])).id, 20_000);
    expect(first.request_counts).toMatchObject({ completed: 1 });
    expect(JSON.stringify(upstreams.a.requests[0]?.body)).not.toContain('jane.doe@example.com');
    // The same request again: the exact cache answers, the upstream is not called.
    const again = await pollBatch(client, (await submitBatch(client, [batchLine('d2', MODELS.a, text)])).id, 20_000);
    expect(again.request_counts).toMatchObject({ completed: 1 });
    expect(upstreams.a.requests).toHaveLength(1);
    const [line] = await readOutput(client, again.output_file_id);
    expect(line?.response?.body.choices[0].message.content).toContain('line-dlp');
  });
});

describe('ownership', () => {
  it('shows a batch and its files to the key owner and to admin keys only', async () => {
    const batch = await submitBatch(client, [batchLine('own', MODELS.a, 'line-owner')]);
    const other = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: OTHER_KEY, maxRetries: 0 });
    const admin = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: ADMIN_KEY, maxRetries: 0 });
    await expect(other.batches.retrieve(batch.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.content(batch.input_file_id)).rejects.toMatchObject({ status: 404 });
    await expect(other.batches.cancel(batch.id)).rejects.toMatchObject({ status: 404 });
    expect((await other.batches.list()).data.map((b) => b.id)).not.toContain(batch.id);
    await expect(admin.batches.retrieve(batch.id)).resolves.toMatchObject({ id: batch.id });
    const listed: string[] = [];
    for await (const b of admin.batches.list({ limit: 100 })) listed.push(b.id);
    expect(listed).toContain(batch.id);
    await pollBatch(client, batch.id, 20_000);
  });
});
