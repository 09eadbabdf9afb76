import type { Request, Response } from 'express';
import { SEMANTIC_CACHE_HEADER, semanticControlOf, type SemanticControl } from '../../cache/cache-control.ts';
import type { CacheLookup, ResponseCache } from '../../cache/response-cache.ts';
import type { ChatRequest } from '../../chat/types.ts';
import type { ProviderConfig } from '../../config/gateway-config.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import type { Admission } from '../../ratelimit/admission.ts';
import { cacheHeaders, sendCachedReply } from '../cached-reply.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { contextOf, elapsedMs } from '../request-context.ts';

/** A miss: the lookup (to claim, track and store the reply) and the rate limiter's admission. */
export interface CacheMiss {
  lookup: CacheLookup | undefined;
  admission: Admission;
}

/**
 * The cache step of the chat pipeline: the caches answer (resolves
 * undefined, the reply is sent) or decline while the rate-limit decision
 * settles with the first cache read. Keys hash `request` as it stands
 * (redacted); `provider` decides whether the semantic cache may answer.
 */
export async function cacheStep(req: Request, res: Response, request: ChatRequest, provider: ProviderConfig, cache: ResponseCache | undefined): Promise<CacheMiss | undefined> {
  const context = contextOf(res);
  const owner = context.principal?.owner ?? 'anonymous';
  const gate = settleRateLimit(res);
  const lookup = cache ? await cache.lookup(request, owner, req.headers['cache-control'], gate, semanticControl(req, provider)) : undefined;
  const admission = lookup?.admission ?? (await gate);
  context.cacheStatus = lookup?.status ?? 'BYPASS';
  if (lookup?.hit) {
    sendCachedReply(res, request, lookup, elapsedMs(context));
    return undefined;
  }
  if (lookup) res.set(cacheHeaders(lookup));
  return { lookup, admission };
}

/** A signal aborted when the client leaves before its reply is complete. */
export function abortOnClose(res: Response): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/** The semantic-cache control of this request: the provider's switch, then the client's `X-Semantic-Cache`. */
function semanticControl(req: Request, provider: ProviderConfig): SemanticControl {
  if (!provider.semantic_cache) return { semantic: 'off' };
  const control = semanticControlOf(req.headers[SEMANTIC_CACHE_HEADER]);
  if ('error' in control) throw new InvalidRequestError(control.error);
  return control;
}
