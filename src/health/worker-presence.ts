import type { Redis } from 'ioredis';
import { ServiceUnavailableError } from '../errors/catalog.ts';
import { countLiveWorkers } from './worker-heartbeat.ts';

/** Options of {@link WorkerPresence}. */
export interface WorkerPresenceOptions {
  /** Command connection. */
  redis: Redis;
  /** Redis key prefix. */
  prefix: string;
  /** Providers of the current configuration (re-read at every refresh, so reloads apply). */
  providers: () => readonly string[];
  /**
   * How often the view is refreshed from the heartbeats, ms.
   * @defaultValue 1000
   */
  refreshMs?: number;
  /**
   * `Retry-After` of the 503 for a provider without a live worker, seconds.
   * @defaultValue 2
   */
  retryAfterSeconds?: number;
}

/**
 * This API process's view of which providers have a live worker, read from
 * the workers' heartbeats (`src/health/worker-heartbeat.ts`) every second or
 * so, for every provider in one script. A request for a provider the view
 * says is served costs nothing; one for a provider it says has no worker
 * first has the view refreshed (one refresh shared by every request waiting
 * for it), so a worker that has just started is never refused, and the
 * request is refused with 503 at once if the heartbeats agree. Without it, a
 * job for a provider nobody serves waits its whole deadline for a 504.
 */
export class WorkerPresence {
  private readonly options: WorkerPresenceOptions;
  /** Live workers per provider as of the last successful read; undefined before the first one. */
  private live: Map<string, number> | undefined;
  private refreshing: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: WorkerPresenceOptions) {
    this.options = options;
  }

  /** Reads the heartbeats now, then every `refreshMs`. */
  start(): void {
    if (this.timer) return;
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs ?? 1_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Resolves when `provider` may have a live worker; throws 503
   * `service_unavailable` with `Retry-After` when the heartbeats say it has
   * none. When they cannot be read (Redis unreachable) the request goes on
   * and meets that trouble where it needs Redis.
   */
  async requireLiveWorker(provider: string): Promise<void> {
    if ((this.live?.get(provider) ?? 0) > 0) return;
    if (!(await this.refresh()) || (this.live?.get(provider) ?? 0) > 0) return;
    throw new ServiceUnavailableError(`No worker is serving ${provider} right now; retry shortly.`, {
      headers: { 'Retry-After': String(this.options.retryAfterSeconds ?? 2) },
    });
  }

  /** Live workers per provider, read now; providers of `names` without any are listed. */
  async withoutWorkers(names: readonly string[]): Promise<string[]> {
    const counts = await countLiveWorkers(this.options.redis, this.options.prefix, names);
    return names.filter((name) => (counts.get(name) ?? 0) === 0);
  }

  /** One read of every provider's heartbeats at a time; resolves whether it succeeded. */
  private refresh(): Promise<boolean> {
    this.refreshing ??= countLiveWorkers(this.options.redis, this.options.prefix, this.options.providers())
      .then(
        (counts) => {
          this.live = counts;
          return true;
        },
        () => false,
      )
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }
}
