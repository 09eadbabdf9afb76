import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Upstream calls nobody waits for any more. An API process SIGKILLed while
 * its replies stream leaves no reader on those reply streams: the workers
 * must cancel the upstream calls within seconds, never a call another API
 * process still reads (coalesced requests), and a new identical request must
 * not wait on the dead one. A worker SIGKILLed mid-job makes the job's
 * upstream call twice (at-least-once delivery), with one reply to the client.
 */

const KEY = 'gw_orphan_key_0123456789abcd';
const prefix = uniquePrefix('orphans');
const redis = testRedis();
/** Words per prompt: at CHUNK_DELAY_MS per word, each reply streams for about 25 s. */
const WORDS = 100;
const CHUNK_DELAY_MS = 250;
/** "Within a few seconds": the reader's liveness lapses (5 s) and two worker checks a second apart miss it. */
const CANCEL_WITHIN_MS = 10_000;

let gateway: Gateway;
let upstream: FakeUpstream;
let env: Record<string, string>;
const replicas: ApiReplica[] = [];

function prompt(label: string): string {
  return `${label} ${Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ')}`;
}

/** A chat request whose reply is read in the background; resolves once its first bytes arrived. */
async function startStream(baseUrl: string, content: string): Promise<{ text: Promise<string> }> {
  const res = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ model: 'a-4o', stream: true, messages: [{ role: 'user', content }] }),
  });
  expect(res.status).toBe(200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = decoder.decode((await reader.read()).value ?? new Uint8Array(), { stream: true });
  const rest = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      return text; // the API process was killed under it
    }
  })();
  return { text: rest };
}

/** The text a client assembled from an SSE reply. */
function contentOf(sse: string): string {
  let out = '';
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    out +=
      (JSON.parse(line.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content ??
      '';
  }
  return out;
}

async function killedReplica(): Promise<ApiReplica> {
  const replica = await startApiReplica(env, gateway.configPath);
  replicas.push(replica);
  return replica;
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up' });
  env = {
    REDIS_KEY_PREFIX: prefix,
    API_KEYS: KEY,
    PROVIDER_A_API_KEY: 'up',
    DLP_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'false',
    RATE_LIMIT_REQUESTS: '1000000',
    WORKER_LOCK_DURATION_MS: '1500',
    WORKER_STALLED_INTERVAL_MS: '500',
  };
  gateway = await startGateway({
    env,
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          timeout_ms: 30_000,
          stream_idle_timeout_ms: 10_000,
          queue_timeout_ms: 10_000,
        },
      ],
    },
    providers: ['provider_a'],
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.process.kill('SIGKILL')));
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('an API process killed mid-stream', () => {
  it('gets every one of its in-flight upstream calls cancelled within a few seconds', async () => {
    upstream.reset();
    upstream.setBehavior({ chunkDelayMs: CHUNK_DELAY_MS });
    const api = await killedReplica();
    const streams = await Promise.all(
      Array.from({ length: 10 }, (_, i) => startStream(api.baseUrl, prompt(`orphan ${i}`))),
    );
    expect(upstream.requests).toHaveLength(10);
    const killedAt = Date.now();
    await api.process.kill('SIGKILL');
    await waitFor(
      () => upstream.closedEarly === 10,
      CANCEL_WITHIN_MS,
      `10 upstream calls closed early (now ${upstream.closedEarly})`,
    );
    console.log(`10 orphaned upstream calls cancelled ${Date.now() - killedAt} ms after the API was killed`);
    await Promise.all(streams.map((s) => s.text));
  });

  it('never cancels a call that an identical request on another API process still reads (coalesced)', async () => {
    upstream.reset();
    // Streams for about 12 s: longer than an unread call takes to be cancelled.
    upstream.setBehavior({ chunkDelayMs: 120 });
    const api = await killedReplica();
    const content = prompt('shared');
    const leader = await startStream(api.baseUrl, content);
    const follower = await startStream(gateway.baseUrl, content);
    expect(upstream.requests, 'the second request follows the first one instead of calling again').toHaveLength(1);
    await api.process.kill('SIGKILL');
    await leader.text;
    const reply = await follower.text;
    expect(reply).toContain('data: [DONE]');
    expect(contentOf(reply)).toBe(`Echo: ${content}`);
    expect(upstream.closedEarly).toBe(0);
    expect(upstream.requests).toHaveLength(1);
  });

  it('an identical request arriving after its call was cancelled gets a reply of its own, not the dead one', async () => {
    upstream.reset();
    upstream.setBehavior({ chunkDelayMs: CHUNK_DELAY_MS });
    const api = await killedReplica();
    const content = prompt('again');
    await startStream(api.baseUrl, content);
    await api.process.kill('SIGKILL');
    await waitFor(() => upstream.closedEarly === 1, CANCEL_WITHIN_MS, 'the orphaned call to be cancelled');
    upstream.setBehavior({ chunkDelayMs: 0 });
    const t0 = Date.now();
    const reply = await (await startStream(gateway.baseUrl, content)).text;
    expect(contentOf(reply)).toBe(`Echo: ${content}`);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(upstream.requests).toHaveLength(2);
  });
});

describe('a worker killed mid-job', () => {
  it('makes the upstream call twice (at-least-once), and the client gets one reply', async () => {
    upstream.reset();
    upstream.setBehavior({ latencyMs: 2_000 });
    const content = `twice ${Math.random()}`;
    const reply = fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content }] }),
    });
    await waitFor(() => upstream.requests.length === 1, 10_000, 'the first upstream call');
    const [victim] = gateway.workers.get('provider_a') ?? [];
    await victim?.kill('SIGKILL');
    await gateway.addWorker('provider_a');
    const res = await reply;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe(
      `Echo: ${content}`,
    );
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[1]?.body).toEqual(upstream.requests[0]?.body);
    // None of the three upstream APIs documents an idempotency key for these calls, so none is sent.
    expect(upstream.requests[1]?.headers['idempotency-key']).toBeUndefined();
  });
});
