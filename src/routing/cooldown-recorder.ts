import type { Redis } from 'ioredis';
import type { GatewayConfig } from '../config/gateway-config.ts';
import type { UpstreamFailure } from '../execution/upstream-failure.ts';
import type { Logger } from '../observability/logger.ts';
import { cooldownChannel, cooldownFailuresKey, cooldownKey } from './cooldown-keys.ts';

// KEYS: cooldown key, failures key. ARGV: 'now' or 'count', cooldown ms, failures, window ms, channel, provider.
// Returns the ms the provider is out from now on, 0 when it stays in.
const NOTE = `
if ARGV[1] == 'count' then
  local n = redis.call('INCR', KEYS[2])
  if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
  if n < tonumber(ARGV[3]) then return 0 end
  redis.call('DEL', KEYS[2])
end
local ms = tonumber(ARGV[2])
local left = redis.call('PTTL', KEYS[1])
if left >= ms then return left end
redis.call('SET', KEYS[1], '1', 'PX', ms)
redis.call('PUBLISH', ARGV[5], ARGV[6] .. ' ' .. ms)
return ms`;

interface ScriptRunner {
  gatewayNoteUpstreamFailure(
    cooldown: string,
    failures: string,
    mode: string,
    ms: string,
    threshold: string,
    windowMs: string,
    channel: string,
    provider: string,
  ): Promise<number>;
}

/** Options of {@link CooldownRecorder}. */
export interface CooldownRecorderOptions {
  /** Command connection of the worker. */
  redis: Redis;
  prefix: string;
  /** The current configuration: which providers are watched, and the cooldown settings. */
  config: () => GatewayConfig;
  logger: Logger;
}

/**
 * The worker side of cooldowns: each failed upstream attempt of a watched
 * provider is noted in Redis in one script. A 429 or a 401/403 puts the
 * provider out at once (for at least the upstream's `Retry-After`, up to the
 * configured maximum); 5xx, time-outs and connection errors do once
 * `failures` of them fall within the window. Providers nobody can fall back
 * from are not watched, so their failures cost no Redis command.
 */
export class CooldownRecorder {
  private readonly options: CooldownRecorderOptions;

  constructor(options: CooldownRecorderOptions) {
    this.options = options;
    if (!('gatewayNoteUpstreamFailure' in options.redis)) {
      options.redis.defineCommand('gatewayNoteUpstreamFailure', { numberOfKeys: 2, lua: NOTE });
    }
  }

  /** Notes one failed attempt; resolves true when the provider is now out (no point retrying it). Never rejects. */
  async note(provider: string, failure: UpstreamFailure): Promise<boolean> {
    const config = this.options.config();
    if (!config.routing.cooledProviders.has(provider)) return false;
    const mode = modeOf(failure);
    if (mode === undefined) return false;
    const settings = config.routing.cooldown;
    const retryAfter = failure.options.retryAfterMs ?? 0;
    const ms = Math.round(Math.min(settings.maxCooldownMs, Math.max(settings.cooldownMs, retryAfter)));
    const { prefix, redis } = this.options;
    try {
      const runner = redis as unknown as ScriptRunner;
      const out = await runner.gatewayNoteUpstreamFailure(
        cooldownKey(prefix, provider),
        cooldownFailuresKey(prefix, provider),
        mode,
        String(ms),
        String(settings.failures),
        String(settings.windowMs),
        cooldownChannel(prefix),
        provider,
      );
      if (Number(out) > 0)
        this.options.logger.warn(
          { provider, cooldownMs: Number(out), reason: failure.message },
          'deployment in cooldown',
        );
      return Number(out) > 0;
    } catch (err) {
      this.options.logger.debug({ err: (err as Error).message, provider }, 'upstream failure not noted for cooldown');
      return false;
    }
  }
}

/** `now` for failures that say the deployment cannot serve for a while, `count` for ones that may be passing. */
function modeOf(failure: UpstreamFailure): 'now' | 'count' | undefined {
  if (failure.kind === 'status') {
    const status = failure.options.status ?? 0;
    if (status === 429 || status === 401 || status === 403) return 'now';
    return status >= 500 || status === 408 ? 'count' : undefined;
  }
  return failure.kind === 'timeout' || failure.kind === 'network' ? 'count' : undefined;
}
