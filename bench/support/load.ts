import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpResponseReader, type ReadResponse } from './http-response-reader.ts';

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
  /** Silence on a connection, ms, after which its request counts as an error (never a hang). Default 30000. */
  replyTimeoutMs?: number;
  /**
   * How long after the run's end a request still in flight may take before its
   * connection is closed; it then counts in {@link LoadResult.abandoned}, not as an error.
   * Bounds a run against a server that takes minutes to answer what it accepted.
   * @defaultValue Infinity: each waits for its reply, or for `replyTimeoutMs` of silence
   */
  drainMs?: number;
  /**
   * Also time the first generated text of each reply ({@link LoadResult.ttft}).
   * @defaultValue false
   */
  firstToken?: boolean;
  /**
   * Requests per second offered over all connections, each connection sending
   * on its own fixed schedule (a late reply delays only its own connection's next
   * request). Comparisons of CPU per request need it: at a fixed concurrency a
   * slower server batches less per wake-up and pays more per request.
   * @defaultValue unpaced: each connection sends its next request as soon as the last ended
   */
  ratePerSecond?: number;
}

/** Latency summary in ms. */
export interface LoadResult {
  /** Requests measured (after the warm-up). */
  requests: number;
  /** Every request finished during the run, warm-up included (for per-request accounting). */
  finished: number;
  errors: number;
  /** Requests still in flight `drainMs` after the end, whose connections were closed. */
  abandoned: number;
  /** Non-2xx statuses seen, by status. */
  statuses: Record<number, number>;
  rps: number;
  latency: Percentiles;
  /** Time to the first body byte (the first SSE chunk when streamed). */
  ttfb: Percentiles;
  /**
   * Time to the first generated text (a non-empty `content`), with
   * {@link LoadOptions.firstToken}; a reply without any counts at its end.
   */
  ttft?: Percentiles;
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
 *
 * It writes requests and reads replies on raw sockets
 * ({@link HttpResponseReader}) rather than through `node:http`'s client: the
 * generator shares the machine's two cores with what it measures, and the
 * client cost ~2.5x the CPU per request (measured: 120-189 µs against 44-70 µs
 * at 64 connections through the gateway).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  const host = url.hostname;
  const port = Number(url.port || 80);
  const extra = Object.entries(options.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n${extra}`;
  const warmupMs = options.warmupMs ?? 500;
  const replyTimeoutMs = options.replyTimeoutMs ?? 30_000;
  const start = performance.now();
  const measureFrom = start + warmupMs;
  const end = measureFrom + options.durationMs;
  const latencies: number[] = [];
  const ttfbs: number[] = [];
  const ttfts: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  let abandoned = 0;
  let draining = false;
  const sockets = new Set<Socket>();
  let counter = 0;
  let finished = 0;

  const open = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host, port });
      socket.setNoDelay(true);
      socket.setTimeout(replyTimeoutMs, () => socket.destroy());
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
    });

  const interval = options.ratePerSecond ? (1000 * options.connections) / options.ratePerSecond : 0;
  // One loop per connection: send a request, read its whole response, send the next.
  const loop = async (_: unknown, index: number) => {
    let socket: Socket | undefined;
    let settle: ((outcome: ReadResponse | Error) => void) | undefined;
    // Connections' schedules are spread over one interval, so the rate is even.
    let due = start + (interval * index) / options.connections;
    while (performance.now() < end) {
      if (interval > 0) {
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        due = Math.max(due + interval, performance.now() - interval);
        if (performance.now() >= end) break;
      }
      const body = typeof options.body === 'string' ? options.body : options.body(counter++);
      if (!socket) {
        try {
          const opened = await open();
          const reader = new HttpResponseReader({ firstToken: options.firstToken ?? false });
          opened.on('data', (data: Buffer) => {
            try {
              const response = reader.feed(data, performance.now());
              if (response) settle?.(response);
            } catch (err) {
              settle?.(err as Error);
            }
          });
          opened.on('error', () => {});
          sockets.add(opened);
          opened.on('close', () => {
            sockets.delete(opened);
            if (socket === opened) socket = undefined;
            settle?.(new Error('connection closed mid-response'));
          });
          socket = opened;
        } catch {
          errors++;
          finished++;
          await sleep(10);
          continue;
        }
      }
      const t0 = performance.now();
      const outcome = await new Promise<ReadResponse | Error>((resolve) => {
        settle = resolve;
        socket?.write(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      });
      settle = undefined;
      const t1 = performance.now();
      if (outcome instanceof Error && draining) {
        abandoned++;
        break;
      }
      finished++;
      if (outcome instanceof Error) {
        errors++;
        socket?.destroy();
        socket = undefined;
        continue;
      }
      if (t0 >= measureFrom && t1 <= end) {
        latencies.push(t1 - t0);
        ttfbs.push((outcome.firstByteAt || t1) - t0);
        if (options.firstToken) ttfts.push((outcome.firstTokenAt || t1) - t0);
        if (outcome.status >= 300) statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      }
      if (outcome.closes) {
        socket?.destroy();
        socket = undefined;
      }
    }
    socket?.destroy();
  };

  const drainMs = options.drainMs ?? Infinity;
  const drain = Number.isFinite(drainMs)
    ? setTimeout(
        () => {
          draining = true;
          for (const socket of sockets) socket.destroy();
        },
        end + drainMs - performance.now(),
      )
    : undefined;
  await Promise.all(Array.from({ length: options.connections }, loop));
  clearTimeout(drain);
  return {
    requests: latencies.length,
    finished,
    errors,
    abandoned,
    statuses,
    rps: latencies.length / (options.durationMs / 1000),
    latency: percentiles(latencies),
    ttfb: percentiles(ttfbs),
    ...(options.firstToken ? { ttft: percentiles(ttfts) } : {}),
  };
}
