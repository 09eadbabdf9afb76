import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Native Responses mode (`responses_api: native`) under the gateway's own
 * rules, through real API and worker processes with the `openai` client:
 * DLP_SCAN_REPLIES on the upstream's texts (answer, reasoning summary),
 * whole and streamed, and the upstream's response ids scoped to the key
 * that made them (retrieve, delete, input_items, previous_response_id).
 */

const KEY = 'gw_e2e_native_gaps_key_0123456789';
const OTHER_KEY = 'gw_e2e_native_gaps_other_0123456789';
const LEAK = 'Write to jane.doe@example.com or call 212-555-0147 today.';
const prefix = uniquePrefix('responses-native-gaps');
const blockPrefix = uniquePrefix('responses-native-gaps-block');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
let blockGateway: Gateway;
let client: OpenAI;
let other: OpenAI;
let blockClient: OpenAI;

const env = (redisPrefix: string, action: string) => ({
  REDIS_KEY_PREFIX: redisPrefix,
  API_KEYS: `${KEY},${OTHER_KEY}`,
  KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-native-gaps-')), 'keys.sqlite'),
  PROVIDER_A_API_KEY: 'upstream-a-secret',
  DLP_ACTION: action,
  DLP_SCAN_REPLIES: 'true',
  SEMANTIC_CACHE_ENABLED: 'false',
  RATE_LIMIT_REQUESTS: '100000',
});
const config = () => ({
  providers: [
    {
      name: 'provider_a',
      api_key_env: 'PROVIDER_A_API_KEY',
      base_url: upstream.url,
      models: ['a-o4'],
      upstream_models: { 'a-o4': 'o4-mini' },
      responses_api: 'native',
      timeout_ms: 3000,
      queue_timeout_ms: 5000,
      max_retries: 1,
    },
  ],
});

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'upstream-a-secret' });
  [gateway, blockGateway] = await Promise.all([
    startGateway({ env: env(prefix, 'redact'), config: config(), providers: ['provider_a'] }),
    startGateway({ env: env(blockPrefix, 'block'), config: config(), providers: ['provider_a'] }),
  ]);
  const options = { maxRetries: 0, timeout: 20_000 };
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, ...options });
  other = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: OTHER_KEY, ...options });
  blockClient = new OpenAI({ baseURL: `${blockGateway.baseUrl}/v1`, apiKey: KEY, ...options });
}, 90_000);

afterAll(async () => {
  await Promise.all([gateway?.stop(), blockGateway?.stop()]);
  await upstream?.close();
  await deletePrefix(redis, prefix);
  await deletePrefix(redis, blockPrefix);
  redis.disconnect();
});

beforeEach(() => upstream.reset());

describe('DLP_SCAN_REPLIES on native replies', () => {
  it('redacts the answer and the reasoning summary of a whole response', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const response = await client.responses.create({ model: 'a-o4', input: 'How do I reach Jane?', store: false });
    const text = response.output_text;
    expect(text).toContain('<EMAIL_ADDRESS_1>');
    expect(text).toContain('<PHONE_NUMBER_1>');
    expect(JSON.stringify(response)).not.toContain('jane.doe@example.com');
    expect(JSON.stringify(response)).not.toContain('555-0147');
    const reasoning = response.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.type === 'reasoning' && reasoning.summary[0]?.text).toContain('<EMAIL_ADDRESS_1>');
  });

  it('redacts a streamed reply: the deltas add up to the done text and the final response', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const stream = client.responses.stream({ model: 'a-o4', input: 'How do I reach Jane?', store: false });
    let deltas = '';
    let doneText = '';
    const sequence: number[] = [];
    for await (const event of stream) {
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') deltas += event.delta;
      if (event.type === 'response.output_text.done') doneText = event.text;
    }
    const final = await stream.finalResponse();
    expect(deltas).not.toContain('jane.doe');
    expect(deltas).toContain('<EMAIL_ADDRESS_1>');
    expect(deltas).toContain('<PHONE_NUMBER_1>');
    expect(doneText).toBe(deltas);
    expect(final.output_text).toBe(deltas);
    expect(JSON.stringify(final)).not.toContain('jane.doe@example.com');
    expect(sequence).toEqual(sequence.map((_, i) => i));
  });

  it('refuses a reply with personal data in block mode, whole and streamed', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const err = await blockClient.responses.create({ model: 'a-o4', input: 'Jane?', store: false }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(400);
    expect(err.code).toBe('pii_detected');
    const events: string[] = [];
    const failed = await (async () => {
      const stream = await blockClient.responses.create({ model: 'a-o4', input: 'Jane?', store: false, stream: true });
      for await (const event of stream) events.push(event.type);
    })().catch((e) => e);
    expect(failed).toBeInstanceOf(Error);
    expect(events.join(' ')).not.toContain('response.completed');
  });

  it('leaves a reply without personal data as the upstream wrote it', async () => {
    const response = await client.responses.create({ model: 'a-o4', input: 'hello there', store: false });
    expect(response.output_text).toBe('Echo: hello there');
  });
});

/** The status of a rejected call (0 when it did not fail). */
async function statusOf(call: Promise<unknown>): Promise<number> {
  return call.then(
    () => 0,
    (err: unknown) => (err instanceof OpenAI.APIError ? (err.status ?? -1) : -1),
  );
}

describe('native response ids belong to the key that made them', () => {
  it("retrieves the owner's native response and its input items from the upstream, the model named as asked", async () => {
    const created = await client.responses.create({ model: 'a-o4', input: 'remember the blue door' });
    expect(created.id).toMatch(/^resp_fake/);
    const got = await client.responses.retrieve(created.id);
    expect(got.id).toBe(created.id);
    expect(got.model).toBe('a-o4');
    expect(got.output_text).toBe('Echo: remember the blue door');
    const items = await client.responses.inputItems.list(created.id, { limit: 5 });
    expect(items.data).toHaveLength(1);
    expect(JSON.stringify(items.data[0])).toContain('remember the blue door');
    const paths = upstream.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain(`GET /v1/responses/${created.id}`);
    expect(paths.some((p) => p.startsWith(`GET /v1/responses/${created.id}/input_items`))).toBe(true);
  });

  it('is a 404 for another key: retrieve, input_items, delete and previous_response_id, the upstream never asked', async () => {
    const created = await client.responses.create({ model: 'a-o4', input: 'a private turn' });
    const before = upstream.requests.length;
    expect(await statusOf(other.responses.retrieve(created.id))).toBe(404);
    expect(await statusOf(other.responses.inputItems.list(created.id))).toBe(404);
    expect(await statusOf(other.responses.delete(created.id))).toBe(404);
    expect(
      await statusOf(other.responses.create({ model: 'a-o4', input: 'go on', previous_response_id: created.id })),
    ).toBe(404);
    expect(upstream.requests.length).toBe(before);
    // The owner still has it, and continues it.
    const next = await client.responses.create({ model: 'a-o4', input: 'go on', previous_response_id: created.id });
    expect(next.previous_response_id).toBe(created.id);
  });

  it("deletes the owner's native response upstream; it is then a 404", async () => {
    const created = await client.responses.create({ model: 'a-o4', input: 'forget me' });
    await client.responses.delete(created.id);
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/responses/${created.id}` });
    expect(await statusOf(client.responses.retrieve(created.id))).toBe(404);
    expect(
      await statusOf(client.responses.create({ model: 'a-o4', input: 'again', previous_response_id: created.id })),
    ).toBe(404);
  });

  it('records nothing with store: false, streamed ids are recorded too', async () => {
    const unstored = await client.responses.create({ model: 'a-o4', input: 'not kept', store: false });
    expect(await statusOf(client.responses.retrieve(unstored.id))).toBe(404);
    const stream = client.responses.stream({ model: 'a-o4', input: 'streamed and kept' });
    for await (const _event of stream) {
      // drained
    }
    const final = await stream.finalResponse();
    const got = await client.responses.retrieve(final.id);
    expect(got.output_text).toBe('Echo: streamed and kept');
    expect(await statusOf(other.responses.retrieve(final.id))).toBe(404);
  });

  it('screens a retrieved native response as its reply was (DLP_SCAN_REPLIES)', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const created = await client.responses.create({ model: 'a-o4', input: 'How do I reach Jane?' });
    const got = await client.responses.retrieve(created.id);
    expect(got.output_text).toContain('<EMAIL_ADDRESS_1>');
    expect(JSON.stringify(got)).not.toContain('jane.doe@example.com');
  });
});
