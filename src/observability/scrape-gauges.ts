import { Gauge, type Registry } from 'prom-client';

/** Jobs waiting in one provider's queue. */
export interface QueueDepth {
  provider: string;
  depth: number;
}

/** Options of {@link registerScrapeGauges}: each reader is omitted in processes that lack what it reads. */
export interface ScrapeGaugeOptions {
  /**
   * Reads queue depths at scrape time (BullMQ waiting + prioritized jobs).
   * Failures are swallowed: a scrape while Redis is down still answers, without the gauge.
   */
  queueDepths?: () => Promise<readonly QueueDepth[]>;
  /** Reads the live workers of every configured provider from their heartbeats, at scrape time. Failures are swallowed likewise. */
  liveWorkers?: () => Promise<ReadonlyMap<string, number>>;
  /** Whether this process's Redis command connection is up now. */
  redisUp?: () => boolean;
  /** Longest wait for a Redis read during a scrape, ms. @defaultValue 1000 */
  timeoutMs?: number;
}

/**
 * The gauges read when Prometheus scrapes, for what alerts need to see:
 * gateway_queue_depth{provider}, gateway_live_workers{provider} (0 means no
 * worker serves the provider) and gateway_redis_up (1 or 0).
 */
export function registerScrapeGauges(registry: Registry, options: ScrapeGaugeOptions): void {
  const timeoutMs = options.timeoutMs ?? 1_000;
  const { queueDepths, liveWorkers, redisUp } = options;
  if (queueDepths) {
    new Gauge({
      name: 'gateway_queue_depth',
      help: 'Chat jobs waiting in each provider queue (not yet taken by a worker), read at scrape time.',
      labelNames: ['provider'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const depths = await withTimeout(queueDepths(), timeoutMs).catch(() => undefined);
        for (const { provider, depth } of depths ?? []) this.set({ provider }, depth);
      },
    });
  }
  if (liveWorkers) {
    new Gauge({
      name: 'gateway_live_workers',
      help: 'Worker processes with a fresh heartbeat, per configured provider, read at scrape time; absent while Redis cannot be read.',
      labelNames: ['provider'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        const counts = await withTimeout(liveWorkers(), timeoutMs).catch(() => undefined);
        for (const [provider, workers] of counts ?? []) this.set({ provider }, workers);
      },
    });
  }
  if (redisUp) {
    new Gauge({
      name: 'gateway_redis_up',
      help: "1 while this process's Redis connection is ready, 0 while it is down or reconnecting.",
      registers: [registry],
      collect() {
        this.set(redisUp() ? 1 : 0);
      },
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out')), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
