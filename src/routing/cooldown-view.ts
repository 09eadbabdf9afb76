import type { Redis } from 'ioredis';
import type { ControlBus } from '../admin/control-bus.ts';
import type { GatewayConfig } from '../config/gateway-config.ts';
import { cooldownChannel, cooldownKey } from './cooldown-keys.ts';

/** Options of {@link CooldownView}. */
export interface CooldownViewOptions {
  /** Command connection. */
  redis: Redis;
  prefix: string;
  /** Cooldown announcements arrive on it. */
  bus: ControlBus;
  /** The current configuration: which providers are watched. */
  config: () => GatewayConfig;
  /**
   * How often the cooldown keys are read again, ms (catches an announcement
   * missed while the subscriber reconnected, and the process's start).
   * @defaultValue 1000
   */
  refreshMs?: number;
}

/**
 * This API process's view of which deployments are in cooldown: provider
 * name -> when (this process's clock) it comes back. Workers announce a
 * cooldown on a channel as they set it; the keys' TTLs are read again every
 * second, off the request path, and only for the providers config.yaml
 * routes (none: no Redis command at all). Asking costs a map lookup.
 */
export class CooldownView {
  private readonly options: CooldownViewOptions;
  private until = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(options: CooldownViewOptions) {
    this.options = options;
  }

  start(): void {
    if (this.timer) return;
    this.options.bus.subscribe(cooldownChannel(this.options.prefix), (message) => this.announced(message));
    this.options.bus.onReconnect(() => void this.refresh());
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.refreshMs ?? 1_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Ms until `provider` is back; 0 when it is not in cooldown. */
  remainingMs(provider: string, now = Date.now()): number {
    const until = this.until.get(provider);
    return until === undefined ? 0 : Math.max(0, until - now);
  }

  /** Providers in cooldown now, with the ms each has left. */
  snapshot(now = Date.now()): Map<string, number> {
    const out = new Map<string, number>();
    for (const [provider, until] of this.until) if (until > now) out.set(provider, until - now);
    return out;
  }

  /**
   * Reads the cooldown keys of the watched providers among `providers` (default: all of them) now.
   * Resolves false when Redis could not say; the view then keeps what it knew.
   */
  async refresh(providers?: readonly string[]): Promise<boolean> {
    const watched = this.options.config().routing.cooledProviders;
    const names = providers === undefined ? [...watched] : providers.filter((name) => watched.has(name));
    if (names.length === 0) {
      if (providers === undefined) this.until = new Map();
      return true;
    }
    try {
      // One command per provider, sent together: a pipeline would have to stay in one slot on a cluster.
      const ttls = await Promise.all(
        names.map((name) => this.options.redis.pttl(cooldownKey(this.options.prefix, name))),
      );
      const now = Date.now();
      const next = providers === undefined ? new Map<string, number>() : new Map(this.until);
      names.forEach((name, i) => {
        const ttl = ttls[i];
        if (typeof ttl === 'number' && ttl > 0) next.set(name, now + ttl);
        else next.delete(name);
      });
      this.until = next;
      return true;
    } catch {
      return false;
    }
  }

  private announced(message: string): void {
    const [provider, ms] = message.split(' ');
    const remaining = Number(ms);
    if (provider && Number.isFinite(remaining) && remaining > 0) this.until.set(provider, Date.now() + remaining);
  }
}
