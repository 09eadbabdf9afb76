import type { ChatDispatcher } from '../../queue/chat-dispatcher.ts';
import type { CooldownView } from '../../routing/cooldown-view.ts';
import type { ModelRouter } from '../../routing/model-router.ts';
import type { Exchange } from '../exchange.ts';
import { DROPPED_PARAMS_HEADER, MODEL_HEADER } from '../gateway-headers.ts';

/** Deployments, cooldowns and fallbacks (config.yaml `routing`). */
export interface Routing {
  router: ModelRouter;
  cooldowns: CooldownView;
  /** Called when a fallback model answered instead of the requested one (a metric). */
  onFallback?: (requested: string, answered: string) => void;
}

/**
 * Matches the request to its provider. A model with several deployments or
 * fallbacks gets the deployments to try in order (the dispatch step tries
 * them); any other model its one provider, without the parameters that
 * provider drops; an embeddings request the provider of its embedding model;
 * a native Responses request the same (the dispatch step sends each
 * deployment the job it can take). `X-Gateway-Model` names the requested model until another answers.
 */
export function routeStep(exchange: Exchange, dispatcher: ChatDispatcher, routing: Routing | undefined): void {
  const model = exchange.request.model;
  // One set lookup decides: models without deployments or fallbacks take the plain path.
  if (exchange.kind?.type === 'embeddings') {
    // Embedding models have no deployments or fallbacks, nor parameters to drop.
    exchange.provider = dispatcher.routeEmbeddings(model);
  } else if (routing?.router.isRouted(model, exchange.hints.fallbacks)) {
    const candidates = routing.router.plan(model, exchange.principal, exchange.hints.fallbacks);
    exchange.candidates = candidates;
    exchange.provider = (candidates[0] as (typeof candidates)[number]).provider;
  } else {
    const routed = dispatcher.route(exchange.request);
    exchange.provider = routed.provider;
    exchange.request = routed.request;
    if (routed.dropped.length > 0) exchange.header(DROPPED_PARAMS_HEADER, routed.dropped.join(', '));
  }
  const { context } = exchange;
  context.model = model;
  context.provider = exchange.provider.name;
  exchange.header(MODEL_HEADER, model);
  context.span.set('gateway.model', model);
  context.span.set('gateway.provider', exchange.provider.name);
}
