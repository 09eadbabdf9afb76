import { Agent, request } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchLine, pollBatch, submitBatch } from '../support/batches.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Limits of `POST /v1/files` beyond one file's size, through a real API
 * process and the official client: uploads read at once, each key owner's
 * stored bytes, the filename's length, and uploaded files expiring (the
 * input of a running batch excepted). Every refusal is a 4xx in OpenAI's
 * error shape naming the setting.
 */

const KEY = 'gw_e2e_file_limits_key_0123456789';
const OTHER_KEY = 'gw_e2e_file_limits_other_0123456789';
const QUOTA = 8192;
const TTL = 3;
const prefix = uniquePrefix('file-limits');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a', behavior: { latencyMs: 200 } });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: `${KEY},${OTHER_KEY}`,
      PROVIDER_A_API_KEY: 'up-a',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      BATCH_POLL_MS: '100',
      BATCH_CONCURRENCY: '1',
      FILES_MAX_CONCURRENT_UPLOADS: '1',
      FILES_MAX_BYTES_PER_OWNER: String(QUOTA),
      FILES_TTL: String(TTL),
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          concurrency: 1,
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

const clientOf = (apiKey: string) => new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey, maxRetries: 0 });
const jsonl = (bytes: number) => Buffer.from(`${batchLine('x', 'a-4o', 'y'.repeat(Math.max(0, bytes - 100)))}\n`);

describe('upload limits', () => {
  it('refuses an upload beyond FILES_MAX_CONCURRENT_UPLOADS with 429 and Retry-After, and takes it once the other finished', async () => {
    const boundary = 'slowupload';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`;
    const tail = `${batchLine('slow', 'a-4o', 'slow')}\n\r\n--${boundary}--\r\n`;
    const slow = request(`${gateway.baseUrl}/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': Buffer.byteLength(head + tail),
      },
    });
    const answered = new Promise<number>((resolve, reject) => {
      slow.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      slow.on('error', reject);
    });
    slow.write(head);
    // The slow upload is being read: the API holds its one upload slot.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await clientOf(OTHER_KEY)
      .files.create({ file: await toFile(jsonl(500), 'b.jsonl'), purpose: 'batch' })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({
      code: 'rate_limit_exceeded',
      type: 'rate_limit_error',
      message: expect.stringContaining('FILES_MAX_CONCURRENT_UPLOADS'),
    });
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('1');
    slow.end(tail);
    expect(await answered).toBe(200);
    const file = await clientOf(OTHER_KEY).files.create({
      file: await toFile(jsonl(500), 'b.jsonl'),
      purpose: 'batch',
    });
    await clientOf(OTHER_KEY).files.delete(file.id);
  });

  it("keeps each owner's uploads within FILES_MAX_BYTES_PER_OWNER: 400 naming the quota, room again after a delete, other owners untouched", async () => {
    const client = clientOf(KEY);
    for await (const file of client.files.list()) await client.files.delete(file.id);
    const first = await client.files.create({ file: await toFile(jsonl(5000), 'one.jsonl'), purpose: 'batch' });
    const over = await client.files
      .create({ file: await toFile(jsonl(5000), 'two.jsonl'), purpose: 'batch' })
      .catch((err: unknown) => err);
    expect(over).toBeInstanceOf(OpenAI.BadRequestError);
    expect((over as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'invalid_request',
      type: 'invalid_request_error',
      message: expect.stringContaining(`quota of ${QUOTA} bytes`),
    });
    // Another owner has its own quota.
    const other = await clientOf(OTHER_KEY).files.create({
      file: await toFile(jsonl(5000), 'other.jsonl'),
      purpose: 'batch',
    });
    await clientOf(OTHER_KEY).files.delete(other.id);
    await client.files.delete(first.id);
    await expect(
      client.files.create({ file: await toFile(jsonl(5000), 'two.jsonl'), purpose: 'batch' }),
    ).resolves.toMatchObject({ object: 'file' });
  });

  it('refuses a filename longer than FILES_MAX_FILENAME_LENGTH with 400, so no list carries it', async () => {
    const refused = await clientOf(OTHER_KEY)
      .files.create({ file: await toFile(jsonl(300), `${'n'.repeat(100_000)}.jsonl`), purpose: 'batch' })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('FILES_MAX_FILENAME_LENGTH'),
    });
    const listed = JSON.stringify((await clientOf(OTHER_KEY).files.list()).data);
    expect(listed).not.toContain('n'.repeat(300));
  });

  it('answers a refusal found mid-body at once, closes the connection of a client that stops sending, and serves the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const boundary = 'refusedmidbody';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${'n'.repeat(300)}.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`;
    try {
      const upload = request(`${gateway.baseUrl}/v1/files`, {
        agent,
        method: 'POST',
        headers: {
          authorization: `Bearer ${OTHER_KEY}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': Buffer.byteLength(head) + 1000,
        },
      });
      const closed = new Promise((resolve) => upload.once('close', resolve));
      upload.on('error', () => {});
      const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        upload.on('response', (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        upload.once('error', reject);
        // The refusal comes while the body is still being sent; the rest of it never follows.
        upload.write(head);
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toContain('FILES_MAX_FILENAME_LENGTH');
      // The server gives the client a while to stop sending, then closes its connection.
      await closed;
      const next = await new Promise<number>((resolve, reject) => {
        const list = request(`${gateway.baseUrl}/v1/files`, {
          agent,
          headers: { authorization: `Bearer ${OTHER_KEY}` },
        });
        list.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        list.on('error', reject);
        list.end();
      });
      expect(next).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it('expires uploaded files after FILES_TTL, except the input of a batch still running', async () => {
    const client = clientOf(OTHER_KEY);
    const idle = await client.files.create({ file: await toFile(jsonl(300), 'idle.jsonl'), purpose: 'batch' });
    expect(idle.expires_at).toBe(idle.created_at + TTL);
    // Forty lines at 200 ms one at a time: the batch outlives its file's TTL and the next purge.
    const batch = await submitBatch(
      client,
      Array.from({ length: 40 }, (_, i) => batchLine(`t${i}`, 'a-4o', `line-ttl-${i}`)),
    );
    await waitFor(
      async () =>
        await client.files.retrieve(idle.id).then(
          () => false,
          (err: { status?: number }) => err.status === 404,
        ),
      15_000,
      'the idle file to expire',
    );
    const running = await client.batches.retrieve(batch.id);
    expect(running.status).toBe('in_progress');
    await expect(client.files.retrieve(running.input_file_id)).resolves.toMatchObject({ id: running.input_file_id });
    expect((await pollBatch(client, batch.id, 30_000)).status).toBe('completed');
  });
});
