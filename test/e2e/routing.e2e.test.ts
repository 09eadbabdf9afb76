import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { spawnGatewayProcess, startGateway, waitFor, type Gateway, type GatewayProcess } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * Routing through real API and worker processes: one model on two
 * OpenAI-format deployments (two loopback upstreams, two keys), one of which
 * fails (429 with Retry-After, 500s, a slow answer and a hang) and is taken
 * out for every API process, then comes back; a model whose OpenAI-format
 * upstream is down falling back to a model on an Anthropic-format upstream,
 * seen by the official `openai` client as one clean answer; a model without
 * a live worker falling back; client-named fallbacks.
 */

const KEY = 'gw_routing_key_0123456789abcdef';
const prefix = uniquePrefix('routing');
const redis = testRedis();
const up: Record<'one' | 'two' | 'claude' | 'primary' | 'plain', FakeUpstream> = {} as never;
let gateway: Gateway;
let replica: ApiReplica;
let worker: GatewayProcess;
let client: OpenAI;

beforeAll(async () => {
  const formats = { one: 'openai', two: 'openai', claude: 'anthropic', primary: 'openai', plain: 'openai' } as const;
  await Promise.all(
    Object.entries(formats).map(async ([name, format]) => {
      up[name as keyof typeof up] = await startFakeUpstream({ format, apiKey: `upstream-${name}-secret` });
    }),
  );
  const env = {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: KEY,
    DLP_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    RATE_LIMIT_REQUESTS: '100000',
    ...Object.fromEntries(
      Object.keys(formats).map((name) => [`UP_${name.toUpperCase()}_KEY`, `upstream-${name}-secret`]),
    ),
  };
  const fast = { timeout_ms: 800, stream_idle_timeout_ms: 1000, queue_timeout_ms: 5000, max_retries: 0 };
  const provider = (name: string, upstream: keyof typeof up, models: string[], extra: object = {}) => ({
    name,
    api_key_env: `UP_${upstream.toUpperCase()}_KEY`,
    format: up[upstream].format,
    base_url: up[upstream].url,
    models,
    ...fast,
    ...extra,
  });
  gateway = await startGateway({
    env,
    config: {
      providers: [
        provider('dep_one', 'one', ['m-route']),
        provider('dep_two', 'two', ['m-route'], { upstream_models: { 'm-route': 'gpt-two' } }),
        provider('anth', 'claude', ['m-claude']),
        provider('primary', 'primary', ['m-primary']),
        provider('plain', 'plain', ['m-plain']),
        provider('dead', 'plain', ['m-dead']),
      ],
      routing: {
        fallbacks: { 'm-primary': ['m-claude'], 'm-dead': ['m-claude'] },
        cooldown: { seconds: 2, failures: 2, window_seconds: 30 },
      },
    },
    providers: [],
  });
  // One worker process for every provider entry but `dead` (fewer processes to start on a busy machine).
  worker = spawnGatewayProcess('workers/provider-worker.ts', ['dep_one', 'dep_two', 'anth', 'primary', 'plain'], {
    ...env,
    CONFIG_PATH: gateway.configPath,
    LOG_LEVEL: 'info',
  });
  await waitFor(() => worker.output().includes('worker started'), 60_000, `the worker to start:\n${worker.output()}`);
  replica = await startApiReplica(env, gateway.configPath);
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
}, 90_000);

afterAll(async () => {
  await worker?.kill();
  await replica?.stop();
  await gateway?.stop();
  await Promise.all(Object.values(up).map((u) => u.close()));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

interface Reply {
  status: number;
  body: Untyped;
  headers: Headers;
}

async function chat(
  model: string,
  options: { baseUrl?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const res = await fetch(`${options.baseUrl ?? gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...options.headers },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: `hello ${Math.random().toString(36).slice(2, 8)}` }],
    }),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

async function health(baseUrl = gateway.baseUrl): Promise<Untyped> {
  return (await fetch(`${baseUrl}/health`, { headers: { 'x-api-key': KEY } })).json();
}

/** Sends requests for m-route until dep_one's upstream has used up its faults; every one is answered. */
async function untilFaultsUsed(done: () => boolean): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (let i = 0; i < 60 && !done(); i++) {
    const reply = await chat('m-route');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    replies.push(reply);
  }
  expect(done()).toBe(true);
  return replies;
}

/** dep_one is out: no request of either API process reaches its upstream, and /health says so. */
async function expectOut(): Promise<void> {
  const seen = up.one.requests.length;
  for (let i = 0; i < 6; i++) {
    const reply = await chat('m-route', { baseUrl: i % 2 === 0 ? gateway.baseUrl : replica.baseUrl });
    expect(reply.status).toBe(200);
    expect(reply.body.model).toBe('m-route');
  }
  expect(up.one.requests.length).toBe(seen);
  for (const baseUrl of [gateway.baseUrl, replica.baseUrl]) {
    const detail = (await health(baseUrl)).details.providers.dep_one;
    expect(detail.status).toBe('degraded');
    expect(detail.cooldown_seconds).toBeGreaterThan(0);
  }
}

/** Waits until dep_one's cooldown is over, then until traffic reaches it again; returns when the cooldown was seen over. */
async function expectBack(): Promise<number> {
  await waitFor(
    async () => (await health()).details.providers.dep_one.cooldown_seconds === undefined,
    10_000,
    'dep_one back in service',
  );
  const backAt = Date.now();
  const seen = up.one.requests.length;
  for (let i = 0; i < 40 && up.one.requests.length === seen; i++) expect((await chat('m-route')).status).toBe(200);
  expect(up.one.requests.length).toBeGreaterThan(seen);
  return backAt;
}

describe('several deployments of one model', () => {
  it('spreads a model over both deployments, each with its own key and upstream model id', async () => {
    for (let i = 0; i < 16; i++) expect((await chat('m-route')).status).toBe(200);
    expect(up.one.requests.length).toBeGreaterThan(0);
    expect(up.two.requests.length).toBeGreaterThan(0);
    expect(
      up.one.requests.every(
        (r) => r.headers.authorization === 'Bearer upstream-one-secret' && (r.body as Untyped).model === 'm-route',
      ),
    ).toBe(true);
    expect(
      up.two.requests.every(
        (r) => r.headers.authorization === 'Bearer upstream-two-secret' && (r.body as Untyped).model === 'gpt-two',
      ),
    ).toBe(true);
    const models = (await (await fetch(`${gateway.baseUrl}/v1/models`, { headers: { 'x-api-key': KEY } })).json()) as {
      data: { id: string }[];
    };
    expect(models.data.filter((m) => m.id === 'm-route')).toHaveLength(1);
  });

  it('a 429 with Retry-After takes the deployment out for every API process at once, for as long as the upstream asked', async () => {
    up.one.setBehavior({ failNext: { count: 1, status: 429, retryAfter: 3 } });
    const replies = await untilFaultsUsed(() => up.one.behavior.failNext === undefined);
    const outAt = Date.now();
    const failedOver = replies.at(-1) as Reply;
    expect(failedOver.headers.get('server-timing')).toMatch(
      /attempt-1;desc="m-route dep_one provider_error";dur=[\d.]+, attempt-2;desc="m-route dep_two ok"/,
    );
    expect(failedOver.headers.get('x-gateway-model')).toBe('m-route');
    await expectOut();
    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } })).text();
    expect(
      Number(/gateway_deployment_cooldown_seconds\{provider="dep_one"\} ([\d.]+)/.exec(metrics)?.[1]),
    ).toBeGreaterThan(0);
    expect(metrics).toMatch(/gateway_deployment_cooldown_seconds\{provider="dep_two"\} 0/);
    // The dashboard charts that gauge.
    expect(await (await fetch(`${gateway.baseUrl}/dashboard`, { headers: { 'x-api-key': KEY } })).text()).toContain(
      'chart-cooldowns',
    );
    // Retry-After (3 s) is longer than the configured cooldown (2 s): it wins.
    expect((await expectBack()) - outAt).toBeGreaterThan(2_500);
  }, 60_000);

  it('repeated 500s take it out once they reach the configured count, and it comes back after the cooldown', async () => {
    up.one.setBehavior({ failNext: { count: 2, status: 500 } });
    await untilFaultsUsed(() => up.one.behavior.failNext === undefined);
    await expectOut();
    await expectBack();
  }, 60_000);

  it('a slow answer and a hang count as time-outs: the requests still answer from the other deployment', async () => {
    const before = up.one.requests.length;
    up.one.setBehavior({ latencyMs: 3_000 });
    await untilFaultsUsed(() => up.one.requests.length > before);
    up.one.setBehavior({ latencyMs: undefined, hang: true });
    await untilFaultsUsed(() => up.one.requests.length > before + 1);
    await expectOut();
    up.one.setBehavior({ hang: undefined });
    await expectBack();
  }, 60_000);
});

describe('fallback models', () => {
  it('falls back from an OpenAI-format upstream to an Anthropic-format one: the openai client sees one clean answer, sync and streamed', async () => {
    up.primary.setBehavior({ failNext: { count: 2, status: 500 } });
    const { data, response } = await client.chat.completions
      .create({ model: 'm-primary', messages: [{ role: 'user', content: 'fallback please' }] })
      .withResponse();
    expect(data.model).toBe('m-claude');
    expect(data.choices[0]?.message.content).toBe('Echo: fallback please');
    expect(response.headers.get('x-gateway-model')).toBe('m-claude');
    expect(response.headers.get('server-timing')).toMatch(
      /attempt-1;desc="m-primary primary provider_error".*attempt-2;desc="m-claude anth ok"/,
    );

    const stream = await client.chat.completions.create({
      model: 'm-primary',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream fallback' }],
    });
    let text = '';
    const models = new Set<string>();
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      models.add(chunk.model);
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Echo: stream fallback');
    expect([...models]).toEqual(['m-claude']);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(up.claude.requests.map((r) => (r.body as Untyped).model)).toEqual(['m-claude', 'm-claude']);

    // Two 500s put `primary` out: the next request goes straight to the fallback.
    const calls = up.primary.requests.length;
    const direct = await chat('m-primary');
    expect(direct.body.model).toBe('m-claude');
    expect(direct.headers.get('server-timing')).toMatch(/^attempt-1;desc="m-claude anth ok"/);
    expect(up.primary.requests.length).toBe(calls);

    const metrics = await (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } })).text();
    expect(metrics).toMatch(/gateway_fallbacks_total\{model="m-primary",answered_by="m-claude"\} 3/);
    expect(metrics).toMatch(/gateway_tokens_used_total\{provider="anth",model="m-claude",type="completion"\} [1-9]/);
    expect(metrics).not.toMatch(/gateway_tokens_used_total\{provider="primary"/);
  }, 30_000);

  it('never falls back once tokens were sent: a stream cut mid-way ends in an error, the fallback is not called', async () => {
    await waitFor(
      async () => (await health()).details.providers.primary.cooldown_seconds === undefined,
      10_000,
      'primary back in service',
    );
    up.primary.setBehavior({ cutStreamAfterChunks: 2 });
    const calls = up.claude.requests.length;
    const stream = await client.chat.completions.create({
      model: 'm-primary',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four five' }],
    });
    const received: string[] = [];
    const err = await (async () => {
      for await (const chunk of stream) received.push(chunk.model);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(received.length).toBeGreaterThan(0);
    expect(new Set(received)).toEqual(new Set(['m-primary']));
    expect(up.claude.requests.length).toBe(calls);
    up.primary.reset();
  }, 30_000);

  it('falls back when the model has no live worker', async () => {
    const reply = await chat('m-dead');
    expect(reply.status).toBe(200);
    expect(reply.body.model).toBe('m-claude');
    expect(reply.headers.get('server-timing')).toMatch(
      /attempt-1;desc="m-dead dead service_unavailable".*attempt-2;desc="m-claude anth ok"/,
    );
  });

  it('takes fallbacks named by the client, among configured models only; `none` turns them off', async () => {
    up.plain.setBehavior({ failNext: { count: 1, status: 500 } });
    const named = await chat('m-plain', { headers: { 'x-gateway-fallbacks': 'm-claude' } });
    expect(named.status).toBe(200);
    expect(named.body.model).toBe('m-claude');
    for (const value of ['http://127.0.0.1:1/v1', 'm-claude, no-such-model', ' , ']) {
      const refused = await chat('m-plain', { headers: { 'x-gateway-fallbacks': value } });
      expect(refused.status, value).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
      expect(refused.body.error.message).toMatch(/x-gateway-fallbacks/);
    }
    const none = await chat('m-dead', { headers: { 'x-gateway-fallbacks': 'none' } });
    expect(none.status).toBe(503);
    expect(none.body.error.code).toBe('service_unavailable');
    // A model that is not routed answers as before, naming itself.
    const plain = await chat('m-plain');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('x-gateway-model')).toBe('m-plain');
    expect(plain.headers.get('server-timing')).not.toMatch(/attempt-/);
  });
});
