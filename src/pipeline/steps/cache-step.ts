import { semanticControlOf, type SemanticControl } from '../../cache/cache-control.ts';
import { responsesPromptOf, type ResponsesKeying } from '../../cache/cache-key.ts';
import type { ResponseCache } from '../../cache/response-cache.ts';
import { semanticCacheOn } from '../../config/gateway-config.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import { traced } from '../../observability/tracing/trace-span.ts';
import type { Answerer, Exchange } from '../exchange.ts';
import { cacheHeaders } from '../gateway-headers.ts';
import { screenedBody } from '../screened-body.ts';

/**
 * The caches answer (resolves true: the answerer sent the hit) or decline
 * while the rate-limit decision settles with the first cache read. Keys hash
 * the request as it stands (redacted); the provider's and model's switches,
 * the key's and the client's `X-Semantic-Cache` decide whether the semantic
 * cache may answer (never for embeddings). A detached request that resumes an enqueued job skips the
 * caches: its reply is already on the way. A native Responses request is
 * keyed on its body as DLP left it, and only with `store: false`: a stored
 * response is the upstream's state, which a replay could not continue
 * (docs/decisions/native-responses-cache-and-fallbacks.md).
 */
export async function cacheStep(
  exchange: Exchange,
  cache: ResponseCache | undefined,
  answerer: Answerer,
): Promise<boolean> {
  const { context } = exchange;
  const kind = exchange.kind;
  const upstreamState = kind?.type === 'responses' && kind.body.store !== false;
  if (!cache || exchange.detached?.resumeJobId || upstreamState) {
    exchange.admission = await exchange.gate;
    context.cacheStatus = 'BYPASS';
    if (cache && upstreamState) exchange.header('X-Cache', 'BYPASS');
    return false;
  }
  const owner = exchange.principal?.owner ?? 'anonymous';
  const embeddings = kind?.type === 'embeddings' ? kind.shape : undefined;
  const responses = kind?.type === 'responses' ? responsesKeying(exchange) : undefined;
  // Two texts that mean the same have different vectors: only the exact cache answers embeddings.
  const control = embeddings ? SEMANTIC_OFF : semanticControl(exchange);
  // Its span includes the wait for the rate-limit decision: the lookup settles with it.
  const lookup = await traced(
    context.span.child('cache lookup'),
    cache.lookup(exchange.request, owner, exchange.hints.cacheControl, exchange.gate, control, embeddings, responses),
  );
  exchange.admission = lookup.admission;
  context.cacheStatus = lookup.status;
  context.span.set('gateway.cache.status', lookup.status);
  for (const [name, value] of Object.entries(cacheHeaders(lookup))) exchange.header(name, value);
  if (lookup.hit) {
    await answerer.hit(exchange, lookup);
    return true;
  }
  exchange.lookup = lookup;
  return false;
}

const SEMANTIC_OFF: SemanticControl = { semantic: 'off' };

function semanticControl(exchange: Exchange): SemanticControl {
  const provider = exchange.provider;
  if (
    (provider && !semanticCacheOn(provider, exchange.request.model)) ||
    exchange.principal?.policy?.semantic_cache === false
  )
    return { semantic: 'off' };
  const control = semanticControlOf(exchange.hints.semantic);
  if ('error' in control) throw new InvalidRequestError(control.error);
  return control;
}

/** A native Responses request's keying: its body with the texts DLP screened, and its prompt. */
function responsesKeying(exchange: Exchange): ResponsesKeying {
  const body = screenedBody(exchange);
  const prompt = responsesPromptOf(body);
  return prompt ? { body, prompt } : { body };
}
