import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { spawnGatewayProcess, startGateway, waitFor, type Gateway, type GatewayProcess } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Native Responses mode (`responses_api: native`) with the gateway's caches
 * and its routing, through real API and worker processes, loopback upstreams
 * and the official `openai` client. Caches: a `store: false` request is
 * replayed (exact and semantic), whole and streamed, as a new response with
 * fresh ids, and never reaches the upstream again; a stored one
 * (`store: true`) bypasses the caches; `Cache-Control`, `X-Semantic-Cache`
 * and a key's semantic switch still apply. Fallbacks: a native deployment
 * that answers 500, hangs or is down hands the request to the next one,
 * natively when that one is native too (its ids then read back from it),
 * translated through the canonical request otherwise (an Anthropic-format
 * upstream), whole and streamed, a stored translated answer continued with
 * `previous_response_id`.
 */

const KEY = 'gw_e2e_native_routing_key_0123456789';
const ADMIN = 'gw_e2e_native_routing_admin_0123';
const prefix = uniquePrefix('responses-native-routing');
const redis = testRedis();
const up = {} as Record<'cache' | 'flaky' | 'steady' | 'claude', FakeUpstream>;
let gateway: Gateway;
let worker: GatewayProcess;
let client: OpenAI;
let closedPort: number;

/** A loopback port nothing listens on: connections to it are refused. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  const formats = { cache: 'openai', flaky: 'openai', steady: 'openai', claude: 'anthropic' } as const;
  await Promise.all(
    Object.entries(formats).map(async ([name, format]) => {
      up[name as keyof typeof up] = await startFakeUpstream({ format, apiKey: `upstream-${name}-secret` });
    }),
  );
  closedPort = await freePort();
  const env = {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: KEY,
    ADMIN_API_KEYS: ADMIN,
    KEY_DB_PATH: join(mkdtempSync(join(tmpdir(), 'gw-native-routing-')), 'keys.sqlite'),
    RATE_LIMIT_REQUESTS: '100000',
    SEMANTIC_CACHE_ENABLED: 'true',
    SEMANTIC_CACHE_THRESHOLD: '0.9',
    EMBEDDING_BACKEND: 'endpoint',
    EMBEDDING_PROVIDER: 'cache',
    EMBEDDING_MODEL: 'text-embedding-fake',
    ...Object.fromEntries(
      Object.keys(formats).map((name) => [`UP_${name.toUpperCase()}_KEY`, `upstream-${name}-secret`]),
    ),
  };
  const fast = { timeout_ms: 1500, stream_idle_timeout_ms: 1500, queue_timeout_ms: 5000, max_retries: 0 };
  const provider = (name: string, upstream: keyof typeof up, models: string[], extra: object = {}) => ({
    name,
    api_key_env: `UP_${upstream.toUpperCase()}_KEY`,
    format: up[upstream].format,
    base_url: up[upstream].url,
    models,
    ...fast,
    ...extra,
  });
  const native = { responses_api: 'native' };
  gateway = await startGateway({
    env,
    config: {
      providers: [
        provider('cache', 'cache', ['n-cache'], { ...native, upstream_models: { 'n-cache': 'o4-mini' } }),
        provider('first', 'flaky', ['n-first'], native),
        provider('second', 'steady', ['n-second'], { ...native, upstream_models: { 'n-second': 'o3' } }),
        { ...provider('down', 'flaky', ['n-down'], native), base_url: `http://127.0.0.1:${closedPort}/v1` },
        provider('anth', 'claude', ['c-sonnet']),
      ],
      routing: {
        fallbacks: { 'n-first': ['n-second'], 'n-down': ['c-sonnet'] },
        // Failures here are the test's own: none puts a deployment out, so each attempt reaches its upstream.
        cooldown: { seconds: 1, failures: 1000, window_seconds: 30 },
      },
    },
    providers: [],
  });
  // One worker process for every provider entry (fewer processes on a busy machine).
  worker = spawnGatewayProcess('workers/provider-worker.ts', ['cache', 'first', 'second', 'down', 'anth'], {
    ...env,
    CONFIG_PATH: gateway.configPath,
  });
  await waitFor(() => worker.output().includes('worker started'), 60_000, `the worker to start:\n${worker.output()}`);
  await waitFor(
    async () => (await admin('GET', '/admin/cache/stats')).semantic_cache?.status === 'ready',
    20_000,
    'the semantic cache to be ready',
  );
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 90_000);

afterAll(async () => {
  await worker?.kill();
  await gateway?.stop();
  await Promise.all(Object.values(up).map((u) => u.close()));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

async function admin(method: string, path: string, body?: unknown): Promise<Untyped> {
  const res = await fetch(`${gateway.baseUrl}${path}`, {
    method,
    headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

/** Upstream `/responses` calls of `upstream` that carried `text`. */
function calls(upstream: FakeUpstream, text: string): number {
  return upstream.requests.filter((r) => r.path === '/v1/responses' && JSON.stringify(r.body).includes(text)).length;
}

interface Sse {
  headers: Headers;
  events: Array<{ type: string; sequence_number: number; response?: Untyped; delta?: string }>;
}

/** A raw streamed request: its headers and events. */
async function streamed(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Sse> {
  const res = await fetch(`${gateway.baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  const events = (await res.text())
    .split('\n\n')
    .filter((frame) => frame.includes('data: '))
    .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)) as Sse['events'][number]);
  return { headers: res.headers, events };
}

function itemIds(response: { output: Array<{ id?: string }> }): string[] {
  return response.output.map((item) => item.id ?? '');
}

describe('native Responses and the caches', () => {
  it('replays a store:false reply as a new response (fresh ids), never reaching the upstream again', async () => {
    const body = {
      model: 'n-cache',
      input: 'why is the sky blue today',
      store: false,
      include: ['reasoning.encrypted_content' as const],
      reasoning: { effort: 'high' as const, summary: 'auto' as const },
    };
    const miss = await client.responses.create(body).withResponse();
    expect(miss.response.headers.get('x-cache')).toBe('MISS');
    const hit = await client.responses.create(body).withResponse();
    expect(hit.response.headers.get('x-cache')).toBe('HIT');
    expect(calls(up.cache, 'why is the sky blue today')).toBe(1);
    expect(hit.data.output_text).toBe('Echo: why is the sky blue today');
    expect(hit.data.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(hit.data.id).not.toBe(miss.data.id);
    expect(itemIds(hit.data).every((id, i) => id !== itemIds(miss.data)[i])).toBe(true);
    const reasoning = hit.data.output.find((item) => item.type === 'reasoning');
    expect(reasoning?.encrypted_content).toMatch(/^gAAAAfake/);
    expect(hit.data.model).toBe('n-cache');
    // The same request streamed is the same entry, replayed as the upstream's event grammar.
    const replay = await streamed(body);
    expect(replay.headers.get('x-cache')).toBe('HIT');
    const { events } = replay;
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]!.type).toBe('response.created');
    expect(events.at(-1)!.type).toBe('response.completed');
    expect(events.some((e) => e.type === 'response.reasoning_summary_text.delta')).toBe(true);
    const final = events.at(-1)!.response;
    expect(final.id).not.toBe(hit.data.id);
    expect(events[0]!.response.id).toBe(final.id);
    expect(calls(up.cache, 'why is the sky blue today')).toBe(1);
  });

  it('stores a streamed reply and replays it through the openai client, numbered without a gap', async () => {
    const body = { model: 'n-cache', input: 'stream me a cached answer', store: false };
    const first = await streamed(body);
    expect(first.headers.get('x-cache')).toBe('MISS');
    const stream = client.responses.stream(body);
    const sequence: number[] = [];
    for await (const event of stream) sequence.push(event.sequence_number);
    const final = await stream.finalResponse();
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(final.output_text).toBe('Echo: stream me a cached answer');
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(calls(up.cache, 'stream me a cached answer')).toBe(1);
    const whole = await client.responses.create(body).withResponse();
    expect(whole.response.headers.get('x-cache')).toBe('HIT');
    expect(whole.data.output_text).toBe('Echo: stream me a cached answer');
  });

  it('never replays a stored response (store: true), whose id is the upstream state the client continues', async () => {
    const body = { model: 'n-cache', input: 'keep this one upstream' };
    const first = await client.responses.create(body).withResponse();
    const second = await client.responses.create(body).withResponse();
    expect(first.response.headers.get('x-cache')).toBe('BYPASS');
    expect(second.response.headers.get('x-cache')).toBe('BYPASS');
    expect(calls(up.cache, 'keep this one upstream')).toBe(2);
    expect(second.data.id).toMatch(/^resp_fake\d+$/);
    // The upstream's id, read back from the upstream.
    const retrieved = await client.responses.retrieve(second.data.id);
    expect(retrieved.output_text).toBe('Echo: keep this one upstream');
  });

  it('keys every field: another include, tool or instruction is another entry; Cache-Control: no-cache asks the upstream', async () => {
    const body = { model: 'n-cache', input: 'keyed on the whole body', store: false };
    await client.responses.create(body);
    const variants = [
      { ...body, instructions: 'Be brief.' },
      { ...body, include: ['reasoning.encrypted_content' as const] },
      { ...body, tools: [{ type: 'web_search' as const }] },
    ];
    for (const variant of variants) {
      const reply = await client.responses.create(variant).withResponse();
      expect(reply.response.headers.get('x-cache')).toBe('MISS');
    }
    const fresh = await client.responses.create(body, { headers: { 'cache-control': 'no-cache' } }).withResponse();
    expect(fresh.response.headers.get('x-cache')).toBe('MISS');
    expect(calls(up.cache, 'keyed on the whole body')).toBe(5);
  });

  it("answers a paraphrase from the semantic cache, unless X-Semantic-Cache: off or the key's switch says no", async () => {
    const ask = (input: string, options: { key?: string; headers?: Record<string, string> } = {}) =>
      new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: options.key ?? KEY, maxRetries: 0 }).responses
        .create({ model: 'n-cache', input, store: false }, { headers: options.headers ?? {} })
        .withResponse();
    const seeded = await ask('What is the capital of France?');
    expect(seeded.response.headers.get('x-cache')).toBe('MISS');
    const hit = await ask('The capital of France is what?');
    expect(hit.response.headers.get('x-cache')).toBe('SEMANTIC_HIT');
    expect(hit.data.output_text).toBe('Echo: What is the capital of France?');
    expect(hit.data.id).not.toBe(seeded.data.id);
    expect(calls(up.cache, 'The capital of France is what?')).toBe(0);
    const off = await ask('France: its capital is what?', { headers: { 'x-semantic-cache': 'off' } });
    expect(off.response.headers.get('x-cache')).toBe('MISS');
    expect(calls(up.cache, 'France: its capital is what?')).toBe(1);
    // Keys of one owner share entries; this one has the semantic cache off.
    const { key } = await admin('POST', '/admin/keys', { owner: 'no-semantic-owner', semantic_cache: false });
    const { key: sibling } = await admin('POST', '/admin/keys', { owner: 'no-semantic-owner' });
    await ask('Which city is the capital of Spain?', { key: sibling });
    const refused = await ask('The capital of Spain is which city?', { key });
    expect(refused.response.headers.get('x-cache')).toBe('MISS');
    expect(calls(up.cache, 'The capital of Spain is which city?')).toBe(1);
  });

  it("keeps owners apart: another owner's identical request reaches the upstream", async () => {
    const body = { model: 'n-cache', input: 'one owner only', store: false };
    await client.responses.create(body);
    const { key } = await admin('POST', '/admin/keys', { owner: 'other-owner' });
    const other = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const reply = await other.responses.create(body).withResponse();
    expect(reply.response.headers.get('x-cache')).toBe('MISS');
    expect(calls(up.cache, 'one owner only')).toBe(2);
  });
});

describe('native Responses and fallbacks', () => {
  it('goes to the next native deployment when the first answers 500, which then keeps the response', async () => {
    up.flaky.setBehavior({ failNext: { count: 1, status: 500 } });
    const body = {
      model: 'n-first',
      input: 'fall over natively',
      include: ['reasoning.encrypted_content' as const],
      reasoning: { effort: 'low' as const, summary: 'auto' as const },
      tools: [{ type: 'web_search' as const }],
    };
    const reply = await client.responses.create(body).withResponse();
    expect(reply.response.headers.get('x-gateway-model')).toBe('n-second');
    expect(calls(up.flaky, 'fall over natively')).toBe(1);
    const sent = up.steady.requests.at(-1)!;
    expect(sent.path).toBe('/v1/responses');
    // The body as the client sent it, hosted tool and include included, under the fallback's upstream model.
    expect(sent.body).toEqual({ ...body, model: 'o3' });
    expect(reply.data.id).toMatch(/^resp_fake\d+$/);
    expect(reply.data.output_text).toBe('Echo: fall over natively');
    // Recorded as the answering provider's: read back from the second upstream.
    await waitFor(
      async () =>
        (
          await fetch(`${gateway.baseUrl}/v1/responses/${reply.data.id}`, {
            headers: { authorization: `Bearer ${KEY}` },
          })
        ).status === 200,
      5_000,
      'the response id to be recorded',
    );
    const retrieved = await client.responses.retrieve(reply.data.id);
    expect(retrieved.output_text).toBe('Echo: fall over natively');
    expect(up.steady.requests.at(-1)!.path).toBe(`/v1/responses/${reply.data.id}`);
  });

  it('goes to the next native deployment when the first does not answer before its deadline, streamed', async () => {
    up.flaky.setBehavior({ hang: true });
    try {
      const { headers, events } = await streamed({ model: 'n-first', input: 'the first one hangs', store: false });
      expect(headers.get('x-gateway-model')).toBe('n-second');
      expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
      expect(events.at(-1)!.type).toBe('response.completed');
      expect(events.at(-1)!.response.output.at(-1).content[0].text).toBe('Echo: the first one hangs');
      expect(calls(up.steady, 'the first one hangs')).toBe(1);
    } finally {
      up.flaky.setBehavior({ hang: undefined });
    }
  });

  it('translates for a fallback that does not take the Responses API (its upstream down), whole and streamed', async () => {
    const before = up.claude.requests.length;
    const reply = await client.responses
      .create({ model: 'n-down', instructions: 'Be brief.', input: 'translate me', max_output_tokens: 300 })
      .withResponse();
    expect(reply.response.headers.get('x-gateway-model')).toBe('c-sonnet');
    expect(reply.data.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(reply.data.output_text).toBe('Echo: translate me');
    const sent = up.claude.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/v1/messages');
    expect(sent[0]!.body).toMatchObject({ system: 'Be brief.', max_tokens: 300 });

    const stream = client.responses.stream({ model: 'n-down', input: 'translate my stream', store: false });
    const sequence: number[] = [];
    for await (const event of stream) sequence.push(event.sequence_number);
    const final = await stream.finalResponse();
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(final.output_text).toBe('Echo: translate my stream');

    // Stored by the gateway: read back, and continued (translated: no upstream knows the id).
    await waitFor(
      async () =>
        (
          await fetch(`${gateway.baseUrl}/v1/responses/${reply.data.id}`, {
            headers: { authorization: `Bearer ${KEY}` },
          })
        ).status === 200,
      5_000,
      'the response to be stored',
    );
    const next = await client.responses.create({
      model: 'n-down',
      previous_response_id: reply.data.id,
      input: 'and then',
    });
    expect(next.output_text).toBe('Echo: and then');
    const messages = (up.claude.requests.at(-1)!.body as Untyped).messages as Untyped[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it("keeps what cannot be translated on native deployments: a hosted tool gets the native failure, not a fallback's 400", async () => {
    const before = up.claude.requests.length;
    const err = await client.responses
      .create({ model: 'n-down', input: 'search the web', tools: [{ type: 'web_search' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as { status: number }).status).toBeGreaterThanOrEqual(500);
    expect(up.claude.requests.length).toBe(before);
  });
});
