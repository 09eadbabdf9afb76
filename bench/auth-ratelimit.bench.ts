import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { GatewayAuthenticator } from '../src/auth/gateway-authenticator.ts';
import { issueApiKey } from '../src/auth/key-store.ts';
import { SqliteKeyStore } from '../src/auth/sqlite-key-store.ts';
import { StaticKeyAuthenticator } from '../src/auth/static-key-authenticator.ts';
import { SlidingWindowLimiter } from '../src/ratelimit/sliding-window-limiter.ts';

/**
 * What authentication and rate limiting add to every /v1 request: an issued
 * key found in the in-memory cache, one missing it (SQLite lookup), and the
 * sliding-window script on the real Redis at several concurrencies.
 *
 * BENCH_SMOKE=1: short runs. BENCH_DURATION_MS tunes each scenario.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 500 : 3000));

interface Result {
  ops: number;
  p50: number;
  p99: number;
}

async function measure(concurrency: number, op: (i: number) => Promise<unknown>): Promise<Result> {
  const latencies: number[] = [];
  const until = performance.now() + durationMs;
  let i = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const start = performance.now();
        await op(i++);
        latencies.push(performance.now() - start);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { ops: latencies.length / (durationMs / 1000), p50: at(0.5), p99: at(0.99) };
}

const store = new SqliteKeyStore({ path: join(mkdtempSync(join(tmpdir(), 'gw-bench-')), 'keys.sqlite') });
const auth = new GatewayAuthenticator({ staticKeys: new StaticKeyAuthenticator([], []), store, cacheTtlMs: 30_000 });
const keys = await Promise.all(Array.from({ length: 200 }, (_, i) => issueApiKey(store, { owner: `bench-${i}` })));
const uncached = new GatewayAuthenticator({ staticKeys: new StaticKeyAuthenticator([], []), store, cacheTtlMs: 0 });

const redis = new Redis({
  host: process.env.REDIS_HOST ?? '127.0.0.1',
  port: Number(process.env.REDIS_PORT ?? 6379),
  enableAutoPipelining: true,
});
const prefix = `gwbench:rl:${process.pid}`;
const limiter = new SlidingWindowLimiter({ redis, prefix });

const rows: string[] = [];
const fmt = (n: number) => (n < 1 ? n.toFixed(3) : n.toFixed(2));
function row(name: string, concurrency: number, r: Result): void {
  rows.push(`| ${name} | ${concurrency} | ${r.ops.toFixed(0)} | ${fmt(r.p50)} | ${fmt(r.p99)} |`);
}

try {
  row('authenticate, cached issued key', 1, await measure(1, (i) => auth.authenticate(keys[i % keys.length]!.key)));
  row(
    'authenticate, SQLite lookup (TTL 0)',
    1,
    await measure(1, (i) => uncached.authenticate(keys[i % keys.length]!.key)),
  );
  for (const concurrency of smoke ? [1, 32] : [1, 32, 128]) {
    // 200 keys with a limit no one reaches: every call runs the whole script.
    row(
      'rate limit (Lua, Redis clock)',
      concurrency,
      await measure(concurrency, (i) =>
        limiter.consume(`k${i % 200}`, { limit: 1e9, windowMs: 60_000 }, `gw_k…${i % 200}`),
      ),
    );
  }
  process.stdout.write(
    `| scenario | concurrency | ops/s | p50 ms | p99 ms |\n|---|---|---|---|---|\n${rows.join('\n')}\n`,
  );
} finally {
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (found.length > 0) await redis.del(...found);
  } while (cursor !== '0');
  redis.disconnect();
  await store.close();
}
