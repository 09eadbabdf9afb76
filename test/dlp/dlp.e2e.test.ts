import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * DLP through running processes (API + provider worker + fake upstream),
 * driven by the official openai client: in `redact` mode the upstream sees
 * only placeholders; in `block` mode the client gets 400 pii_detected and
 * the upstream sees nothing; raw values reach neither Redis nor the logs.
 */

const KEY = 'gw_dlp_e2e_key_0123456789abcdef';
const UPSTREAM_KEY = 'up-dlp-e2e';

// Distinctive values, so a search for them can only hit what this file sent.
const RAW = {
  email: 'dlp.e2e.person@example.com',
  phone: '(415) 555-2671',
  card: '4111 1111 1111 1111',
  iban: 'DE89 3704 0044 0532 0130 00',
  ssn: '536-22-1234',
  awsKey: 'AKIAIOSFODNN7EXAMPLE',
  jwt: `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"sub":"dlp-e2e"}').toString('base64url')}.c2lnbmF0dXJlLWRscC1lMmU`,
};
/** Every raw value and its compact spellings (digits only, no spaces). */
const NEEDLES = [
  ...Object.values(RAW),
  '4111111111111111',
  'DE89370400440532013000',
  '536221234',
  '4155552671',
  '415-555-2671',
];

const redis = testRedis();
const redactPrefix = uniquePrefix('dlp-e2e-redact');
const blockPrefix = uniquePrefix('dlp-e2e-block');
let upstream: FakeUpstream;
let redactGw: Gateway;
let blockGw: Gateway;
let redactClient: OpenAI;
let blockClient: OpenAI;

function gatewayEnv(prefix: string, action: string): Record<string, string> {
  return {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: KEY,
    PROVIDER_A_API_KEY: UPSTREAM_KEY,
    DLP_ACTION: action,
    SEMANTIC_CACHE_ENABLED: 'false',
    RATE_LIMIT_REQUESTS: '100000',
    // Verbose logs make the "no raw values in logs" check meaningful.
    LOG_LEVEL: 'debug',
  };
}

const config = () => ({
  providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] }],
});

function sentMessages(index = -1): { role: string; content: string }[] {
  const request = upstream.requests.at(index);
  return (request?.body as { messages: { role: string; content: string }[] }).messages;
}

function containsRaw(text: string): string[] {
  return NEEDLES.filter((needle) => text.includes(needle));
}

/** Every value stored under `prefix`, whatever the key type, as one string per key. */
async function dumpRedis(prefix: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const key of await keysUnder(redis, prefix)) {
    const type = await redis.type(key);
    let value: unknown;
    if (type === 'string') value = await redis.getBuffer(key).then((b) => b?.toString('latin1'));
    else if (type === 'hash') value = await redis.hgetall(key);
    else if (type === 'list') value = await redis.lrange(key, 0, -1);
    else if (type === 'set') value = await redis.smembers(key);
    else if (type === 'zset') value = await redis.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'stream') value = await redis.xrange(key, '-', '+');
    out.set(key, JSON.stringify(value));
  }
  return out;
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  [redactGw, blockGw] = await Promise.all([
    startGateway({ env: gatewayEnv(redactPrefix, 'redact'), config: config(), providers: ['provider_a'] }),
    startGateway({ env: gatewayEnv(blockPrefix, 'block'), config: config(), providers: ['provider_a'] }),
  ]);
  redactClient = new OpenAI({ baseURL: `${redactGw.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
  blockClient = new OpenAI({ baseURL: `${blockGw.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
}, 90_000);

afterAll(async () => {
  await Promise.all([redactGw?.stop(), blockGw?.stop()]);
  await upstream?.close();
  await deletePrefix(redis, redactPrefix);
  await deletePrefix(redis, blockPrefix);
  redis.disconnect();
});

describe('DLP_ACTION=redact', () => {
  it('sends the upstream numbered typed placeholders, consistent across messages', async () => {
    const completion = await redactClient.chat.completions.create({
      model: 'a-4o',
      messages: [
        { role: 'system', content: `Support agent. Escalations go to ${RAW.email}.` },
        {
          role: 'user',
          content: `I am ${RAW.email}, phone ${RAW.phone}. My card ${RAW.card} was charged; refund to ${RAW.iban}.`,
        },
        { role: 'assistant', content: 'Please confirm your identity.' },
        {
          role: 'user',
          content: `SSN ${RAW.ssn}. Also our CI leaked ${RAW.awsKey} and token=${RAW.jwt}; write to ${RAW.email}.`,
        },
      ],
    });

    const sent = sentMessages();
    expect(sent.map((m) => m.content)).toEqual([
      'Support agent. Escalations go to <EMAIL_ADDRESS_1>.',
      'I am <EMAIL_ADDRESS_1>, phone <PHONE_NUMBER_1>. My card <CREDIT_CARD_1> was charged; refund to <IBAN_CODE_1>.',
      'Please confirm your identity.',
      'SSN <US_SSN_1>. Also our CI leaked <CLOUD_ACCESS_KEY_1> and token=<JWT_1>; write to <EMAIL_ADDRESS_1>.',
    ]);
    expect(containsRaw(JSON.stringify(upstream.requests.at(-1)?.body))).toEqual([]);
    // The model only ever saw placeholders, so that is what it can answer with.
    expect(completion.choices[0]?.message.content).toBe(
      'Echo: SSN <US_SSN_1>. Also our CI leaked <CLOUD_ACCESS_KEY_1> and token=<JWT_1>; write to <EMAIL_ADDRESS_1>.',
    );
  });

  it('redacts streamed requests the same way', async () => {
    const stream = await redactClient.chat.completions.create({
      model: 'a-4o',
      stream: true,
      messages: [{ role: 'user', content: `Stream it: call ${RAW.phone} or mail ${RAW.email} (again ${RAW.phone}).` }],
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(sentMessages().at(-1)?.content).toBe(
      'Stream it: call <PHONE_NUMBER_1> or mail <EMAIL_ADDRESS_1> (again <PHONE_NUMBER_1>).',
    );
    expect(text).toBe('Echo: Stream it: call <PHONE_NUMBER_1> or mail <EMAIL_ADDRESS_1> (again <PHONE_NUMBER_1>).');
  });

  it('redacts asynchronous jobs before they are queued', async () => {
    const headers = { 'content-type': 'application/json', 'x-api-key': KEY };
    const created = await fetch(`${redactGw.baseUrl}/v1/chat/completions/jobs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        model: 'a-4o',
        messages: [{ role: 'user', content: `Batch: card ${RAW.card}, SSN ${RAW.ssn}` }],
      }),
    });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    let job: { status: string; result: OpenAI.ChatCompletion | null } = { status: 'queued', result: null };
    for (let i = 0; i < 100 && job.status !== 'completed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await (
        await fetch(`${redactGw.baseUrl}/v1/chat/completions/jobs/${id}`, { headers })
      ).json()) as typeof job;
    }
    expect(job.status).toBe('completed');
    expect(job.result?.choices[0]?.message.content).toBe('Echo: Batch: card <CREDIT_CARD_1>, SSN <US_SSN_1>');
    expect(sentMessages().at(-1)?.content).toBe('Batch: card <CREDIT_CARD_1>, SSN <US_SSN_1>');
  });

  it('passes a request without personal data through unchanged', async () => {
    await redactClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'Version 2.14.3 shipped on 2024-10-12; order #20240312-0042.' }],
    });
    expect(sentMessages().at(-1)?.content).toBe('Version 2.14.3 shipped on 2024-10-12; order #20240312-0042.');
  });

  it('counts findings by entity type and action in /metrics, without values', async () => {
    const res = await fetch(`${redactGw.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/gateway_dlp_findings_total\{entity_type="EMAIL_ADDRESS",action="redact"\} 4\b/);
    expect(text).toMatch(/gateway_dlp_findings_total\{entity_type="PHONE_NUMBER",action="redact"\} 3\b/);
    expect(text).toMatch(/gateway_dlp_findings_total\{entity_type="CREDIT_CARD",action="redact"\} 2\b/);
    expect(containsRaw(text)).toEqual([]);
  });
});

describe('DLP_ACTION=block', () => {
  it('answers 400 pii_detected naming the entity types, and the upstream sees nothing', async () => {
    const before = upstream.requests.length;
    const err = await blockClient.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: `Charge ${RAW.card} and mail ${RAW.email}` }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('pii_detected');
    expect(bad.type).toBe('invalid_request_error');
    expect(bad.message).toContain('CREDIT_CARD, EMAIL_ADDRESS');
    expect(containsRaw(JSON.stringify(bad.error))).toEqual([]);
    expect(bad.headers?.get('x-request-id')).toBeTruthy();
    expect(upstream.requests.length).toBe(before);
  });

  it('blocks streamed requests before any stream starts', async () => {
    const err = await blockClient.chat.completions
      .create({ model: 'a-4o', stream: true, messages: [{ role: 'user', content: `key ${RAW.awsKey}` }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).message).toContain('CLOUD_ACCESS_KEY');
  });

  it('blocks asynchronous jobs too', async () => {
    const res = await fetch(`${blockGw.baseUrl}/v1/chat/completions/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: `SSN ${RAW.ssn}` }] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('pii_detected');
  });

  it('lets clean requests through', async () => {
    const completion = await blockClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: 'What is 2 + 2?' }],
    });
    expect(completion.choices[0]?.message.content).toBe('Echo: What is 2 + 2?');
  });
});

describe('raw values stay out of storage and logs', () => {
  it('never reach Redis: cache entries, job data and reply streams hold placeholders only', async () => {
    for (const prefix of [redactPrefix, blockPrefix]) {
      const dump = await dumpRedis(prefix);
      expect(dump.size).toBeGreaterThan(0);
      for (const [key, value] of dump) expect(containsRaw(value), key).toEqual([]);
    }
    // The stored requests and replies were looked at: some of them carry the placeholders.
    const redacted = [...(await dumpRedis(redactPrefix)).values()].join('\n');
    expect(redacted).toContain('<EMAIL_ADDRESS_1>');
  });

  it('never reach the process logs', () => {
    const logs = [redactGw, blockGw]
      .flatMap((gw) => [gw.api.output(), ...[...gw.workers.values()].flat().map((w) => w.output())])
      .join('\n');
    expect(logs.length).toBeGreaterThan(0);
    expect(containsRaw(logs)).toEqual([]);
  });
});
