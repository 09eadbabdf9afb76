import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream, ProviderLetter } from '../support/fake-upstream.ts';
import type { Gateway } from '../support/processes.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';
import { startGatewayWithTrio, type TrioGateway } from '../support/trio-gateway.ts';

/**
 * Upstreams that echo the request's headers (`authorization=Bearer <key>`,
 * `x-goog-api-key=<key>`, `x-api-key=<key>`) into every text they send back:
 * error bodies, a malformed stream event, a mid-stream error event. Through
 * a real API process, real workers and real Redis, in all three formats, the
 * upstream key must reach neither the client (JSON and SSE errors), nor any
 * process's log, nor Redis.
 */

const KEY = 'gw_security_echo_key_0123456789';
const prefix = uniquePrefix('upstream-echo');
const redis = testRedis();
const MODELS: Record<ProviderLetter, string> = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-sonnet-4-20250514' };
let gateway: Gateway;
let upstreams: Record<ProviderLetter, FakeUpstream>;
let trio: TrioGateway | undefined;
let secrets: string[];

beforeAll(async () => {
  trio = await startGatewayWithTrio({
    prefix,
    apiKeys: [KEY],
    models: MODELS,
    provider: { timeout_ms: 2000, stream_idle_timeout_ms: 2000, max_retries: 1 },
    env: { DLP_ENABLED: 'false', CACHE_ENABLED: 'false', LOG_LEVEL: 'debug' },
  });
  ({ gateway, upstreams } = trio);
  secrets = Object.values(trio.upstreamEnv);
}, 60_000);

afterAll(async () => {
  await trio?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const WORDS = 'one two three four five six seven eight nine ten';

async function chat(model: string, stream: boolean): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: `${WORDS} ${Math.random()}` }] }),
  });
  const headers = [...res.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  return { status: res.status, text: `${headers}\n\n${await res.text()}` };
}

/** The envelope of a JSON error reply, or of the SSE `error` event that ended a stream. */
function errorOf(text: string): { code: string; message: string } {
  const body = text.includes('event: error\ndata: ')
    ? (text.split('event: error\ndata: ')[1]?.split('\n')[0] ?? '')
    : text.slice(text.indexOf('\n\n') + 2);
  return (JSON.parse(body) as { error: { code: string; message: string } }).error;
}

function expectNoSecret(text: string): void {
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describe.each(Object.keys(MODELS) as ProviderLetter[])('provider_%s echoing its request headers', (letter) => {
  const model = MODELS[letter];
  const upstream = () => upstreams[letter];

  it('a 400 error body: the JSON error quotes the upstream with its key redacted', async () => {
    upstream().reset();
    upstream().setBehavior({ echoHeaders: true, failNext: { count: 1, status: 400, message: 'Bad request.' } });
    const { status, text } = await chat(model, false);
    expect(status).toBe(400);
    expectNoSecret(text);
    const error = errorOf(text);
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain('Request headers:');
    expect(error.message).toContain('[redacted]');
  });

  it('a 500 error body after the retries: a 502 without the key', async () => {
    upstream().reset();
    upstream().setBehavior({ echoHeaders: true, failNext: { count: 5, status: 500 } });
    const { status, text } = await chat(model, true);
    expect(status).toBe(502);
    expectNoSecret(text);
    expect(errorOf(text).message).toContain('after 2 attempts');
    expect(upstream().requests).toHaveLength(2);
  });

  it('a malformed first stream event: a JSON 502 that names the event, not its bytes', async () => {
    upstream().reset();
    upstream().setBehavior({ echoHeaders: true, malformedChunkAt: 0 });
    const { status, text } = await chat(model, true);
    expect(status).toBe(502);
    expectNoSecret(text);
    expect(errorOf(text)).toMatchObject({
      code: 'provider_error',
      message: expect.stringMatching(/Malformed JSON in event 1 .*\(\d+ characters\)/),
    });
  });

  it('a malformed stream event after tokens were sent: an SSE error event without the key', async () => {
    upstream().reset();
    upstream().setBehavior({ echoHeaders: true, malformedChunkAt: 5 });
    const { status, text } = await chat(model, true);
    expect(status).toBe(200);
    expect(text).toContain('data: {"id"');
    expect(text).toContain('event: error');
    expectNoSecret(text);
    expect(errorOf(text).code).toBe('provider_error');
  });

  it('a mid-stream error event after tokens were sent: an SSE error event quoting it redacted', async () => {
    upstream().reset();
    upstream().setBehavior({ echoHeaders: true, errorEventAt: 5 });
    const { status, text } = await chat(model, true);
    expect(status).toBe(200);
    expect(text).toContain('event: error');
    expectNoSecret(text);
    expect(errorOf(text).message).toContain('[redacted]');
  });
});

describe('keys of other providers and what the processes keep', () => {
  it('an upstream quoting another provider key the worker knows: removed too', async () => {
    upstreams.a.reset();
    upstreams.a.setBehavior({
      failNext: {
        count: 1,
        status: 400,
        message: `copied from a neighbour: ${upstreams.c.apiKey} and ${upstreams.b.apiKey}`,
      },
    });
    const { status, text } = await chat(MODELS.a, false);
    expect(status).toBe(400);
    expectNoSecret(text);
    expect(errorOf(text).message).toContain('copied from a neighbour: [redacted] and [redacted]');
  });

  it('no upstream key in the output of the API or of any worker, nor anywhere under the Redis prefix', async () => {
    const output = [gateway.api, ...[...gateway.workers.values()].flat()].map((p) => p.output()).join('\n');
    // The failures above were logged (the API logs every 5xx it answers)...
    expect(output).toContain('provider_error');
    // ...without the keys the upstreams echoed.
    expectNoSecret(output);

    // The reply streams carried the texts the replies above were checked for; they are deleted once read.
    await expect.poll(async () => (await keysUnder(redis, `${prefix}:resp`)).length, { timeout: 3_000 }).toBe(0);
    const keys = await keysUnder(redis, prefix);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const type = await redis.type(key);
      let dump = '';
      if (type === 'string') dump = (await redis.get(key)) ?? '';
      else if (type === 'hash') dump = JSON.stringify(await redis.hgetall(key));
      else if (type === 'stream') dump = JSON.stringify(await redis.xrange(key, '-', '+'));
      else if (type === 'list') dump = JSON.stringify(await redis.lrange(key, 0, -1));
      else if (type === 'zset' || type === 'set')
        dump = JSON.stringify(type === 'set' ? await redis.smembers(key) : await redis.zrange(key, 0, -1));
      for (const secret of secrets) expect(dump, `${key} holds an upstream key`).not.toContain(secret);
    }
  });
});
