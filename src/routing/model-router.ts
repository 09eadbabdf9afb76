import type { Principal } from '../auth/principal.ts';
import type { GatewayConfig, ProviderConfig } from '../config/gateway-config.ts';
import { InvalidRequestError, ServiceUnavailableError } from '../errors/catalog.ts';
import type { CooldownView } from './cooldown-view.ts';

/** Header in which a client names its own fallback models (`none`: no fallback for this request). */
export const FALLBACKS_HEADER = 'x-gateway-fallbacks';

/** Most fallback models a client may name. */
const MAX_CLIENT_FALLBACKS = 8;

/** One deployment to try: a model and a provider entry serving it. */
export interface Candidate {
  model: string;
  provider: ProviderConfig;
}

/** Options of {@link ModelRouter}. */
export interface ModelRouterOptions {
  config: () => GatewayConfig;
  cooldowns: CooldownView;
}

/**
 * Orders the deployments a request may try: the requested model's, in a
 * weighted random order, then each fallback model's the same way; a
 * deployment in cooldown is left out. Fallbacks come from config.yaml or,
 * when the client names its own, from the request; either way only models
 * of config.yaml that the key may use, so a client never reaches anything
 * the operator did not configure.
 */
export class ModelRouter {
  private readonly options: ModelRouterOptions;

  constructor(options: ModelRouterOptions) {
    this.options = options;
  }

  /** Whether a request for `model` takes the routed path: several deployments, fallbacks, or fallbacks named by the client. */
  isRouted(model: string, clientHeader: string | string[] | undefined): boolean {
    return clientHeader !== undefined || this.options.config().routing.routedModels.has(model);
  }

  /**
   * The deployments to try for `model`, in order. 503 `service_unavailable`
   * (with `Retry-After`) when every one of them is in cooldown.
   */
  plan(model: string, principal: Principal | undefined, clientHeader: string | string[] | undefined): Candidate[] {
    const config = this.options.config();
    const fallbacks =
      clientHeader === undefined
        ? (config.routing.fallbacks.get(model) ?? []).filter((m) => mayUse(principal, m))
        : clientFallbacks(clientHeader, model, config, principal);
    const candidates: Candidate[] = [];
    let soonestBack = Infinity;
    for (const name of [model, ...fallbacks]) {
      const live: ProviderConfig[] = [];
      for (const provider of config.deployments.get(name) ?? []) {
        const remaining = this.options.cooldowns.remainingMs(provider.name);
        if (remaining > 0) soonestBack = Math.min(soonestBack, remaining);
        else live.push(provider);
      }
      for (const provider of this.weightedOrder(live)) candidates.push({ model: name, provider });
    }
    if (candidates.length === 0) {
      throw new ServiceUnavailableError(
        `Every deployment of '${model}'${fallbacks.length > 0 ? ' and of its fallbacks' : ''} is cooling down after upstream failures; retry shortly.`,
        {
          headers: { 'Retry-After': String(Math.max(1, Math.ceil(soonestBack / 1000))) },
        },
      );
    }
    return candidates;
  }

  /** Weighted sampling without replacement: the first is chosen with probability weight/total, and so on. */
  private weightedOrder(providers: ProviderConfig[]): ProviderConfig[] {
    if (providers.length < 2) return providers;
    const left = [...providers];
    const order: ProviderConfig[] = [];
    while (left.length > 0) {
      let pick = Math.random() * left.reduce((sum, p) => sum + p.weight, 0);
      let i = 0;
      while (i < left.length - 1 && pick >= (left[i] as ProviderConfig).weight)
        pick -= (left[i++] as ProviderConfig).weight;
      order.push(...left.splice(i, 1));
    }
    return order;
  }
}

/** Whether the key may use `model` (no restriction: every configured model). */
function mayUse(principal: Principal | undefined, model: string): boolean {
  return principal?.mayUseModel?.(model) ?? true;
}

/** The client's fallback list, checked: only configured models the key may use; `none` for no fallback. */
function clientFallbacks(
  header: string | string[],
  model: string,
  config: GatewayConfig,
  principal: Principal | undefined,
): string[] {
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  if (value.toLowerCase() === 'none') return [];
  const names = [...new Set(value.split(',').map((name) => name.trim()))].filter((name) => name !== model);
  if (names.length === 0 || names.includes(''))
    throw new InvalidRequestError(`${FALLBACKS_HEADER}: expected a comma-separated list of model ids, or 'none'.`);
  if (names.length > MAX_CLIENT_FALLBACKS)
    throw new InvalidRequestError(`${FALLBACKS_HEADER}: at most ${MAX_CLIENT_FALLBACKS} fallback models.`);
  for (const name of names) {
    // Model ids only, looked up in config.yaml: a URL or anything else is simply not a model here.
    if (!config.deployments.has(name) || !mayUse(principal, name)) {
      throw new InvalidRequestError(
        `${FALLBACKS_HEADER}: '${name.slice(0, 256)}' is not a model this key may use (see GET /v1/models).`,
      );
    }
  }
  return names;
}
