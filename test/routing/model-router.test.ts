import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ControlBus } from '../../src/admin/control-bus.ts';
import { parseConfig, type GatewayConfig } from '../../src/config/gateway-config.ts';
import { UpstreamFailure } from '../../src/execution/upstream-failure.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { cooldownChannel, cooldownKey } from '../../src/routing/cooldown-keys.ts';
import { CooldownRecorder } from '../../src/routing/cooldown-recorder.ts';
import { CooldownView } from '../../src/routing/cooldown-view.ts';
import { ModelRouter } from '../../src/routing/model-router.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';

// Routing config, the cooldown recorder (workers) and view (API) on the real Redis, and the router's order.
const redis = testRedis();
const subscriber = testRedis();
const prefix = uniquePrefix('routing-unit');
const logger = createLogger(loadSettings({ LOG_LEVEL: 'error' }), 'test');
const bus = new ControlBus({ subscriber, publisher: redis, logger });

afterAll(async () => {
  await bus.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

const YAML = `
providers:
  - {name: east, format: openai, api_key_env: E, models: [gpt, solo], weight: 3}
  - {name: west, format: openai, api_key_env: W, models: [gpt]}
  - {name: claude, format: anthropic, api_key_env: C, models: [sonnet]}
  - {name: other, format: openai, api_key_env: O, models: [lonely]}
routing:
  fallbacks: {gpt: [sonnet]}
  cooldown: {seconds: 2, failures: 2}
`;

describe('config.yaml routing', () => {
  it('lets several provider entries serve one model, and derives which models and providers are routed', () => {
    const config = parseConfig(YAML);
    expect(config.deployments.get('gpt')?.map((p) => [p.name, p.weight])).toEqual([
      ['east', 3],
      ['west', 1],
    ]);
    expect(config.modelIndex.get('gpt')?.name).toBe('east');
    expect([...config.routing.routedModels].sort()).toEqual(['gpt']);
    // A fallback target's deployments are watched too; `other` serves nothing routed.
    expect([...config.routing.cooledProviders].sort()).toEqual(['claude', 'east', 'west']);
    expect(config.routing.cooldown).toEqual({
      cooldownMs: 2_000,
      failures: 2,
      windowMs: 60_000,
      maxCooldownMs: 300_000,
    });
  });

  it('without a routing section nothing is routed or watched', () => {
    const config = parseConfig('providers:\n  - {name: provider_a, api_key_env: A, models: [m]}\n');
    expect(config.routing.routedModels.size).toBe(0);
    expect(config.routing.cooledProviders.size).toBe(0);
  });

  it('names the bad field of a routing section', () => {
    const base = 'providers:\n  - {name: provider_a, api_key_env: A, models: [m, n]}\n';
    expect(() => parseConfig(`${base}routing: {fallbacks: {m: [nope]}}\n`)).toThrowError(
      /routing\.fallbacks\.m: no provider serves 'nope'/,
    );
    expect(() => parseConfig(`${base}routing: {fallbacks: {x: [m]}}\n`)).toThrowError(
      /routing\.fallbacks\.x: no provider serves 'x'/,
    );
    expect(() => parseConfig(`${base}routing: {fallbacks: {m: [m]}}\n`)).toThrowError(/its own fallback/);
    expect(() => parseConfig(`${base}routing: {fallbacks: {m: [n, n]}}\n`)).toThrowError(/twice/);
    expect(() => parseConfig(`${base}routing: {cooldown: {seconds: 0}}\n`)).toThrowError(/routing\.cooldown\.seconds/);
    expect(() => parseConfig(`${base}routing: {retries: 3}\n`)).toThrowError(/routing/);
    expect(() => parseConfig('providers:\n  - {name: provider_a, api_key_env: A, models: [m, m]}\n')).toThrowError(
      /lists 'm' twice/,
    );
    expect(() =>
      parseConfig('providers:\n  - {name: provider_a, api_key_env: A, models: [m], weight: 0}\n'),
    ).toThrowError(/providers\.0\.weight/);
  });
});

describe('cooldowns', () => {
  const config = parseConfig(YAML);
  const recorder = new CooldownRecorder({ redis, prefix, config: () => config, logger });
  const view = new CooldownView({ redis, prefix, bus, config: () => config, refreshMs: 60_000 });
  view.start();

  it('a 429 puts a watched provider out at once, for its Retry-After up to the maximum; the view hears of it', async () => {
    await expect.poll(() => bus.isSubscribed(cooldownChannel(prefix))).toBe(true);
    const out = await recorder.note(
      'west',
      new UpstreamFailure('HTTP 429', 'status', true, { status: 429, retryAfterMs: 5_000 }),
    );
    expect(out).toBe(true);
    const ttl = await redis.pttl(cooldownKey(prefix, 'west'));
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
    await expect.poll(() => view.remainingMs('west'), { timeout: 2_000 }).toBeGreaterThan(4_000);
    expect(view.snapshot().has('east')).toBe(false);
  });

  it('5xx and time-outs put it out only once the configured count is reached; 400s never', async () => {
    expect(await recorder.note('claude', new UpstreamFailure('HTTP 400', 'status', false, { status: 400 }))).toBe(
      false,
    );
    expect(await recorder.note('claude', new UpstreamFailure('HTTP 500', 'status', true, { status: 500 }))).toBe(false);
    expect(await recorder.note('claude', new UpstreamFailure('no answer in time', 'timeout', true))).toBe(true);
    await view.refresh(['claude']);
    expect(view.remainingMs('claude')).toBeGreaterThan(1_000);
    expect(view.remainingMs('claude')).toBeLessThanOrEqual(2_000);
  });

  it('failures of a provider nobody can fall back from cost no Redis command', async () => {
    const before = (await keysUnder(redis, prefix)).length;
    expect(await recorder.note('other', new UpstreamFailure('HTTP 429', 'status', true, { status: 429 }))).toBe(false);
    expect((await keysUnder(redis, prefix)).length).toBe(before);
  });

  it('a view with nothing watched never talks to Redis (the path of a configuration without routing)', async () => {
    const unrouted = parseConfig('providers:\n  - {name: provider_a, api_key_env: A, models: [m]}\n');
    // Never connected and refusing offline commands: any command would reject.
    const idle = new Redis({ lazyConnect: true, enableOfflineQueue: false });
    const idleView = new CooldownView({ redis: idle, prefix, bus, config: () => unrouted });
    expect(await idleView.refresh()).toBe(true);
    expect(await idleView.refresh(['provider_a'])).toBe(true);
    expect(idle.status).toBe('wait');
    idle.disconnect();
  });

  it('the router leaves deployments in cooldown out, and falls back; 503 with Retry-After when everything is out', async () => {
    const router = new ModelRouter({ config: () => config, cooldowns: view });
    // west and claude are out (above): only east is left for gpt, and its fallback sonnet is out too.
    expect(router.plan('gpt', undefined, undefined).map((c) => `${c.model}@${c.provider.name}`)).toEqual(['gpt@east']);
    expect(() => router.plan('sonnet', undefined, undefined)).toThrowError(
      expect.objectContaining({ code: 'service_unavailable', headers: { 'Retry-After': '2' } }),
    );
  });
});

describe('ModelRouter', () => {
  const config: GatewayConfig = parseConfig(YAML);
  const noCooldowns = { remainingMs: () => 0 } as unknown as CooldownView;

  it('orders deployments by weight (3:1 gives the first place to east about 3 times in 4), then the fallbacks', () => {
    const router = new ModelRouter({ config: () => config, cooldowns: noCooldowns });
    let eastFirst = 0;
    const runs = 4_000;
    for (let i = 0; i < runs; i++) {
      const plan = router.plan('gpt', undefined, undefined).map((c) => `${c.model}@${c.provider.name}`);
      expect(plan.slice(2)).toEqual(['sonnet@claude']);
      expect(new Set(plan.slice(0, 2))).toEqual(new Set(['gpt@east', 'gpt@west']));
      if (plan[0] === 'gpt@east') eastFirst++;
    }
    expect(eastFirst / runs).toBeGreaterThan(0.7);
    expect(eastFirst / runs).toBeLessThan(0.8);
  });

  it("takes a client's fallbacks only among configured models the key may use", () => {
    const router = new ModelRouter({ config: () => config, cooldowns: noCooldowns });
    const models = (header: string, mayUseModel?: (m: string) => boolean) =>
      router
        .plan(
          'lonely',
          mayUseModel ? { keyHash: 'h', owner: 'o', maskedKey: 'k', admin: false, mayUseModel } : undefined,
          header,
        )
        .map((c) => c.model);
    expect(models('sonnet, gpt')).toEqual(['lonely', 'sonnet', 'gpt', 'gpt']);
    expect(models('none')).toEqual(['lonely']);
    expect(() => models('https://evil.example/v1')).toThrowError(
      /'https:\/\/evil.example\/v1' is not a model this key may use/,
    );
    expect(() => models('sonnet', (m) => m !== 'sonnet')).toThrowError(/'sonnet' is not a model this key may use/);
    expect(() => models(Array.from({ length: 9 }, (_, i) => `m${i}`).join(','))).toThrowError(/at most 8/);
    expect(models(' sonnet ,sonnet, lonely')).toEqual(['lonely', 'sonnet']);
    // Configured fallbacks the key may not use are left out, not refused.
    expect(
      router
        .plan(
          'gpt',
          { keyHash: 'h', owner: 'o', maskedKey: 'k', admin: false, mayUseModel: (m) => m !== 'sonnet' },
          undefined,
        )
        .map((c) => c.model),
    ).toEqual(['gpt', 'gpt']);
  });
});
