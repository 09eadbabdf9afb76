import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { deletePrefix, testRedis, uniquePrefix } from '../test/support/redis.ts';
import { redisPid, withCpu } from './support/cpu.ts';
import { percentiles, runLoad, type LoadResult } from './support/load.ts';
import { startStack, UPSTREAM_KEY, type BenchStack } from './support/stack.ts';

/**
 * The floor the design puts under the one-connection latency: the mandated
 * steps of a miss built from the same libraries with none of the gateway's
 * code around them, next to the direct call and the gateway, at one
 * connection. The difference between the floor and the gateway is what the
 * gateway's own code adds (Express, authentication, validation, DLP, cache
 * read, observability); the floor itself is what no tuning of that code can
 * remove.
 *
 * Levels (the floor's processes: bench/support/design-floor-server.ts), each
 * adding one mandated step to the one before:
 *   proxy       a Node process between client and upstream (keep-alive node:http, no Redis)
 *   queue       BullMQ `add` (priority set, as every gateway job has one), a BullMQ
 *               `Worker` in its own process calling the upstream, the result `XADD`ed to a
 *               reply stream the API waits on with `XREAD BLOCK`
 *   + limit     the gateway's atomic sliding-window rate limit (its Lua script) decided before `add`
 *   + cache     one `GET` of the body's SHA-256 before the `add` (the cache check's read)
 *
 * Runs are interleaved (every scenario once per round) because the VM's speed
 * drifts; the table gives each column's median over the rounds, and "added"
 * is the median of each round's difference to the direct call. CPU per request
 * (Linux /proc, user + system) is given for the process in front of the queue
 * (the floor's or the gateway's API), the one behind it, Redis and the upstream.
 *
 * Each scenario's first run drives its connection for BENCH_WARMUP_MS before it
 * measures (the processes start cold; see the gateway bench); later rounds
 * keep the load generator's default warm-up.
 *
 * BENCH_SMOKE=1: two short rounds. BENCH_DURATION_MS (per run), BENCH_ROUNDS,
 * BENCH_WARMUP_MS (default 10000, smoke 300) tune it;
 * BENCH_GATEWAY_ENV (`NAME=value,NAME=value`) adds settings to the gateway's;
 * BENCH_COMPARE_ENV (same form) and/or BENCH_COMPARE_CHECKOUT (the path of
 * another checkout, e.g. a `git worktree` of an earlier commit) add a second
 * gateway, with those settings or that code, run in the same rounds: an A/B
 * with the floor as a reference for the VM's drift.
 */

await main();

async function main(): Promise<void> {
  const smoke = process.env.BENCH_SMOKE === '1';
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 800 : 4000));
  const rounds = Number(process.env.BENCH_ROUNDS ?? (smoke ? 2 : 5));
  const firstWarmupMs = Number(process.env.BENCH_WARMUP_MS ?? (smoke ? 300 : 10_000));
  const prefix = uniquePrefix('bench-floor');

  const envList = (list: string | undefined) =>
    Object.fromEntries(
      (list ?? '')
        .split(',')
        .filter(Boolean)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
  const gatewayEnv = {
    DLP_ENABLED: 'true',
    SEMANTIC_CACHE_ENABLED: 'false',
    ...envList(process.env.BENCH_GATEWAY_ENV),
  };
  const stack = await startStack({ env: gatewayEnv });
  const compareCheckout = process.env.BENCH_COMPARE_CHECKOUT;
  const compareLabel = [process.env.BENCH_COMPARE_ENV, compareCheckout].filter(Boolean).join(', ');
  let compare: BenchStack | undefined;
  const children: ChildProcess[] = [];
  const start = (r: string) => {
    const child = fork(join(import.meta.dirname, 'support', 'design-floor-server.ts'), [r, stack.upstreamUrl, prefix], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: ['--experimental-strip-types', '--disable-warning=ExperimentalWarning'],
    });
    children.push(child);
    return new Promise<unknown>((resolve) => child.once('message', resolve));
  };

  try {
    if (compareLabel) {
      compare = await startStack({
        env: { ...gatewayEnv, ...envList(process.env.BENCH_COMPARE_ENV) },
        shareUpstreamOf: stack,
        ...(compareCheckout ? { root: compareCheckout } : {}),
      });
    }
    const [port] = await Promise.all([start('front'), start('worker')]);
    const probe = testRedis();
    const redis = await redisPid(probe).catch(() => undefined);
    probe.disconnect();
    const floorPids = { front: children[0]?.pid, behind: children[1]?.pid, redis, upstream: stack.upstreamPid };
    type Scenario = [string, Record<string, number | undefined>, (warmupMs: number | undefined) => Promise<LoadResult>];
    const body = (i: number) =>
      JSON.stringify({
        model: 'a-4o',
        messages: [{ role: 'user', content: `floor prompt number ${i} ${Math.random()}` }],
      });
    const oneConnection = (url: string, headers?: Record<string, string>) => (warmupMs: number | undefined) =>
      runLoad({ url, headers, body, connections: 1, durationMs, warmupMs });
    const gatewayScenario = (name: string, gateway: BenchStack): Scenario => [
      name,
      {
        front: gateway.gateway.api.child.pid,
        behind: gateway.gateway.workers.get('provider_a')?.[0]?.child.pid,
        redis,
        upstream: gateway.upstreamPid,
      },
      oneConnection(`${gateway.gateway.baseUrl}/v1/chat/completions`, {
        'x-api-key': gateway.key,
        'cache-control': 'no-store',
      }),
    ];
    const floor = `http://127.0.0.1:${Number(port)}`;
    const scenarios: Scenario[] = [
      [
        'direct upstream',
        { redis, upstream: stack.upstreamPid },
        oneConnection(`${stack.upstreamUrl}/chat/completions`, { authorization: `Bearer ${UPSTREAM_KEY}` }),
      ],
      [
        'floor: proxy process',
        { front: floorPids.front, redis, upstream: stack.upstreamPid },
        oneConnection(`${floor}/proxy`),
      ],
      ['floor: + queue, worker, reply stream', floorPids, oneConnection(`${floor}/queue`)],
      ['floor: + rate limit', floorPids, oneConnection(`${floor}/queue-limit`)],
      ['floor: + cache read', floorPids, oneConnection(`${floor}/queue-limit-cache`)],
      gatewayScenario('gateway miss (queue)', stack),
      ...(compare ? [gatewayScenario(`gateway miss (queue), ${compareLabel}`, compare)] : []),
    ];

    const results = new Map<string, LoadResult[]>(scenarios.map(([name]) => [name, []]));
    const cpuPerRequest = new Map<string, Record<string, number>[]>(scenarios.map(([name]) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      // The two gateways of an A/B take turns at going first.
      const order =
        compare && round % 2 === 1 ? [...scenarios.slice(0, -2), ...scenarios.slice(-2).reverse()] : scenarios;
      for (const [name, pids, run] of order) {
        const { result, cpu } = await withCpu(pids, () => run(round === 0 ? firstWarmupMs : undefined));
        const bad = result.errors + Object.values(result.statuses).reduce((a, b) => a + b, 0);
        if (bad > 0) throw new Error(`${name}: ${bad} failed requests`);
        results.get(name)?.push(result);
        cpuPerRequest
          .get(name)
          ?.push(
            Object.fromEntries(
              Object.entries(cpu).map(([process, ms]) => [process, (ms * 1000) / Math.max(1, result.finished)]),
            ),
          );
      }
    }

    const median = (values: number[]) => percentiles(values).p50;
    const direct = results.get('direct upstream') ?? [];
    console.log(
      `one connection, ${rounds} interleaved rounds of ${durationMs} ms each (the first after ${firstWarmupMs} ms of warm-up); ms, medians over the rounds\n`,
    );
    console.log(
      '| scenario | req/s | p50 | p99 | added p50 | added p99 | CPU µs/req: front | behind | redis | upstream |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const [name] of scenarios) {
      const cpu = (process: string) => {
        const values = (cpuPerRequest.get(name) ?? [])
          .map((c) => c[process])
          .filter((v): v is number => v !== undefined && Number.isFinite(v));
        return values.length > 0 ? median(values).toFixed(0) : '';
      };
      const runs = results.get(name) ?? [];
      const added = (pick: (r: LoadResult) => number) =>
        median(runs.map((r, i) => pick(r) - pick(direct[i] as LoadResult)));
      const isDirect = name === 'direct upstream';
      console.log(
        `| ${name} | ${median(runs.map((r) => r.rps)).toFixed(0)} | ${median(runs.map((r) => r.latency.p50)).toFixed(2)} | ${median(runs.map((r) => r.latency.p99)).toFixed(2)} | ${isDirect ? '' : added((r) => r.latency.p50).toFixed(2)} | ${isDirect ? '' : added((r) => r.latency.p99).toFixed(2)} | ${cpu('front')} | ${cpu('behind')} | ${cpu('redis')} | ${cpu('upstream')} |`,
      );
    }
    if (compare) {
      const a = results.get(scenarios[scenarios.length - 2]?.[0] ?? '') ?? [];
      const b = results.get(scenarios[scenarios.length - 1]?.[0] ?? '') ?? [];
      const ratios = b.map((r, i) => r.latency.p50 / (a[i] as LoadResult).latency.p50);
      console.log(
        `\nA/B, p50 of the second gateway over the first's, per round: ${ratios.map((r) => `×${r.toFixed(2)}`).join(' ')} (median ×${median(ratios).toFixed(2)})`,
      );
    }
  } finally {
    for (const child of children) child.kill();
    await compare?.stop();
    await stack.stop();
    const redis = testRedis();
    await deletePrefix(redis, prefix);
    redis.disconnect();
  }
}
