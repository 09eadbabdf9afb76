import { Agent, request } from 'node:http';

/** Options of {@link runLoad}. */
export interface LoadOptions {
  url: string;
  /** JSON body, or a function giving one per request (for unique prompts). */
  body: string | ((i: number) => string);
  headers?: Record<string, string>;
  /** Concurrent connections, each sending its next request as soon as the last ended. */
  connections: number;
  durationMs: number;
  /** Ignore the first ms of results (connection set-up, JIT). Default 500. */
  warmupMs?: number;
}

/** Latency summary in ms. */
export interface LoadResult {
  /** Requests measured (after the warm-up). */
  requests: number;
  /** Every request finished during the run, warm-up included (for per-request accounting). */
  finished: number;
  errors: number;
  /** Non-2xx statuses seen, by status. */
  statuses: Record<number, number>;
  rps: number;
  latency: Percentiles;
  /** Time to the first body byte (the first SSE chunk when streamed). */
  ttfb: Percentiles;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function percentiles(samples: number[]): Percentiles {
  if (samples.length === 0) return { p50: NaN, p90: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] as number };
}

/**
 * A closed-loop HTTP load generator on keep-alive connections: `connections`
 * loops each send a request, read the whole reply, and send the next. It
 * records latency and time to first byte of every reply after the warm-up.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const warmupMs = options.warmupMs ?? 500;
  const start = performance.now();
  const measureFrom = start + warmupMs;
  const end = measureFrom + options.durationMs;
  const latencies: number[] = [];
  const ttfbs: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  let counter = 0;
  let finished = 0;

  const once = (i: number) =>
    new Promise<void>((resolve) => {
      const body = typeof options.body === 'string' ? options.body : options.body(i);
      const t0 = performance.now();
      let firstByte = 0;
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...options.headers },
        },
        (res) => {
          res.on('data', () => {
            if (firstByte === 0) firstByte = performance.now();
          });
          res.on('end', () => {
            const t1 = performance.now();
            if (t0 >= measureFrom && t1 <= end) {
              latencies.push(t1 - t0);
              ttfbs.push((firstByte || t1) - t0);
              if ((res.statusCode ?? 0) >= 300) statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
            }
            resolve();
          });
          res.on('error', () => {
            errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });

  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < end) {
        await once(counter++);
        finished++;
      }
    }),
  );
  agent.destroy();
  return {
    requests: latencies.length,
    finished,
    errors,
    statuses,
    rps: latencies.length / (options.durationMs / 1000),
    latency: percentiles(latencies),
    ttfb: percentiles(ttfbs),
  };
}
