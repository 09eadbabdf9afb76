import { z } from 'zod';

/**
 * The `routing` section of config.yaml: fallback models and the cooldown of
 * failing deployments. A deployment is one provider entry serving a model;
 * a model listed by several entries has several deployments.
 */

export const routingSchema = z.strictObject({
  /** Model id -> ordered fallback model ids, tried when every deployment of the model failed before the first token. */
  fallbacks: z.record(z.string().min(1), z.array(z.string().min(1)).min(1).max(8)).optional(),
  cooldown: z
    .strictObject({
      /** How long a deployment stays out after a 429, 401/403 or repeated 5xx/time-outs, seconds. @defaultValue 30 */
      seconds: z.int().min(1).max(3_600).default(30),
      /** 5xx, time-outs and connection errors within `window_seconds` that put a deployment out. @defaultValue 3 */
      failures: z.int().min(1).max(1_000).default(3),
      /** Window over which `failures` are counted, seconds. @defaultValue 60 */
      window_seconds: z.int().min(1).max(3_600).default(60),
      /** Longest cooldown an upstream `Retry-After` may ask for, seconds. @defaultValue 300 */
      max_seconds: z.int().min(1).max(86_400).default(300),
    })
    .default({ seconds: 30, failures: 3, window_seconds: 60, max_seconds: 300 }),
});

/** How failing deployments are taken out, in ms. */
export interface CooldownSettings {
  cooldownMs: number;
  failures: number;
  windowMs: number;
  maxCooldownMs: number;
}

/** The resolved `routing` section. */
export interface RoutingConfig {
  /** Model id -> its fallback models, in order (configured ones; a request may bring its own). */
  fallbacks: ReadonlyMap<string, readonly string[]>;
  /** Models served by more than one deployment or with fallbacks: the only ones whose requests take the routed path. */
  routedModels: ReadonlySet<string>;
  /** Providers whose failures are counted and whose cooldown API processes watch: those serving a model that has somewhere else to go. */
  cooledProviders: ReadonlySet<string>;
  cooldown: CooldownSettings;
}

/** What {@link resolveRouting} needs from the providers: model -> provider names serving it, in config order. */
export type DeploymentNames = ReadonlyMap<string, readonly string[]>;

/**
 * Checks fallbacks against the served models and derives which models and
 * providers are routed. Returns a message naming the field on error.
 */
export function resolveRouting(
  section: z.output<typeof routingSchema> | undefined,
  deployments: DeploymentNames,
): RoutingConfig | string {
  const input = section ?? routingSchema.parse({});
  const fallbacks = new Map<string, readonly string[]>();
  for (const [model, list] of Object.entries(input.fallbacks ?? {})) {
    if (!deployments.has(model)) return `routing.fallbacks.${model}: no provider serves '${model}'`;
    const unknown = list.find((m) => !deployments.has(m));
    if (unknown !== undefined) return `routing.fallbacks.${model}: no provider serves '${unknown}'`;
    if (list.includes(model)) return `routing.fallbacks.${model}: a model cannot be its own fallback`;
    if (new Set(list).size !== list.length) return `routing.fallbacks.${model}: lists a model twice`;
    fallbacks.set(model, list);
  }
  const routedModels = new Set<string>();
  for (const [model, names] of deployments) {
    if (names.length > 1 || fallbacks.has(model)) routedModels.add(model);
  }
  // A fallback target can fail too: its deployments are watched as well.
  const watched = new Set([...routedModels, ...[...fallbacks.values()].flat()]);
  const cooledProviders = new Set([...watched].flatMap((model) => deployments.get(model) ?? []));
  const { seconds, failures, window_seconds: windowSeconds, max_seconds: maxSeconds } = input.cooldown;
  return {
    fallbacks,
    routedModels,
    cooledProviders,
    cooldown: {
      cooldownMs: seconds * 1000,
      failures,
      windowMs: windowSeconds * 1000,
      maxCooldownMs: Math.max(seconds, maxSeconds) * 1000,
    },
  };
}

/** No routing at all: what a configuration without deployments or fallbacks resolves to. */
export function emptyRouting(): RoutingConfig {
  return resolveRouting(undefined, new Map()) as RoutingConfig;
}
