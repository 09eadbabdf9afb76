import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamTrio, type FakeUpstream, type ProviderLetter } from '../support/fake-upstream.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';
import { sendChat, type Outcome } from '../support/traffic.ts';

/**
 * The capacity model's worker rule measured (docs/scaling.md#the-worker-rule-measured): an API
 * process and N worker processes per provider, against slow loopback upstreams in the three wire
 * formats, under closed-loop traffic that never stops while workers are added one per provider at
 * a time, as KEDA would add them. A worker serves `concurrency / upstream seconds` requests per
 * second, so throughput must grow with N until the workers' slots cover every request in flight
 * (N × concurrency = clients), and stay there; queue wait and waiting jobs must fall as workers
 * come.
 */

const KEY = 'gw_scaling_key_0123456789abcdef';
const prefix = uniquePrefix('worker-scaling');
const redis = testRedis();
const LETTERS: readonly ProviderLetter[] = ['a', 'b', 'c'];
const MODEL: Record<ProviderLetter, string> = { a: 'a-4o', b: 'b-2.5-flash', c: 'c-haiku-4-20250514' };
/**
 * Mean upstream time per call, ms: 1 to 3 s, spread (and the clients' starts staggered) so that
 * requests do not complete in lockstep bursts, of which a window would count 3 or 4.
 */
const UPSTREAM_MS = 2_000;
const UPSTREAM_SPREAD_MS = 2_000;
/** Jobs at once per worker process (config.yaml `concurrency`). */
const CONCURRENCY = 8;
/** Requests in flight per provider: three workers' slots, so the fourth adds nothing. */
const CLIENTS = 24;
/** Workers per provider in each phase. */
const PHASES = [1, 2, 3, 4] as const;
const WINDOW_MS = Number(process.env.SCALING_WINDOW_MS ?? 6_000);

let gateway: Gateway;
let upstreams: Record<ProviderLetter, FakeUpstream>;

/** What the capacity model predicts per provider with `workers` workers: requests/s, queue wait (s) and waiting jobs. */
function predicted(workers: number): { rps: number; waitS: number; waiting: number } {
  const slots = Math.min(workers * CONCURRENCY, CLIENTS);
  const upstreamS = UPSTREAM_MS / 1000;
  // Closed loop: each of the CLIENTS requests cycles through a slot; those without one wait.
  return { rps: slots / upstreamS, waitS: (CLIENTS / slots - 1) * upstreamS, waiting: CLIENTS - slots };
}

interface Phase {
  workers: number;
  rps: Record<ProviderLetter, number>;
  waitMs: Record<ProviderLetter, number>;
  waiting: Record<ProviderLetter, number>;
}

beforeAll(async () => {
  const trio = await startUpstreamTrio();
  upstreams = trio.upstreams;
  for (const u of Object.values(upstreams))
    u.setBehavior({ latencyMs: UPSTREAM_MS - UPSTREAM_SPREAD_MS / 2, latencyJitterMs: UPSTREAM_SPREAD_MS });
  gateway = await startGateway({
    env: {
      ...trio.env,
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      DLP_ENABLED: 'false',
      CACHE_ENABLED: 'false',
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '1000000',
      WORKER_HEARTBEAT_MS: '500',
    },
    config: {
      providers: LETTERS.map((l) => ({
        name: `provider_${l}`,
        api_key_env: `PROVIDER_${l.toUpperCase()}_API_KEY`,
        base_url: upstreams[l].url,
        models: [MODEL[l]],
        concurrency: CONCURRENCY,
      })),
    },
    providers: LETTERS.map((l) => `provider_${l}`),
    workersPerProvider: 1,
    // A worker starts in a second or two; on a machine shared with other test runs it can take far longer.
    workerStartTimeoutMs: 60_000,
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all(Object.values(upstreams ?? {}).map((u) => u.close()));
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

async function scrape(): Promise<string> {
  return (await fetch(`${gateway.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } })).text();
}

function series(text: string, name: string, provider: string): number {
  const match = new RegExp(`^${name}\\{provider="${provider}"\\} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

function perLetter(f: (l: ProviderLetter) => number): Record<ProviderLetter, number> {
  return { a: f('a'), b: f('b'), c: f('c') };
}

describe('provider workers added while traffic runs', () => {
  it('throughput grows with the workers up to clients / concurrency and stays there; queue wait and waiting jobs fall', async () => {
    let stop = false;
    const outcomes: Record<ProviderLetter, Outcome[]> = { a: [], b: [], c: [] };
    let n = 0;
    const traffic = Promise.all(
      LETTERS.flatMap((l) =>
        Array.from({ length: CLIENTS }, async () => {
          await new Promise((r) => setTimeout(r, Math.random() * UPSTREAM_MS));
          while (!stop) {
            const body = { model: MODEL[l], messages: [{ role: 'user', content: `scaling ${n++} ${Math.random()}` }] };
            outcomes[l].push(await sendChat(gateway.baseUrl, KEY, body, 30_000));
          }
        }),
      ),
    );

    const phases: Phase[] = [];
    try {
      for (const workers of PHASES) {
        while ((gateway.workers.get('provider_a')?.length ?? 0) < workers) {
          await Promise.all(LETTERS.map((l) => gateway.addWorker(`provider_${l}`)));
        }
        // The API counts them (what it checks before it queues), then the queue settles: the first
        // phase's backlog builds up (a job there waits about 4 s), a later one's drains.
        await waitFor(
          async () => {
            const text = await scrape();
            return LETTERS.every((l) => series(text, 'gateway_live_workers', `provider_${l}`) === workers);
          },
          15_000,
          `${workers} live workers per provider`,
        );
        await new Promise((r) => setTimeout(r, (workers === PHASES[0] ? 4 : 2) * UPSTREAM_MS));

        const before = await scrape();
        const from = Date.now();
        const depthSamples: Record<ProviderLetter, number>[] = [];
        while (Date.now() - from < WINDOW_MS) {
          await new Promise((r) => setTimeout(r, 500));
          const text = await scrape();
          depthSamples.push(perLetter((l) => series(text, 'gateway_queue_depth', `provider_${l}`)));
        }
        const to = Date.now();
        const after = await scrape();
        const delta = (l: ProviderLetter, name: string) =>
          series(after, name, `provider_${l}`) - series(before, name, `provider_${l}`);
        phases.push({
          workers,
          rps: perLetter(
            (l) =>
              outcomes[l].filter((o) => o.status === 200 && o.startedAt + o.ms >= from && o.startedAt + o.ms < to)
                .length /
              ((to - from) / 1000),
          ),
          waitMs: perLetter(
            (l) => (1000 * delta(l, 'gateway_queue_wait_seconds_sum')) / delta(l, 'gateway_queue_wait_seconds_count'),
          ),
          // A scrape that could not read Redis in time leaves the gauge out: such samples are skipped.
          waiting: perLetter((l) => mean(depthSamples.map((s) => s[l]).filter((v) => !Number.isNaN(v)))),
        });
      }
    } finally {
      stop = true;
      await traffic;
    }

    const rows = phases.map((p) => {
      const model = predicted(p.workers);
      const fmt = (r: Record<ProviderLetter, number>, digits: number) =>
        LETTERS.map((l) => r[l].toFixed(digits)).join(' / ');
      return `| ${p.workers} | ${model.rps.toFixed(0)} | ${fmt(p.rps, 1)} | ${(model.waitS * 1000).toFixed(0)} | ${fmt(p.waitMs, 0)} | ${model.waiting} | ${fmt(p.waiting, 1)} |`;
    });
    console.log(
      [
        `worker scaling: upstream ${UPSTREAM_MS} ± ${UPSTREAM_SPREAD_MS / 2} ms, concurrency ${CONCURRENCY}, ${CLIENTS} clients per provider, ${WINDOW_MS} ms windows (per provider a / b / c)`,
        '| workers per provider | model req/s | measured req/s | model queue wait ms | measured queue wait ms | model waiting jobs | measured waiting jobs |',
        '|---|---|---|---|---|---|---|',
        ...rows,
      ].join('\n'),
    );

    const all = Object.values(outcomes).flat();
    expect(
      all.filter((o) => o.status !== 200),
      'every request answered 200',
    ).toEqual([]);
    const total = (r: Record<ProviderLetter, number>) => r.a + r.b + r.c;
    const rps = phases.map((p) => total(p.rps));
    phases.forEach((p, i) => {
      const model = predicted(p.workers).rps * LETTERS.length;
      const workerBound = p.workers * CONCURRENCY < CLIENTS;
      // Where the workers are the limit, the model's figure (never above it); past that point the
      // clients are, and a job's time outside the upstream call (Redis, the API, the client) counts too.
      expect(rps[i], `${p.workers} workers per provider: ${rps[i]} req/s, model ${model}`).toBeGreaterThan(
        model * (workerBound ? 0.8 : 0.65),
      );
      // A window counts a random number of completions of 1-3 s jobs (one sigma about 5 % over the
      // three providers, 7-8 % for one): 1.1 was two sigmas, and a quiet run went past it (13.6 of 12).
      expect(rps[i]).toBeLessThan(model * 1.2);
    });
    // Growth while the workers' slots are short of the clients, then the plateau the model puts at
    // clients / concurrency workers: the fourth worker per provider finds nothing waiting (below).
    // Past the point throughput moves with the clients' round trip, i.e. with what else the
    // machine runs, hence the looser bound there.
    expect(rps[1] as number).toBeGreaterThan((rps[0] as number) * 1.6);
    expect(rps[2] as number).toBeGreaterThan(rps[1] as number);
    expect(rps[3] as number).toBeLessThan((rps[2] as number) * 1.3);
    for (const l of LETTERS) {
      const wait = phases.map((p) => p.waitMs[l]);
      const waiting = phases.map((p) => p.waiting[l]);
      expect(phases[2]?.rps[l], `provider_${l} scaled`).toBeGreaterThan((phases[0]?.rps[l] ?? 0) * 2);
      // Queue wait and waiting jobs fall as workers come, to almost nothing once every request has a slot.
      expect(wait[0], `provider_${l} queue wait`).toBeGreaterThan(wait[1] as number);
      expect(wait[1]).toBeGreaterThan(wait[2] as number);
      expect(wait[0]).toBeGreaterThan(predicted(1).waitS * 1000 * 0.7);
      expect(wait[2]).toBeLessThan(UPSTREAM_MS * 0.1);
      expect(wait[3]).toBeLessThan(UPSTREAM_MS * 0.1);
      expect(waiting[0], `provider_${l} waiting jobs`).toBeGreaterThan(waiting[1] as number);
      expect(waiting[0]).toBeGreaterThan(predicted(1).waiting * 0.6);
      expect(waiting[2]).toBeLessThan(2);
      expect(waiting[3]).toBeLessThan(2);
    }
  }, 180_000);
});
