import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { SlidingWindowLimiter } from '../../src/ratelimit/sliding-window-limiter.ts';
import { readBody } from '../../test/support/read-body.ts';
import { freePort } from '../../test/support/processes.ts';
import type { BenchTarget } from './peers.ts';
import { answers, startService, until } from './service-process.ts';
import { UPSTREAM_KEY } from './stack.ts';

/**
 * The design's floor: the steps the architecture requires of a miss, built
 * from the same libraries with none of the gateway's code. A front process
 * parses the body, `add`s a BullMQ job (with a priority, as every gateway job
 * has) and waits on the job's reply stream with `XREAD BLOCK`; a BullMQ
 * `Worker` in a second process calls the upstream and `XADD`s what it
 * answers: a JSON reply as one entry, a stream chunk by chunk with an end
 * mark. No authentication,
 * validation, DLP, cache, usage or observability: what no tuning of the
 * gateway's own code can take away.
 *
 * Paths of the front: `/queue` (the floor), `/queue-limit` (the gateway's
 * sliding-window rate-limit script before the `add`), `/queue-limit-cache`
 * (and a cache read: one `GET` of the body's SHA-256), `/proxy` (the front
 * relays to the upstream itself, no queue); GET answers 200 for readiness.
 * The design card names both steps (the API tier rate-limits and checks the
 * cache before it enqueues).
 *
 * Run as a process: `design-floor-server.ts front|worker <upstream base URL>
 * <key prefix> [port]`, Redis from REDIS_HOST / REDIS_PORT.
 */

const QUEUE = 'floor';
/** The gateway's default per-worker concurrency, so that 64 connections meet the same queue depth. */
const CONCURRENCY = 64;

function redisConnection(): Redis {
  return new Redis({
    host: process.env.REDIS_HOST ?? '127.0.0.1',
    port: Number(process.env.REDIS_PORT ?? 6379),
    maxRetriesPerRequest: null,
  });
}

function postUpstream(agent: Agent, upstreamUrl: string, body: string, onResponse: (res: IncomingMessage) => void) {
  const out = httpRequest(
    `${upstreamUrl}/chat/completions`,
    {
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${UPSTREAM_KEY}`,
        'content-length': Buffer.byteLength(body),
      },
    },
    onResponse,
  );
  return out.end(body);
}

async function serveFront(upstreamUrl: string, prefix: string, port: number): Promise<void> {
  const agent = new Agent({ keepAlive: true });
  const commands = redisConnection();
  const queue = new Queue(QUEUE, { connection: redisConnection(), prefix });
  const limiter = new SlidingWindowLimiter({ redis: commands, prefix });
  const rule = { limit: 100_000_000, windowMs: 60_000 };
  // A blocking read holds its connection: one per request in flight.
  const idleReaders: Redis[] = [];

  async function viaQueue(body: string, stream: boolean, path: string, res: ServerResponse): Promise<void> {
    if (path.startsWith('/queue-limit') && !(await limiter.consume('floor-key', rule)).allowed)
      throw new Error('limited');
    if (path === '/queue-limit-cache') {
      const cached = await commands.get(`${prefix}:cache:${createHash('sha256').update(body).digest('hex')}`);
      if (cached !== null) throw new Error('every prompt is new: nothing may be cached');
    }
    const id = randomUUID();
    const replyKey = `${prefix}:reply:${id}`;
    await queue.add(
      'chat',
      { body, replyKey, stream },
      { jobId: id, priority: 10, attempts: 1, removeOnComplete: true, removeOnFail: true },
    );
    const reader = idleReaders.pop() ?? redisConnection();
    try {
      let last = '0';
      for (;;) {
        const entries = (await reader.xread('BLOCK', 30_000, 'STREAMS', replyKey, last)) as
          [string, [string, string[]][]][] | null;
        if (!entries) throw new Error('no reply within 30 s');
        for (const [entryId, [field, value = '']] of entries[0]?.[1] ?? []) {
          last = entryId;
          if (field === 'j') {
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(value) });
            return void res.end(value);
          }
          if (field === 'e') return void res.end();
          if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(value);
        }
      }
    } finally {
      idleReaders.push(reader);
      commands.unlink(replyKey).catch(() => {});
    }
  }

  const server = createServer((req, res) => {
    if (req.method === 'GET') return void res.end('ok');
    readBody(req)
      .then((body) => {
        const stream = (JSON.parse(body) as { stream?: boolean }).stream === true;
        if (req.url !== '/proxy') return viaQueue(body, stream, req.url ?? '', res);
        return new Promise<void>((resolve, reject) => {
          postUpstream(agent, upstreamUrl, body, (upstream) => {
            res.writeHead(upstream.statusCode ?? 502, { 'content-type': upstream.headers['content-type'] ?? '' });
            upstream.pipe(res).once('finish', resolve).once('error', reject);
          }).once('error', reject);
        });
      })
      .catch((err: Error) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
  });
  server.listen(port, '127.0.0.1', () => {
    const address = server.address();
    process.send?.(typeof address === 'object' && address ? address.port : 0);
  });
}

function runWorker(upstreamUrl: string, prefix: string): void {
  const agent = new Agent({ keepAlive: true });
  const commands = redisConnection();
  const worker = new Worker<{ body: string; replyKey: string; stream: boolean }>(
    QUEUE,
    (job) =>
      new Promise<void>((resolve, reject) => {
        const { body, replyKey, stream } = job.data;
        postUpstream(agent, upstreamUrl, body, (upstream) => {
          const chunks: Buffer[] = [];
          upstream.on('data', (chunk: Buffer) => {
            if (stream) void commands.xadd(replyKey, '*', 'd', chunk);
            else chunks.push(chunk);
          });
          upstream.once('end', () => {
            const end = stream ? ['e', '1'] : ['j', Buffer.concat(chunks)];
            commands.xadd(replyKey, '*', ...end).then(() => resolve(), reject);
          });
          upstream.once('error', reject);
        }).once('error', reject);
      }),
    { connection: redisConnection(), prefix, concurrency: CONCURRENCY },
  );
  worker.on('ready', () => process.send?.('ready'));
}

/**
 * Starts the floor's two processes as the peer benchmark starts a peer (a
 * process group each, logs to files, on `core` when given) against the Redis
 * on `redisPort`.
 */
export async function startDesignFloor(options: {
  upstreamUrl: string;
  redisPort: number;
  core: number | undefined;
  workDir: string;
}): Promise<BenchTarget> {
  const port = await freePort();
  const prefix = `bench-floor-${randomUUID().slice(0, 8)}`;
  const start = (role: 'front' | 'worker') =>
    startService({
      name: `design floor ${role}`,
      command: process.execPath,
      args: [
        '--experimental-strip-types',
        '--disable-warning=ExperimentalWarning',
        import.meta.filename,
        role,
        options.upstreamUrl,
        prefix,
        String(port),
      ],
      cwd: options.workDir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        REDIS_HOST: '127.0.0.1',
        REDIS_PORT: String(options.redisPort),
      },
      logPath: join(options.workDir, `floor-${role}.log`),
      ...(options.core !== undefined ? { core: options.core } : {}),
    });
  const services = [start('worker'), start('front')];
  const base = `http://127.0.0.1:${port}`;
  if (
    !(await until(
      () => answers(`${base}/`),
      30_000,
      () => services.some((s) => s.exit() !== undefined),
    ))
  ) {
    await Promise.all(services.map((s) => s.stop()));
    throw new Error(
      `the design floor did not answer within 30 s: ${services.map((s) => s.log().slice(-1000)).join('\n')}`,
    );
  }
  return {
    label:
      "the design's floor (rate-limit script, cache read, BullMQ queue, worker, reply stream; none of the gateway's code)",
    url: `${base}/queue-limit-cache`,
    headers: {},
    memory: async () => (await Promise.all(services.map((s) => s.rss()))).reduce((a, b) => a + b, 0),
    memoryOf: 'its two processes',
    pids: () => services.flatMap((s) => [...s.tree().keys()]),
    stop: async () => void (await Promise.all(services.map((s) => s.stop()))),
  };
}

// Run as a process (not when imported for startDesignFloor): its arguments say which half.
if (import.meta.filename === process.argv[1]) {
  const [role, upstreamUrl = '', prefix = '', port = '0'] = process.argv.slice(2);
  // An exit of its own on SIGTERM, so that profilers (--cpu-prof) get to write.
  process.once('SIGTERM', () => process.exit(0));
  if (role === 'front') await serveFront(upstreamUrl, prefix, Number(port));
  else if (role === 'worker') runWorker(upstreamUrl, prefix);
}
