import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * DLP_SCAN_REPLIES and DLP_RESTORE through running processes, the upstream a
 * loopback server that echoes the prompt (or says a fixed text) and records
 * what it received: the client reads its own values back while the upstream
 * only saw placeholders, values the upstream writes are redacted (or the
 * reply blocked), streamed or not, and from the cache too.
 */
const KEY = 'gw_dlp_replies_key_0123456789abcdef';
const UPSTREAM_KEY = 'up-dlp-replies';
const EMAIL = 'jörg.müller@beispiel.de';
const LEAK = 'Please contact zoë.lindqvist@exämple.se or +46 70 123 45 67.';

const redis = testRedis();
const restorePrefix = uniquePrefix('dlp-replies-restore');
const blockPrefix = uniquePrefix('dlp-replies-block');
let upstream: FakeUpstream;
let restoreGw: Gateway;
let blockGw: Gateway;
let restoreClient: OpenAI;
let blockClient: OpenAI;

const env = (prefix: string, action: string) => ({
  REDIS_KEY_PREFIX: prefix,
  API_KEYS: KEY,
  PROVIDER_A_API_KEY: UPSTREAM_KEY,
  DLP_ACTION: action,
  DLP_SCAN_REPLIES: 'true',
  DLP_RESTORE: 'true',
  SEMANTIC_CACHE_ENABLED: 'false',
  RATE_LIMIT_REQUESTS: '100000',
});
const config = () => ({
  providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] }],
});

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  [restoreGw, blockGw] = await Promise.all([
    startGateway({ env: env(restorePrefix, 'redact'), config: config(), providers: ['provider_a'] }),
    startGateway({ env: env(blockPrefix, 'block'), config: config(), providers: ['provider_a'] }),
  ]);
  restoreClient = new OpenAI({ baseURL: `${restoreGw.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  blockClient = new OpenAI({ baseURL: `${blockGw.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
}, 90_000);

beforeEach(() => upstream.reset());

afterAll(async () => {
  await Promise.all([restoreGw?.stop(), blockGw?.stop()]);
  await upstream?.close();
  await deletePrefix(redis, restorePrefix);
  await deletePrefix(redis, blockPrefix);
  redis.disconnect();
});

async function streamed(client: OpenAI, content: string): Promise<string> {
  const stream = await client.chat.completions.create({
    model: 'a-4o',
    stream: true,
    messages: [{ role: 'user', content }],
  });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

const lastSent = () => JSON.stringify(upstream.requests.at(-1)?.body);

describe('DLP_RESTORE with DLP_SCAN_REPLIES (redact)', () => {
  it('gives the client its own value back; the upstream only saw the placeholder', async () => {
    const completion = await restoreClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: `write to ${EMAIL} (json)` }],
    });
    expect(completion.choices[0]!.message.content).toBe(`Echo: write to ${EMAIL} (json)`);
    expect(lastSent()).toContain('write to <EMAIL_ADDRESS_1> (json)');
    expect(lastSent()).not.toContain('müller');
  });

  it('restores in streamed replies too', async () => {
    expect(await streamed(restoreClient, `stream to ${EMAIL} please`)).toBe(`Echo: stream to ${EMAIL} please`);
    expect(lastSent()).not.toContain('müller');
  });

  it('restores from the cache with the values of the client asking, not of the one that filled it', async () => {
    await restoreClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'cached for anna@example.org' }],
    });
    const second = await restoreClient.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'cached for ben@example.net' }] })
      .withResponse();
    expect(second.response.headers.get('x-cache')).toBe('HIT');
    expect(second.data.choices[0]!.message.content).toBe('Echo: cached for ben@example.net');
    expect(upstream.requests).toHaveLength(1);
  });

  it('redacts values the upstream writes, in JSON and streamed replies', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const completion = await restoreClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'who do I call? (json)' }],
    });
    expect(completion.choices[0]!.message.content).toBe('Please contact <EMAIL_ADDRESS_1> or <PHONE_NUMBER_1>.');
    const text = await streamed(restoreClient, 'who do I call? (sse)');
    expect(text).toBe('Please contact <EMAIL_ADDRESS_1> or <PHONE_NUMBER_1>.');
    for (const fragment of ['lindq', 'exä', '123 45']) expect(text).not.toContain(fragment);
  });
});

describe('DLP_SCAN_REPLIES with block', () => {
  it('answers 400 pii_detected naming the reply when the upstream wrote personal data', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const err = await blockClient.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'who do I call? (block json)' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('pii_detected');
    expect((err as Error).message).toContain(
      'The reply contains personal data and was blocked: EMAIL_ADDRESS, PHONE_NUMBER.',
    );
    expect((err as Error).message).not.toContain('lindqvist');
  });

  it('ends a streamed reply with an error event before the value is sent', async () => {
    upstream.setBehavior({ replyText: LEAK });
    let text = '';
    const err = await (async () => {
      const stream = await blockClient.chat.completions.create({
        model: 'a-4o',
        stream: true,
        messages: [{ role: 'user', content: 'who do I call? (block sse)' }],
      });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('The reply contains personal data and was blocked');
    expect(text).not.toContain('lindqvist');
  });

  it('lets a clean reply through', async () => {
    const completion = await blockClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'nothing personal here' }],
    });
    expect(completion.choices[0]!.message.content).toBe('Echo: nothing personal here');
  });
});
