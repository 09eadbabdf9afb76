import type { Redis } from 'ioredis';
import type { KeyStore } from '../auth/key-store.ts';
import type { GatewayConfig } from '../config/gateway-config.ts';
import { countLiveWorkers } from './worker-heartbeat.ts';
import { ProviderKeys } from '../providers/provider-keys.ts';

export type ConnectionState = 'connected' | 'disconnected';
/** Whether jobs can be added to the providers' queues. */
export type QueuesState = 'ready' | 'failed';
export type ProviderState = 'available' | 'unavailable' | 'degraded';
export type OverallState = 'healthy' | 'degraded' | 'unhealthy';

/** Why a provider has the state it has. */
export interface ProviderDetail {
  status: ProviderState;
  /** Whether its `api_key_env` variable is set in the API process. */
  key_configured: boolean;
  /** Worker processes heart-beating for its queue. */
  live_workers: number;
  /** Jobs waiting in its queue; null when Redis could not say. */
  waiting_jobs: number | null;
  /** Seconds it stays out after upstream failures (routed providers only; see config.yaml `routing`). */
  cooldown_seconds?: number;
}

/** The health record, plus per-provider details. */
export interface HealthRecord {
  status: OverallState;
  timestamp: string;
  services: {
    cache_store: ConnectionState;
    database: ConnectionState;
    providers: Record<string, ProviderState>;
  };
  version: string;
  details: {
    database: { kind: KeyStore['kind'] };
    config: { loaded: boolean; error?: string };
    providers: Record<string, ProviderDetail>;
  };
}

/** Body of `/health/ready`, same shape for 200 and 503. */
export interface ReadinessRecord {
  status: 'ready' | 'not_ready';
  timestamp: string;
  checks: {
    cache_store: ConnectionState;
    config: 'loaded' | 'failed';
    database: ConnectionState;
    /** Every provider's queue answered through the path a job is added on. */
    queues: QueuesState;
  };
  /** Why the configuration is not loaded. */
  config_error?: string;
}

/** Options of {@link HealthService}. */
export interface HealthServiceOptions {
  /** Command connection. */
  redis: Redis;
  prefix: string;
  keyStore: KeyStore;
  config: () => GatewayConfig;
  /** Why no configuration is loaded; undefined when one is. */
  configError: () => string | undefined;
  /** Jobs waiting in a provider's queue. */
  waitingJobs: (provider: string) => Promise<number>;
  /** Rejects unless a job can be added to every queue of `providers` (`ChatQueues.probe`). */
  probeQueues: (providers: readonly string[]) => Promise<void>;
  /** Waiting jobs from which a provider with live workers is `degraded`; 0 turns it off (`HEALTH_QUEUE_BACKLOG`). */
  backlogThreshold: number;
  version: string;
  /** Where provider keys are looked up. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Ms of cooldown left per provider in cooldown (this process's view); none: no provider is ever in cooldown. */
  cooldowns?: () => ReadonlyMap<string, number>;
  /** Longest a single check may take before it counts as failed, ms. @defaultValue 1500 */
  checkTimeoutMs?: number;
}

/**
 * Computes the health probes from real state: a PING to Redis, a query to
 * the key store, worker heartbeats and queue depth per provider. Checks run
 * in parallel, each with a timeout, so a dead dependency makes a probe slow
 * by at most that timeout, never hang.
 *
 * Rules: a provider is `unavailable` when its key is unset in the API process
 * or no worker heart-beats for its queue, `degraded` when its waiting jobs
 * reach the backlog threshold or it is in cooldown, else `available`. Overall `unhealthy` when
 * Redis is unreachable, no configuration is loaded, or no provider is usable;
 * `degraded` when the database is unreachable or some provider is not
 * `available`; `healthy` otherwise.
 */
export class HealthService {
  private readonly options: HealthServiceOptions;
  private readonly keys: ProviderKeys;

  constructor(options: HealthServiceOptions) {
    this.options = options;
    this.keys = new ProviderKeys(options.env);
  }

  private withTimeout<T>(work: Promise<T>): Promise<T> {
    const ms = this.options.checkTimeoutMs ?? 1_500;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`check timed out after ${ms} ms`)), ms);
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  private async probe(work: () => Promise<unknown>): Promise<ConnectionState> {
    try {
      await this.withTimeout(work());
      return 'connected';
    } catch {
      return 'disconnected';
    }
  }

  private cacheStore(): Promise<ConnectionState> {
    return this.probe(() => this.options.redis.ping());
  }

  private database(): Promise<ConnectionState> {
    return this.probe(() => this.options.keyStore.ping());
  }

  async health(): Promise<HealthRecord> {
    const config = this.options.config();
    const names = config.providers.map((p) => p.name);
    const [cacheStore, database, workers, waiting] = await Promise.all([
      this.cacheStore(),
      this.database(),
      this.withTimeout(countLiveWorkers(this.options.redis, this.options.prefix, names)).catch(
        () => new Map<string, number>(),
      ),
      Promise.all(names.map((name) => this.withTimeout(this.options.waitingJobs(name)).catch(() => null))),
    ]);

    const providers: Record<string, ProviderState> = {};
    const details: Record<string, ProviderDetail> = {};
    const cooling = this.options.cooldowns?.() ?? new Map<string, number>();
    config.providers.forEach((provider, i) => {
      const keyConfigured = this.keys.has(provider);
      const liveWorkers = workers.get(provider.name) ?? 0;
      const waitingJobs = waiting[i] ?? null;
      const backlog =
        this.options.backlogThreshold > 0 && waitingJobs !== null && waitingJobs >= this.options.backlogThreshold;
      const cooldownMs = cooling.get(provider.name) ?? 0;
      const status: ProviderState =
        !keyConfigured || liveWorkers === 0 ? 'unavailable' : backlog || cooldownMs > 0 ? 'degraded' : 'available';
      providers[provider.name] = status;
      const detail: ProviderDetail = {
        status,
        key_configured: keyConfigured,
        live_workers: liveWorkers,
        waiting_jobs: waitingJobs,
      };
      if (cooldownMs > 0) detail.cooldown_seconds = Math.ceil(cooldownMs / 1000);
      details[provider.name] = detail;
    });

    const configError = this.options.configError();
    const states = Object.values(providers);
    const usable = states.some((s) => s !== 'unavailable');
    const status: OverallState =
      cacheStore === 'disconnected' || configError !== undefined || !usable
        ? 'unhealthy'
        : database === 'disconnected' || states.some((s) => s !== 'available')
          ? 'degraded'
          : 'healthy';

    return {
      status,
      timestamp: new Date().toISOString(),
      services: { cache_store: cacheStore, database, providers },
      version: this.options.version,
      details: {
        database: { kind: this.options.keyStore.kind },
        config: configError === undefined ? { loaded: true } : { loaded: false, error: configError },
        providers: details,
      },
    };
  }

  /**
   * Ready when Redis answers, a configuration is loaded and a job can be
   * added to every provider's queue; the database is reported, not required.
   * Whether workers serve the queues is not a condition: without them the
   * API still answers at once (503), which is the point of keeping it in rotation.
   */
  async readiness(): Promise<ReadinessRecord> {
    const names = this.options.config().providers.map((p) => p.name);
    const [cacheStore, database, queues] = await Promise.all([
      this.cacheStore(),
      this.database(),
      this.withTimeout(this.options.probeQueues(names)).then(
        (): QueuesState => 'ready',
        (): QueuesState => 'failed',
      ),
    ]);
    const configError = this.options.configError();
    const ready = cacheStore === 'connected' && queues === 'ready' && configError === undefined;
    const record: ReadinessRecord = {
      status: ready ? 'ready' : 'not_ready',
      timestamp: new Date().toISOString(),
      checks: { cache_store: cacheStore, config: configError === undefined ? 'loaded' : 'failed', database, queues },
    };
    if (configError !== undefined) record.config_error = configError;
    return record;
  }
}
