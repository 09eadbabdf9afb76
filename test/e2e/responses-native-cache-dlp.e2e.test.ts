import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * DLP on the replies of a native Responses provider (`responses_api: native`)
 * when the exact cache answers a `store: false` request, through real API and
 * worker processes with the `openai` client: a hit is screened as the miss
 * that filled it was (DLP_SCAN_REPLIES redacts what the upstream wrote,
 * DLP_RESTORE gives the asking client its own values back), whole and
 * streamed, and never reaches the upstream.
 */

const KEY = 'gw_e2e_native_cache_dlp_key_0123456789';
const UPSTREAM_KEY = 'upstream-native-cache-dlp-secret';
const LEAK = 'Write to jane.doe@example.com or call 212-555-0147 today.';
const REDACTED = 'Write to <EMAIL_ADDRESS_1> or call <PHONE_NUMBER_1> today.';
const prefix = uniquePrefix('responses-native-cache-dlp');
const redis = testRedis();
let upstream: FakeUpstream;
let gateway: Gateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_N_API_KEY: UPSTREAM_KEY,
      DLP_ACTION: 'redact',
      DLP_SCAN_REPLIES: 'true',
      DLP_RESTORE: 'true',
      CACHE_ENABLED: 'true',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
    },
    config: {
      providers: [
        {
          name: 'provider_n',
          api_key_env: 'PROVIDER_N_API_KEY',
          format: 'openai',
          base_url: upstream.url,
          models: ['n-o4'],
          upstream_models: { 'n-o4': 'o4-mini' },
          responses_api: 'native',
          timeout_ms: 3000,
          queue_timeout_ms: 5000,
          max_retries: 0,
        },
      ],
    },
    providers: ['provider_n'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

beforeEach(() => upstream.reset());

/** Upstream `/responses` calls that carried `text`. */
function calls(text: string): number {
  return upstream.requests.filter((r) => r.path === '/v1/responses' && JSON.stringify(r.body).includes(text)).length;
}

interface Streamed {
  cache: string | null;
  /** The output text deltas, added up. */
  deltas: string;
  /** Every event's JSON, for what must not be in any of them. */
  raw: string;
  final: Untyped;
}

/** A raw streamed request: its `X-Cache`, its text deltas and its final response. */
async function streamed(body: Record<string, unknown>): Promise<Streamed> {
  const res = await fetch(`${gateway.baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  const raw = await res.text();
  const events = raw
    .split('\n\n')
    .filter((frame) => frame.includes('data: '))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Untyped);
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  const deltas = events
    .filter((e) => e.type === 'response.output_text.delta')
    .map((e) => e.delta as string)
    .join('');
  const done = events.find((e) => e.type === 'response.output_text.done');
  expect(done?.text).toBe(deltas);
  const final = events.at(-1)!;
  expect(final.type).toBe('response.completed');
  return { cache: res.headers.get('x-cache'), deltas, raw, final: final.response };
}

/** The message's text of a response object as sent (`output_text` is the SDK's, not on the wire). */
function answerOf(response: Untyped): string {
  return (response.output as Untyped[]).find((item) => item.type === 'message')?.content[0]?.text;
}

/** The reasoning summary's text of a response object. */
function summaryOf(response: Untyped): string {
  return (response.output as Untyped[]).find((item) => item.type === 'reasoning')?.summary[0]?.text;
}

describe('DLP_SCAN_REPLIES on a native cache hit', () => {
  it('redacts what the upstream wrote on the miss and on the hit, whole then streamed', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const body = { model: 'n-o4', input: 'How do I reach Jane, whole?', store: false };
    const miss = await client.responses.create(body).withResponse();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    expect(miss.data.output_text).toBe(REDACTED);
    expect(summaryOf(miss.data)).toBe(`Thinking about: ${REDACTED}`);

    const hit = await client.responses.create(body).withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.data.output_text).toBe(REDACTED);
    expect(summaryOf(hit.data)).toBe(`Thinking about: ${REDACTED}`);
    for (const leaked of ['jane.doe', 'example.com', '555-0147'])
      expect(JSON.stringify(hit.data)).not.toContain(leaked);

    const replay = await streamed(body);
    expect(replay.cache).toBe('HIT');
    expect(replay.deltas).toBe(REDACTED);
    expect(answerOf(replay.final)).toBe(REDACTED);
    expect(summaryOf(replay.final)).toBe(`Thinking about: ${REDACTED}`);
    for (const leaked of ['jane.doe', 'example.com', '555-0147']) expect(replay.raw).not.toContain(leaked);
    expect(calls('How do I reach Jane, whole?')).toBe(1);
  });

  it('redacts a streamed miss and its streamed and whole hits', async () => {
    upstream.setBehavior({ replyText: LEAK });
    const body = { model: 'n-o4', input: 'How do I reach Jane, streamed?', store: false };
    const miss = await streamed(body);
    expect(miss.cache).toBe('MISS');
    expect(miss.deltas).toBe(REDACTED);
    expect(answerOf(miss.final)).toBe(REDACTED);
    expect(miss.raw).not.toContain('jane.doe');

    const hit = await streamed(body);
    expect(hit.cache).toBe('HIT');
    expect(hit.deltas).toBe(REDACTED);
    expect(summaryOf(hit.final)).toBe(`Thinking about: ${REDACTED}`);
    for (const leaked of ['jane.doe', 'example.com', '555-0147']) expect(hit.raw).not.toContain(leaked);

    const whole = await client.responses.create(body).withResponse();
    expect(whole.response.headers.get('x-cache')).toBe('HIT');
    expect(whole.data.output_text).toBe(REDACTED);
    expect(calls('How do I reach Jane, streamed?')).toBe(1);
  });
});

describe('DLP_RESTORE on a native cache hit', () => {
  it("restores the asking client's own value on the hit, not the one of the request that filled it", async () => {
    const ask = (email: string) => ({ model: 'n-o4', input: `remind ${email} of the meeting`, store: false });
    const miss = await client.responses.create(ask('anna@example.org')).withResponse();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    expect(miss.data.output_text).toBe('Echo: remind anna@example.org of the meeting');
    // The upstream only ever saw the placeholder.
    expect(calls('remind <EMAIL_ADDRESS_1> of the meeting')).toBe(1);
    expect(JSON.stringify(upstream.requests)).not.toContain('anna@example.org');

    const hit = await client.responses.create(ask('ben@example.net')).withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(hit.data.output_text).toBe('Echo: remind ben@example.net of the meeting');
    expect(summaryOf(hit.data)).toBe('Thinking about: remind ben@example.net of the meeting');
    expect(JSON.stringify(hit.data)).not.toContain('anna@example.org');

    const replay = await streamed(ask('carl@example.com'));
    expect(replay.cache).toBe('HIT');
    expect(replay.deltas).toBe('Echo: remind carl@example.com of the meeting');
    expect(answerOf(replay.final)).toBe('Echo: remind carl@example.com of the meeting');
    expect(replay.raw).not.toContain('anna@example.org');
    expect(calls('of the meeting')).toBe(1);
  });
});
