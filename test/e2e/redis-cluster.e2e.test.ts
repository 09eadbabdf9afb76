import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadSettings } from '../../src/config/settings.ts';
import { createRedis } from '../../src/redis/connections.ts';
import { keySlot } from '../../src/redis/key-slot.ts';
import { scanDelete } from '../../src/cache/scan-delete.ts';
import { ReaderWatch } from '../../src/execution/reader-watch.ts';
import { jobReadersKey, readerLivenessKey } from '../../src/streams/reader-liveness.ts';
import { startApiReplica, type ApiReplica } from '../support/api-replica.ts';
import { submitJob, waitForJobStatus } from '../support/async-jobs.ts';
import { startUpstreamTrio, type FakeUpstream, type ProviderLetter } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster.ts';
import { keysUnder } from '../support/redis.ts';

/**
 * The gateway on a real Redis Cluster of three masters on loopback
 * (REDIS_CLUSTER_NODES): an API process, a replica and one worker per
 * provider, with the official client, sync and streamed; rate limits, the
 * exact and semantic caches, a configuration reload and the workers'
 * heartbeats, all through the cluster; and the keys spread over the shards.
 */

const KEY = 'gw_e2e_cluster_key_0123456789abc';
const LIMITED = 'gw_e2e_cluster_limited_key_012345';
const ADMIN = 'gw_e2e_cluster_admin_key_0123456';
const PREFIX = 'gwcl';
let cluster: RedisCluster;
let upstreams: Record<ProviderLetter, FakeUpstream>;
let gateway: Gateway;
let replica: ApiReplica;
let check: Cluster;
let masters: Redis[];
let env: Record<string, string>;

const providers = (extraModel?: string) => ({
  providers: [
    {
      name: 'provider_a',
      api_key_env: 'PROVIDER_A_API_KEY',
      base_url: upstreams.a.url,
      models: ['a-4o', ...(extraModel ? [extraModel] : [])],
      max_retries: 0,
    },
    {
      name: 'provider_b',
      api_key_env: 'PROVIDER_B_API_KEY',
      base_url: upstreams.b.url,
      models: ['b-flash'],
      max_retries: 0,
    },
  ],
});

const client = (baseUrl: string, apiKey = KEY) =>
  new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0, timeout: 20_000 });

/** Every key under the test's prefix, per master. */
function keysPerMaster(): Promise<string[][]> {
  return Promise.all(masters.map((master) => keysUnder(master, PREFIX)));
}

beforeAll(async () => {
  cluster = await startRedisCluster(3);
  check = cluster.client();
  masters = cluster.masters();
  const trio = await startUpstreamTrio();
  upstreams = trio.upstreams;
  env = {
    ...trio.env,
    REDIS_CLUSTER_NODES: cluster.nodes,
    REDIS_KEY_PREFIX: PREFIX,
    API_KEYS: `${KEY},${LIMITED}`,
    ADMIN_API_KEYS: ADMIN,
    RATE_LIMIT_REQUESTS: '100000',
    DLP_ENABLED: 'false',
    SEMANTIC_CACHE_ENABLED: 'true',
    SEMANTIC_CACHE_THRESHOLD: '0.9',
    EMBEDDING_BACKEND: 'endpoint',
    EMBEDDING_PROVIDER: 'provider_a',
    EMBEDDING_MODEL: 'text-embedding-fake',
  };
  gateway = await startGateway({ env, config: providers(), providers: ['provider_a', 'provider_b'] });
  replica = await startApiReplica(env, gateway.configPath);
  await waitFor(
    async () => {
      const res = await fetch(`${gateway.baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN } });
      return ((await res.json()) as { semantic_cache?: { status?: string } }).semantic_cache?.status === 'ready';
    },
    15_000,
    'the semantic cache to be ready',
  );
}, 90_000);

afterAll(async () => {
  await Promise.all([gateway?.stop(), replica?.stop()]);
  await Promise.all(Object.values(upstreams ?? {}).map((u) => u.close()));
  check?.disconnect();
  for (const m of masters ?? []) m.disconnect();
  await cluster?.stop();
});

describe('the gateway on a 3-master Redis Cluster', () => {
  it('answers sync and streamed chat completions through the queues, and repeats from the exact cache', async () => {
    const openai = client(gateway.baseUrl);
    const first = await openai.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'cluster sync' }] })
      .withResponse();
    expect(first.data.choices[0]?.message.content).toBe('Echo: cluster sync');
    expect(first.response.headers.get('x-cache')).toBe('MISS');
    const again = await client(replica.baseUrl)
      .chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content: 'cluster sync' }] })
      .withResponse();
    expect(again.response.headers.get('x-cache')).toBe('HIT');
    // The same reply; its usage says the gateway's cache served it.
    expect(again.data).toEqual({
      ...first.data,
      usage: { ...first.data.usage, gateway_cache: { hit: true, type: 'exact' } },
    });

    const stream = await openai.chat.completions.create({
      model: 'b-flash',
      stream: true,
      messages: [{ role: 'user', content: 'cluster stream over gemini' }],
    });
    const parts: string[] = [];
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      parts.push(chunk.choices[0]?.delta.content ?? '');
    }
    expect(parts.join('')).toBe('Echo: cluster stream over gemini');
    expect(chunks).toBeGreaterThan(1);
  });

  it('queues background work (an asynchronous job) through the two-set queue-place script in the provider slot', async () => {
    const created = await submitJob(gateway.baseUrl, KEY, 'a-4o', 'cluster background job');
    expect(created.status).toBe(202);
    await waitForJobStatus(gateway.baseUrl, KEY, created.body.id ?? '', 'completed');
  });

  it('serves concurrent requests of one API process with one blocking reader on one master', async () => {
    const openai = client(gateway.baseUrl);
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        openai.chat.completions.create({
          model: i % 2 ? 'a-4o' : 'b-flash',
          messages: [{ role: 'user', content: `concurrent ${i}` }],
        }),
      ),
    );
    replies.forEach((reply, i) => expect(reply.choices[0]?.message.content).toBe(`Echo: concurrent ${i}`));
    // The reader's connections (the XREAD and the one that wakes it) carry the API's connection name; all its replies share one slot.
    const readers = await Promise.all(
      masters.map(
        async (m) =>
          String(await m.client('LIST'))
            .split('\n')
            .filter((line) => line.includes(`name=${PREFIX}:api-reader`)).length,
      ),
    );
    expect(readers.filter((n) => n > 0)).toHaveLength(1);
    expect(readers.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4);
  });

  it('coalesces identical misses of two API processes into one upstream call (claim and readers in the {flight} slot)', async () => {
    upstreams.a.setBehavior({ latencyMs: 600 });
    try {
      const calls = () => upstreams.a.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
      const before = calls();
      const ask = (baseUrl: string) =>
        client(baseUrl)
          .chat.completions.create({
            model: 'a-4o',
            messages: [{ role: 'user', content: 'coalesced over the cluster' }],
          })
          .withResponse();
      const replies = await Promise.all([
        ask(gateway.baseUrl),
        ask(replica.baseUrl),
        ask(gateway.baseUrl),
        ask(replica.baseUrl),
      ]);
      for (const reply of replies)
        expect(reply.data.choices[0]?.message.content).toBe('Echo: coalesced over the cluster');
      expect(calls()).toBe(before + 1);
      // Followers on the other process read the leader's stream: a slot of another process's tag.
      expect(replies.map((r) => r.response.headers.get('x-cache'))).toContain('MISS');
    } finally {
      upstreams.a.setBehavior({ latencyMs: 0 });
    }
  });

  it("tells a worker's reader check who still reads a job, over the cluster", async () => {
    const redis = createRedis(
      loadSettings({ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_KEY_PREFIX: PREFIX }),
      'command',
      'test-watch',
    );
    const watch = new ReaderWatch({ redis, prefix: PREFIX, intervalMs: 50, misses: 2 });
    try {
      await waitFor(() => redis.status === 'ready', 5_000, 'the cluster client');
      await redis.set(readerLivenessKey(PREFIX, 'live-api'), '1', 'PX', 10_000);
      await redis.sadd(jobReadersKey(PREFIX, '{t1}job-followed'), 'live-api');
      const gone: string[] = [];
      const stops = [
        watch.watch('{t1}job-read', 'live-api', () => gone.push('read')),
        watch.watch('{t1}job-followed', 'dead-api', () => gone.push('followed')),
        watch.watch('{t2}job-orphan', 'dead-api', () => gone.push('orphan')),
      ];
      await waitFor(() => gone.length > 0, 5_000, 'the orphaned job to be given up');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(gone).toEqual(['orphan']);
      for (const stop of stops) stop();
    } finally {
      redis.disconnect();
    }
  });

  it('answers a paraphrase from the semantic cache, and clears both caches on every master', async () => {
    const openai = client(gateway.baseUrl);
    expect(
      (
        await openai.chat.completions
          .create({ model: 'a-4o', messages: [{ role: 'user', content: 'What is the capital of France?' }] })
          .withResponse()
      ).response.headers.get('x-cache'),
    ).toBe('MISS');
    const paraphrase = await client(replica.baseUrl)
      .chat.completions.create({
        model: 'a-4o',
        messages: [{ role: 'user', content: 'The capital of France is what?' }],
      })
      .withResponse();
    expect(paraphrase.response.headers.get('x-cache')).toBe('SEMANTIC_HIT');

    const exactBefore = (await keysPerMaster()).flat().filter((k) => k.startsWith(`${PREFIX}:cache:x:`));
    expect(exactBefore.length).toBeGreaterThan(2);
    const cleared = await fetch(`${gateway.baseUrl}/admin/cache/clear`, {
      method: 'POST',
      headers: { 'x-api-key': ADMIN, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(cleared.status).toBe(200);
    const left = (await keysPerMaster())
      .flat()
      .filter((k) => k.startsWith(`${PREFIX}:cache:x:`) || k.startsWith(`${PREFIX}:cache:{s}:e:`));
    expect(left).toEqual([]);
    const after = await openai.chat.completions
      .create({ model: 'a-4o', messages: [{ role: 'user', content: 'cluster sync' }] })
      .withResponse();
    expect(after.response.headers.get('x-cache')).toBe('MISS');
  });

  it('rate-limits per key across both API processes and counts it in /stats', async () => {
    // Two more API processes with a low limit: their limiters count against one window in the key's slot.
    const limitedEnv = { ...env, RATE_LIMIT_REQUESTS: '3', RATE_LIMIT_WINDOW: '60' };
    const limited = [
      await startApiReplica(limitedEnv, gateway.configPath),
      await startApiReplica(limitedEnv, gateway.configPath),
    ];
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${limited[i % 2]!.baseUrl}/v1/models`, {
          headers: { authorization: `Bearer ${LIMITED}` },
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      await waitFor(
        async () => {
          const stats = (await (
            await fetch(`${gateway.baseUrl}/stats`, { headers: { 'x-api-key': ADMIN } })
          ).json()) as { rate_limit_stats: { requests_throttled: number; top_users: Array<{ requests: number }> } };
          return (
            stats.rate_limit_stats.requests_throttled >= 2 &&
            stats.rate_limit_stats.top_users.some((u) => u.requests === 5)
          );
        },
        5_000,
        'the throttled requests in /stats',
      );
    } finally {
      await Promise.all(limited.map((r) => r.stop()));
    }
  });

  it('reloads config.yaml in every API and worker process, acknowledged over the cluster', async () => {
    writeFileSync(gateway.configPath, stringify(providers('a-reloaded')));
    const res = await fetch(`${gateway.baseUrl}/admin/reload-config`, {
      method: 'POST',
      headers: { 'x-api-key': ADMIN },
    });
    const body = (await res.json()) as {
      status: string;
      processes: { notified: number; reloaded: number; failed: unknown[] };
    };
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ status: 'success', processes: { notified: 3, reloaded: 3, failed: [] } });
    const reply = await client(replica.baseUrl).chat.completions.create({
      model: 'a-reloaded',
      messages: [{ role: 'user', content: 'after reload' }],
    });
    expect(reply.choices[0]?.message.content).toBe('Echo: after reload');
  });

  it('sees the workers through their heartbeats (ready, and 503 for a provider nobody serves)', async () => {
    const ready = await fetch(`${gateway.baseUrl}/health/ready`, { headers: { 'x-api-key': ADMIN } });
    expect(ready.status).toBe(200);
    const [worker] = gateway.workers.get('provider_b')!;
    await worker!.kill('SIGTERM');
    gateway.workers.set('provider_b', []);
    const quick = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 2_000 });
    const refused = await waitForStatus(
      (i) =>
        quick.chat.completions.create({
          model: 'b-flash',
          messages: [{ role: 'user', content: `nobody serves b ${i}` }],
        }),
      503,
    );
    expect(refused).toBe(true);
    await gateway.addWorker('provider_b');
    await waitFor(
      async () => {
        try {
          await client(gateway.baseUrl).chat.completions.create({
            model: 'b-flash',
            messages: [{ role: 'user', content: 'b is back' }],
          });
          return true;
        } catch {
          return false;
        }
      },
      10_000,
      'provider_b to be served again',
    );
  });

  it('spreads the keys over the shards: queues, reply streams, windows and cache entries each in their own slots', async () => {
    const openai = client(replica.baseUrl);
    for (let i = 0; i < 6; i++)
      await openai.chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content: `spread ${i}` }] });
    const perMaster = await keysPerMaster();
    expect(perMaster.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);
    const all = perMaster.flat();
    // Each queue's keys share one slot; the two queues are tagged apart.
    const queueSlots = (provider: string) =>
      new Set(all.filter((k) => k.startsWith(`${PREFIX}:bull:{${provider}}:`)).map(keySlot));
    expect(queueSlots('provider_a').size).toBe(1);
    expect(queueSlots('provider_b').size).toBe(1);
    expect([...queueSlots('provider_a')][0]).not.toBe([...queueSlots('provider_b')][0]);
    // Exact entries spread by their own hash.
    const exactSlots = new Set(all.filter((k) => k.startsWith(`${PREFIX}:cache:x:`)).map(keySlot));
    expect(exactSlots.size).toBeGreaterThan(1);
    // Reply streams are deleted once read, just after the reply is sent (their per-process slots: the reader test below).
    await vi.waitFor(
      async () => expect((await keysPerMaster()).flat().filter((k) => k.startsWith(`${PREFIX}:resp:`))).toEqual([]),
      { timeout: 3_000 },
    );
    // A rate-limit window per key, in the key's own slot.
    expect(new Set(all.filter((k) => k.startsWith(`${PREFIX}:rl:win:{`)).map(keySlot)).size).toBe(2);
    // /admin/cache/stats counts the keys of every master, not of one node.
    const stats = (await (
      await fetch(`${gateway.baseUrl}/admin/cache/stats`, { headers: { 'x-api-key': ADMIN } })
    ).json()) as { cache_store: { connected: boolean; keys: number } };
    const sizes = await Promise.all(masters.map((m) => m.dbsize()));
    expect(stats.cache_store.connected).toBe(true);
    expect(stats.cache_store.keys).toBeGreaterThan(Math.max(...sizes));
    // Every key sits on the master the cluster says serves its slot (the slot the gateway computed is the cluster's).
    for (const key of all.slice(0, 50)) expect(Number(await check.cluster('KEYSLOT', key))).toBe(keySlot(key));
  });

  it('scans every master to delete by pattern', async () => {
    const redis = createRedis(
      loadSettings({ REDIS_CLUSTER_NODES: cluster.nodes, REDIS_KEY_PREFIX: PREFIX }),
      'command',
      'test',
    );
    try {
      await waitFor(() => redis.status === 'ready', 5_000, 'the cluster client');
      await Promise.all(Array.from({ length: 30 }, (_, i) => redis.set(`${PREFIX}:scan:${i}`, '1')));
      const spread = (await keysPerMaster()).filter((keys) => keys.some((k) => k.startsWith(`${PREFIX}:scan:`))).length;
      expect(spread).toBeGreaterThan(1);
      expect(await scanDelete(redis, `${PREFIX}:scan:*`)).toBe(30);
      expect((await keysPerMaster()).flat().filter((k) => k.startsWith(`${PREFIX}:scan:`))).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});

/** Calls `call` until it fails with HTTP `status` (true) or 10 s pass (false). */
async function waitForStatus(call: (attempt: number) => Promise<unknown>, status: number): Promise<boolean> {
  const until = Date.now() + 10_000;
  for (let attempt = 0; Date.now() < until; attempt++) {
    try {
      await call(attempt);
    } catch (err) {
      if ((err as { status?: number }).status === status) return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}
