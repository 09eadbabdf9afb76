import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { startRedisCluster, type RedisCluster } from '../test/support/redis-cluster.ts';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.ts';
import { cpuMs, redisPid } from './support/cpu.ts';
import { runLoad } from './support/load.ts';
import { BENCH_KEY, startStack, type BenchStack } from './support/stack.ts';

/**
 * Redis commands per chat request, by kind of request: what the capacity
 * model of docs/scaling.md is built on. Runs the real stack (API, one worker,
 * fake upstream) on a private Redis, first a single redis-server, then a
 * 3-master Redis Cluster, and counts with MONITOR on every node what each
 * kind of request sends: commands from clients (network round trips' worth
 * of work) and commands run inside Lua scripts, split by the process that
 * sent them (API or worker, from CLIENT LIST's connection names) and, on the
 * cluster, by shard. The background (heartbeats, BullMQ's idle polls,
 * liveness refreshes) is measured with no traffic over the same span and
 * subtracted. Requests go one at a time, so nothing is coalesced between
 * them. Then, with MONITOR off, each kind runs under load (BENCH_CONNECTIONS,
 * default 32) and the CPU every Redis node, the API and the worker spend per
 * request is read from /proc: the figures the capacity model divides by.
 *
 * `npm run bench -- redis-commands` (BENCH_SMOKE=1: 20 requests per kind).
 * BENCH_COMPARE_CHECKOUT=<path of another checkout> counts that checkout's
 * gateway instead, on one redis-server only (before/after a change).
 */

const SMOKE = process.env.BENCH_SMOKE === '1';
const N = Number(process.env.BENCH_REQUESTS ?? (SMOKE ? 20 : 200));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const LOAD_MS = Number(process.env.BENCH_DURATION_MS ?? (SMOKE ? 1_500 : 6_000));

interface Counts {
  client: Map<string, number>;
  lua: Map<string, number>;
  perNode: number[];
}

type Kind = 'miss' | 'miss, no-store' | 'exact hit' | 'streamed miss';
const KINDS: Kind[] = ['miss', 'exact hit', 'streamed miss', 'miss, no-store'];

/** Watches every node with MONITOR and attributes each command to API, worker or other by its connection's name. */
class Monitor {
  private counts: Counts = { client: new Map(), lua: new Map(), perNode: [] };
  private readonly names = new Map<string, string>();
  private readonly monitors: Socket[] = [];
  private readonly nodes: Array<{ port: number }>;
  private readonly prefix: string;

  constructor(ports: number[], prefix: string) {
    this.nodes = ports.map((port) => ({ port }));
    this.prefix = prefix;
  }

  /** MONITOR on a plain socket: each line `+<time> [<db> <source>] "<command>" ...`, source `lua` inside scripts. */
  async start(): Promise<void> {
    for (const [i, node] of this.nodes.entries()) {
      const socket = connect(node.port, '127.0.0.1');
      await once(socket, 'connect');
      let rest = '';
      socket.setEncoding('utf8');
      socket.on('data', (data: string) => {
        const lines = (rest + data).split('\r\n');
        rest = lines.pop() ?? '';
        for (const line of lines) {
          const match = /^\+[\d.]+ \[\d+ ([^\]]+)\] "([^"]+)"/.exec(line);
          if (match) this.count(i, (match[2] as string).toUpperCase(), match[1] as string);
        }
      });
      socket.write('MONITOR\r\n');
      this.monitors.push(socket);
    }
  }

  /** Learns which client address belongs to which process (connections come and go with BullMQ's duplicates). */
  async learnNames(): Promise<void> {
    for (const node of this.nodes) {
      const conn = new Redis({ port: node.port, host: '127.0.0.1' });
      for (const line of String(await conn.client('LIST')).split('\n')) {
        const addr = /addr=(\S+)/.exec(line)?.[1];
        const name = /name=(\S*)/.exec(line)?.[1] ?? '';
        if (addr) this.names.set(`${node.port}/${addr}`, name);
      }
      conn.disconnect();
    }
  }

  private count(node: number, command: string, source: string): void {
    const lua = source === 'lua';
    const name = lua ? '' : (this.names.get(`${this.nodes[node]!.port}/${source}`) ?? '');
    const who = lua
      ? 'lua'
      : name.includes(`${this.prefix}:api`)
        ? 'api'
        : name.includes(`${this.prefix}:worker`) || name.includes('bull')
          ? 'worker'
          : 'other';
    const map = lua ? this.counts.lua : this.counts.client;
    map.set(`${who} ${command}`, (map.get(`${who} ${command}`) ?? 0) + 1);
    this.counts.perNode[node] = (this.counts.perNode[node] ?? 0) + 1;
  }

  take(): Counts {
    const out = this.counts;
    this.counts = { client: new Map(), lua: new Map(), perNode: this.nodes.map(() => 0) };
    return out;
  }

  stop(): void {
    for (const m of this.monitors) m.destroy();
  }
}

function headersOf(kind: Kind): Record<string, string> {
  const headers: Record<string, string> = { authorization: `Bearer ${BENCH_KEY}`, 'content-type': 'application/json' };
  if (kind === 'miss, no-store') headers['cache-control'] = 'no-store';
  return headers;
}

function bodyOf(kind: Kind, i: number, runId: string): string {
  const content =
    kind === 'exact hit' ? `bench repeated question ${runId}` : `bench unique question ${runId} ${kind} ${i}`;
  return JSON.stringify({ model: 'a-4o', stream: kind === 'streamed miss', messages: [{ role: 'user', content }] });
}

async function send(stack: BenchStack, kind: Kind, i: number, runId: string): Promise<void> {
  const res = await fetch(`${stack.gateway.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: headersOf(kind),
    body: bodyOf(kind, i, runId),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${kind}: ${res.status} ${text}`);
  if (kind === 'exact hit' && i >= 0 && res.headers.get('x-cache') !== 'HIT') throw new Error('expected an exact hit');
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** Per-request counts of `load` minus the background `idle` rate over the same time. */
function perRequest(
  load: Counts,
  loadMs: number,
  idle: Counts,
  idleMs: number,
  n: number,
): { client: Map<string, number>; lua: Map<string, number>; perNode: number[] } {
  const minus = (a: Map<string, number>, b: Map<string, number>) => {
    const out = new Map<string, number>();
    for (const [k, v] of a) {
      const net = (v - ((b.get(k) ?? 0) * loadMs) / idleMs) / n;
      if (net > 0.05) out.set(k, net);
    }
    return out;
  };
  return {
    client: minus(load.client, idle.client),
    lua: minus(load.lua, idle.lua),
    perNode: load.perNode.map((v, i) => (v - ((idle.perNode[i] ?? 0) * loadMs) / idleMs) / n),
  };
}

async function measure(label: string, ports: number[], env: Record<string, string>): Promise<void> {
  const root = process.env.BENCH_COMPARE_CHECKOUT;
  const stack = await startStack({
    env: { ...env, SEMANTIC_CACHE_ENABLED: 'false', LOG_LEVEL: 'error' },
    ...(root ? { root } : {}),
  });
  const prefix = env.REDIS_KEY_PREFIX as string;
  const monitor = new Monitor(ports, prefix);
  try {
    await monitor.start();
    const runId = String(Date.now());
    // Warm-up: connections opened, scripts loaded, the repeated question cached.
    for (let i = 0; i < 20; i++) await send(stack, 'miss, no-store', i, `warm${runId}`);
    await send(stack, 'exact hit', -1, runId);
    await monitor.learnNames();
    monitor.take();
    const idleStart = Date.now();
    await new Promise((resolve) => setTimeout(resolve, SMOKE ? 1_000 : 3_000));
    const idle = monitor.take();
    const idleMs = Date.now() - idleStart;
    process.stdout.write(
      `\n### ${label}\n\nBackground with no traffic: ${((sum(idle.client) * 1000) / idleMs).toFixed(1)} client commands/s.\n\n`,
    );
    process.stdout.write(
      '| kind | client commands / request | API | worker | inside Lua | per shard |\n|---|---|---|---|---|---|\n',
    );
    const details: string[] = [];
    for (const kind of KINDS) {
      monitor.take();
      const start = Date.now();
      for (let i = 0; i < N; i++) await send(stack, kind, i, runId);
      // The worker's last writes and the cache store follow the reply: let them land.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const loadMs = Date.now() - start;
      const net = perRequest(monitor.take(), loadMs, idle, idleMs, N);
      const by = (who: string) =>
        [...net.client].filter(([k]) => k.startsWith(`${who} `)).reduce((a, [, v]) => a + v, 0);
      const shards = ports.length > 1 ? net.perNode.map((v) => v.toFixed(1)).join(' / ') : '';
      process.stdout.write(
        `| ${kind} | ${sum(net.client).toFixed(1)} | ${by('api').toFixed(1)} | ${by('worker').toFixed(1)} | ${sum(net.lua).toFixed(1)} | ${shards} |\n`,
      );
      const top = [...net.client].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v.toFixed(2)}`);
      details.push(`- ${kind}: ${top.join(', ')}`);
    }
    process.stdout.write(`\nClient commands per request by process and command:\n\n${details.join('\n')}\n`);
    monitor.stop();
    await underLoad(stack, ports, runId);
  } finally {
    monitor.stop();
    await stack.stop();
  }
}

/** Each kind under load, MONITOR off: req/s and CPU µs per request of Redis (all nodes, and the busiest), the API and the worker. */
async function underLoad(stack: BenchStack, ports: number[], runId: string): Promise<void> {
  const nodes = ports.map((port) => new Redis({ port, host: '127.0.0.1' }));
  const redisPids = await Promise.all(nodes.map(redisPid));
  for (const node of nodes) node.disconnect();
  const pids = { api: stack.gateway.api.child.pid, worker: stack.gateway.workers.get('provider_a')?.[0]?.child.pid };
  process.stdout.write(
    `\nUnder load (${CONNECTIONS} connections, ${LOAD_MS} ms per kind, MONITOR off), CPU µs per request:\n\n`,
  );
  process.stdout.write(
    '| kind | req/s | Redis, all nodes | Redis, busiest node | API | worker |\n|---|---|---|---|---|---|\n',
  );
  for (const kind of KINDS) {
    const read = async () => ({
      redis: await Promise.all(redisPids.map(cpuMs)),
      api: await cpuMs(pids.api),
      worker: await cpuMs(pids.worker),
    });
    const before = await read();
    const result = await runLoad({
      url: `${stack.gateway.baseUrl}/v1/chat/completions`,
      headers: headersOf(kind),
      body: (i) => bodyOf(kind, i, `${runId}-load`),
      connections: CONNECTIONS,
      durationMs: LOAD_MS,
    });
    const after = await read();
    const per = (ms: number) => ((ms * 1000) / Math.max(1, result.finished)).toFixed(0);
    const redis = after.redis.map((ms, i) => ms - (before.redis[i] ?? 0));
    const errors = result.errors > 0 ? ` (${result.errors} errors)` : '';
    process.stdout.write(
      `| ${kind} | ${result.rps.toFixed(0)}${errors} | ${per(redis.reduce((a, b) => a + b, 0))} | ${per(Math.max(...redis))} | ${per(after.api - before.api)} | ${per(after.worker - before.worker)} |\n`,
    );
  }
}

const single: RedisServer = await startRedisServer();
try {
  await measure('one redis-server', [single.port], {
    REDIS_HOST: '127.0.0.1',
    REDIS_PORT: String(single.port),
    REDIS_KEY_PREFIX: 'gwcmd',
  });
} finally {
  await single.stop('SIGTERM');
}
if (!process.env.BENCH_COMPARE_CHECKOUT) {
  const cluster: RedisCluster = await startRedisCluster(3);
  try {
    await measure('a 3-master Redis Cluster', cluster.ports, {
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_KEY_PREFIX: 'gwcmd',
    });
  } finally {
    await cluster.stop();
  }
}
process.stdout.write(`\n${N} requests per kind, one at a time; background subtracted.\n`);
