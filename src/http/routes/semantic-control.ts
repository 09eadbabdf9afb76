import type { Request } from 'express';
import { SEMANTIC_CACHE_HEADER, semanticControlOf, type SemanticControl } from '../../cache/cache-control.ts';
import type { ProviderConfig } from '../../config/gateway-config.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';

/** The semantic-cache control of this request: the provider's switch, then the client's `X-Semantic-Cache`. */
export function semanticControl(req: Request, provider: ProviderConfig): SemanticControl {
  if (!provider.semantic_cache) return { semantic: 'off' };
  const control = semanticControlOf(req.headers[SEMANTIC_CACHE_HEADER]);
  if ('error' in control) throw new InvalidRequestError(control.error);
  return control;
}
