import OpenAI, { toFile } from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { FILE_CHUNK_BYTES } from '../../src/batches/file-upload.ts';
import { batchLine, pollBatch, readOutput } from '../support/batches.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import type { Untyped } from '../support/untyped.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Uploads larger than one stored chunk, through a real API process and the
 * official client, on SQLite and on PostgreSQL: the file comes back
 * byte-identical from `GET /v1/files/{id}/content`, and a batch over such a
 * file (lines and multi-byte characters across chunk ends) validates and runs
 * every line once.
 */

const KEY = 'gw_e2e_file_chunks_key_0123456789';
const MAX_FILE_BYTES = 4 * FILE_CHUNK_BYTES;
let baseUrl = '';
const redis = testRedis();
const started: Array<{ gateway: Gateway; upstream: FakeUpstream; prefix: string }> = [];
let postgres: TestDatabase | undefined;

afterAll(async () => {
  for (const { gateway, upstream, prefix } of started) {
    await gateway.stop();
    await upstream.close();
    await deletePrefix(redis, prefix);
  }
  await postgres?.drop();
  redis.disconnect();
});

async function gatewayOn(database: 'sqlite' | 'postgres'): Promise<OpenAI> {
  const prefix = uniquePrefix(`file-chunks-${database}`);
  const upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up-a' });
  if (database === 'postgres') postgres = await createTestDatabase('file_chunks');
  const gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'up-a',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      BATCH_POLL_MS: '100',
      BATCH_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
      ...(postgres && database === 'postgres' ? { DATABASE_URL: postgres.url } : {}),
    },
    config: {
      providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] }],
    },
    providers: ['provider_a'],
  });
  started.push({ gateway, upstream, prefix });
  baseUrl = gateway.baseUrl;
  return new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
}

describe.each(['sqlite', 'postgres'] as const)('on %s', (database) => {
  let client: OpenAI;

  it('stores an upload of 2.5 chunks and returns it byte-identical', async () => {
    client = await gatewayOn(database);
    // Varied lines with two- and three-byte characters, so chunk ends fall inside lines and characters.
    const lines: string[] = [];
    for (let i = 0, bytes = 0; bytes < 2.5 * FILE_CHUNK_BYTES; i++) {
      lines.push(batchLine(`c${i}`, 'a-4o', `é€ line ${i} ${'z'.repeat(i % 997)}`));
      bytes += Buffer.byteLength(lines[i]!) + 1;
    }
    const original = Buffer.from(`${lines.join('\n')}\n`);
    const file = await client.files.create({ file: await toFile(original, 'big.jsonl'), purpose: 'batch' });
    expect(file.bytes).toBe(original.length);
    const read = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
    expect(read.length).toBe(original.length);
    expect(read.equals(original)).toBe(true);
  }, 60_000);

  it('validates and runs a batch whose input spans several chunks, every line once', async () => {
    // 40 lines of about 70 KB: 2.7 chunks.
    const lines = Array.from({ length: 40 }, (_, i) => batchLine(`l${i}`, 'a-4o', `ü${i} ${'w'.repeat(70_000)}`));
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'run.jsonl'),
      purpose: 'batch',
    });
    expect(file.bytes).toBeGreaterThan(2 * FILE_CHUNK_BYTES);
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await pollBatch(client, batch.id, 45_000);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toMatchObject({ total: 40, completed: 40, failed: 0 });
    const output = await readOutput(client, done.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual(lines.map((_, i) => `l${i}`).sort());
  }, 60_000);

  it('refuses with 413 an upload sent without a length once its bytes pass BATCH_MAX_FILE_BYTES, and keeps nothing of it', async () => {
    const before = (await client.files.list()).data.length;
    const boundary = 'chunked-boundary';
    const piece = Buffer.alloc(256 * 1024, 'y');
    let sent = 0;
    // A streamed body (chunked transfer encoding): the limit can only be found while reading it.
    async function* body() {
      yield Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.jsonl"\r\n\r\n`,
      );
      while (sent < 2 * MAX_FILE_BYTES) {
        sent += piece.length;
        yield piece;
      }
      yield Buffer.from(`\r\n--${boundary}--\r\n`);
    }
    const reply = await fetch(`${baseUrl}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: ReadableStream.from(body()),
      duplex: 'half',
    } as RequestInit);
    expect(reply.status).toBe(413);
    expect(((await reply.json()) as Untyped).error.code).toBe('request_too_large');
    expect((await client.files.list()).data).toHaveLength(before);
  }, 60_000);
});
