import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ConfigStore } from '../config/config-store.ts';
import type { GatewayConfig } from '../config/gateway-config.ts';
import { loadSettings, type Settings } from '../config/settings.ts';
import type { Logger } from '../observability/logger.ts';
import type { ControlBus } from './control-bus.ts';
import type { EnvFile } from './env-file.ts';
import { emptyRouting } from '../config/routing-config.ts';
import { ProviderKeys } from '../providers/provider-keys.ts';

/** Options of {@link ConfigReloader}. */
export interface ConfigReloaderOptions {
  /** Shown in acknowledgements and logs. */
  role: 'api' | 'worker';
  configStore: ConfigStore;
  /** Settings the process started with; each reload replaces them. */
  settings: Settings;
  bus: ControlBus;
  /** Command connection: generation counter and acknowledgements. */
  redis: Redis;
  /** Redis key prefix. */
  prefix: string;
  logger: Logger;
  /** `ENV_FILE`, re-read on every reload. @defaultValue none */
  envFile?: EnvFile;
  /** The environment settings are validated from. @defaultValue `process.env` */
  env?: NodeJS.ProcessEnv;
  /** Why config.yaml failed to load at start, when it did (the store then holds no providers). */
  startupError?: string;
  /** How long a reload waits for other processes to acknowledge, ms. @defaultValue 2000 */
  ackTimeoutMs?: number;
  /** Providers whose missing key is worth a warning. @defaultValue every provider of the configuration */
  servedProviders?: readonly string[];
  /**
   * Those of `providers` that no live worker serves (`WorkerPresence.withoutWorkers`),
   * named in the reload result. @defaultValue not reported (worker processes)
   */
  withoutWorkers?: (providers: readonly string[]) => Promise<string[]>;
}

/** How the other processes took a broadcast reload. */
export interface ReloadPropagation {
  /** Other processes listening when the reload was published. */
  notified: number;
  reloaded: number;
  failed: Array<{ process: string; role: string; error: string }>;
  /** Set when the broadcast itself failed (Redis unreachable). */
  error?: string;
}

/** The reload result (`ReloadResult` in the API description), plus what was loaded and who followed. */
export interface ReloadResult {
  status: 'success';
  message: string;
  timestamp: string;
  config: { providers: number; models: number };
  processes: ReloadPropagation;
  /** Providers of the new configuration that no live worker serves: their requests answer 503. Absent when it could not be read. */
  providers_without_workers?: string[];
}

/** One process's answer to a broadcast reload. */
interface ReloadAck {
  process: string;
  role: string;
  ok: boolean;
  error?: string;
}

interface ReloadMessage {
  id: string;
  origin: string;
  generation: number;
  source: string;
}

/** Settings that take effect without a restart: they are read per request. */
const LIVE_SETTINGS = new Set<keyof Settings>(['RATE_LIMIT_REQUESTS', 'RATE_LIMIT_WINDOW']);

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function reloadChannel(prefix: string): string {
  return `${prefix}:config:reload`;
}

function generationKey(prefix: string): string {
  return `${prefix}:config:generation`;
}

function ackKey(prefix: string, id: string): string {
  return `${prefix}:config:acks:${id}`;
}

/** A configuration with no providers: what the API serves when config.yaml failed to load at start. */
export function emptyConfig(): GatewayConfig {
  return {
    providers: [],
    modelIndex: new Map(),
    providerIndex: new Map(),
    deployments: new Map(),
    routing: emptyRouting(),
    prices: {},
    embeddingIndex: new Map(),
    loadedAt: new Date(),
  };
}

/**
 * Reloads the configuration of this process and of every other one.
 *
 * A reload validates everything first (ENV_FILE and the environment with the
 * settings schema, then config.yaml) and swaps only when all is valid: an
 * invalid file throws and the old configuration stays. A successful reload
 * is broadcast on Redis pub/sub; every other API and worker process reloads
 * its own files and acknowledges, and the caller learns who followed. A
 * generation counter in Redis lets a process that missed a broadcast (its
 * subscription was down) catch up when it reconnects. Reloads in one process
 * run one at a time.
 */
export class ConfigReloader {
  private readonly options: ConfigReloaderOptions;
  private readonly env: NodeJS.ProcessEnv;
  private current: Settings;
  private error: string | undefined;
  private lastGeneration: number | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: ConfigReloaderOptions) {
    this.options = options;
    this.env = options.env ?? process.env;
    this.current = options.settings;
    this.error = options.startupError;
  }

  /** Settings as of the last reload. */
  get settings(): Settings {
    return this.current;
  }

  /** Why no configuration is loaded; `undefined` once one is (a failed reload keeps the old one). */
  get configError(): string | undefined {
    return this.error;
  }

  /** Listens for broadcasts and catches up after reconnects. Never blocks on Redis. */
  start(): void {
    const { bus, redis, prefix, logger } = this.options;
    bus.subscribe(reloadChannel(prefix), (message) => this.onBroadcast(message));
    bus.onReconnect(() => void this.catchUp());
    redis.get(generationKey(prefix)).then(
      (value) => {
        this.lastGeneration ??= Number(value ?? 0);
      },
      (err: Error) => logger.debug({ err }, 'cannot read the configuration generation yet'),
    );
  }

  /**
   * Reloads here, then broadcasts. Throws the validation error (ConfigError,
   * SettingsError or EnvFileError) when the files are invalid; nothing changes then.
   */
  reload(source: string): Promise<ReloadResult> {
    return this.serially(async () => {
      const config = await this.applyLocal(source);
      const processes = await this.broadcast(source);
      const models = config.modelIndex.size;
      let message = `Configuration reloaded: ${config.providers.length} providers, ${models} models.`;
      if (processes.error) {
        message += ` The broadcast failed (${processes.error}): other processes keep their configuration until they reload.`;
      } else {
        message += ` ${plural(processes.notified, 'other process', 'other processes')} notified, ${processes.reloaded} reloaded`;
        message +=
          processes.failed.length > 0 ? `, ${processes.failed.length} failed and kept their old configuration.` : '.';
        const silent = processes.notified - processes.reloaded - processes.failed.length;
        if (silent > 0) message += ` ${silent} did not answer within ${this.ackTimeoutMs} ms.`;
      }
      const idle = await this.options.withoutWorkers?.(config.providers.map((p) => p.name)).catch(() => undefined);
      if (idle && idle.length > 0)
        message += ` No live worker serves ${idle.join(', ')}: requests for ${idle.length > 1 ? 'them' : 'it'} answer 503 until one starts.`;
      return {
        status: 'success',
        message,
        timestamp: new Date().toISOString(),
        config: { providers: config.providers.length, models },
        processes,
        ...(idle ? { providers_without_workers: idle } : {}),
      };
    });
  }

  private get ackTimeoutMs(): number {
    return this.options.ackTimeoutMs ?? 2_000;
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  /** Validates ENV_FILE + environment + config.yaml, then swaps; throws and changes nothing when any is invalid. */
  private async applyLocal(source: string): Promise<GatewayConfig> {
    const { envFile, configStore, logger } = this.options;
    try {
      const vars = envFile ? await envFile.read() : undefined;
      const nextSettings = loadSettings(envFile && vars ? envFile.preview(vars) : this.env);
      // ConfigStore.reload validates before it swaps; when it throws nothing has changed.
      const config = await configStore.reload();
      if (envFile && vars) envFile.apply(vars);
      this.warnRestartOnly(nextSettings);
      this.current = nextSettings;
      this.error = undefined;
      const served = this.options.servedProviders;
      const checked = served ? config.providers.filter((provider) => served.includes(provider.name)) : config.providers;
      new ProviderKeys(this.env).warnUnset(checked, logger, 'models');
      logger.info(
        { source, providers: config.providers.length, models: config.modelIndex.size },
        'configuration reloaded',
      );
      return config;
    } catch (err) {
      logger.error({ source, err }, 'configuration reload failed: keeping the current configuration');
      throw err;
    }
  }

  private warnRestartOnly(next: Settings): void {
    const changed = (Object.keys(next) as Array<keyof Settings>).filter(
      (name) => !LIVE_SETTINGS.has(name) && JSON.stringify(next[name]) !== JSON.stringify(this.current[name]),
    );
    if (changed.length > 0)
      this.options.logger.warn({ settings: changed }, 'these settings changed but apply only after a restart');
  }

  private async broadcast(source: string): Promise<ReloadPropagation> {
    const { redis, prefix, bus } = this.options;
    const id = randomUUID();
    let listeners: number;
    try {
      const generation = await redis.incr(generationKey(prefix));
      this.lastGeneration = generation;
      const message: ReloadMessage = { id, origin: bus.processId, generation, source };
      listeners = await bus.publish(reloadChannel(prefix), JSON.stringify(message));
    } catch (err) {
      return { notified: 0, reloaded: 0, failed: [], error: (err as Error).message };
    }
    const notified = Math.max(0, listeners - (bus.isSubscribed(reloadChannel(prefix)) ? 1 : 0));
    const acks = await this.collectAcks(id, notified);
    return {
      notified,
      reloaded: acks.filter((a) => a.ok).length,
      failed: acks
        .filter((a) => !a.ok)
        .map((a) => ({ process: a.process, role: a.role, error: a.error ?? 'unknown error' })),
    };
  }

  private async collectAcks(id: string, expected: number): Promise<ReloadAck[]> {
    if (expected === 0) return [];
    const until = Date.now() + this.ackTimeoutMs;
    let acks: ReloadAck[] = [];
    while (Date.now() < until) {
      try {
        acks = (await this.options.redis.lrange(ackKey(this.options.prefix, id), 0, -1)).map(
          (raw) => JSON.parse(raw) as ReloadAck,
        );
      } catch {
        // Keep what we have; Redis may come back before the deadline.
      }
      if (acks.length >= expected) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return acks;
  }

  private async onBroadcast(raw: string): Promise<void> {
    let message: ReloadMessage;
    try {
      message = JSON.parse(raw) as ReloadMessage;
    } catch {
      return;
    }
    const { bus, redis, prefix, role } = this.options;
    if (message.origin === bus.processId) return;
    const ack: ReloadAck = { process: bus.processId, role, ok: true };
    await this.serially(async () => {
      try {
        await this.applyLocal(`broadcast from ${message.origin} (${message.source})`);
      } catch (err) {
        ack.ok = false;
        ack.error = (err as Error).message;
      }
      this.lastGeneration = Math.max(this.lastGeneration ?? 0, message.generation);
    });
    const key = ackKey(prefix, message.id);
    await redis.multi().rpush(key, JSON.stringify(ack)).expire(key, 60).exec();
  }

  /** After a reconnect: reload when a broadcast was published while this process was away. */
  private async catchUp(): Promise<void> {
    const { redis, prefix, logger } = this.options;
    try {
      const generation = Number((await redis.get(generationKey(prefix))) ?? 0);
      if (this.lastGeneration !== undefined && generation <= this.lastGeneration) return;
      await this.serially(async () => {
        await this.applyLocal('missed broadcast').catch(() => {});
        this.lastGeneration = generation;
      });
    } catch (err) {
      logger.debug({ err }, 'cannot check the configuration generation');
    }
  }
}
