import type { Request, Response } from 'express';
import { SEMANTIC_CACHE_HEADER, semanticControlOf, type SemanticControl } from '../../cache/cache-control.ts';
import type { CacheLookup, ResponseCache } from '../../cache/response-cache.ts';
import type { ChatRequest } from '../../chat/types.ts';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import type { ReplyFilter } from '../../dlp/reply-filter.ts';
import { semanticCacheOn, type ProviderConfig } from '../../config/gateway-config.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import type { Admission } from '../../ratelimit/admission.ts';
import { cacheHeaders, sendCachedReply } from '../cached-reply.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { errorCodeOf, traced } from '../../observability/tracing/trace-span.ts';
import { contextOf, elapsedMs, type RequestContext } from '../request-context.ts';

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
export async function cacheStep(
  req: Request,
  res: Response,
  request: ChatRequest,
  provider: ProviderConfig,
  cache: ResponseCache | undefined,
  reply?: ReplyFilter,
): Promise<CacheMiss | undefined> {
  const context = contextOf(res);
  const owner = context.principal?.owner ?? 'anonymous';
  const gate = settleRateLimit(res);
  // Its span includes the wait for the rate-limit decision: the lookup settles with it.
  const lookup = cache ? await traced(context.span.child('cache lookup'), cache.lookup(request, owner, req.headers['cache-control'], gate, semanticControl(req, provider, request.model, context.principal?.policy?.semantic_cache))) : undefined;
  const admission = lookup?.admission ?? (await gate);
  context.cacheStatus = lookup?.status ?? 'BYPASS';
  context.span.set('gateway.cache.status', context.cacheStatus);
  if (lookup?.hit) {
    await sendCachedReply(res, request, lookup, elapsedMs(context), reply);
    return undefined;
  }
  if (lookup) res.set(cacheHeaders(lookup));
  return { lookup, admission };
}

/**
 * DLP screening in a span of its own, which counts the findings (never their
 * values); `reply` filters the reply (DLP_SCAN_REPLIES, DLP_RESTORE), absent when neither is set.
 */
export async function dlpStep(dlp: DlpGuard, request: ChatRequest, context: RequestContext): Promise<{ request: ChatRequest; reply?: ReplyFilter | undefined }> {
  const span = context.span.child('dlp');
  try {
    const screened = await dlp.screenExchangeAsync(request, context);
    if (span.recording) span.set('gateway.dlp.findings', Object.values(context.dlpFindings ?? {}).reduce((sum, n) => sum + n, 0));
    return screened;
  } catch (err) {
    span.fail(errorCodeOf(err));
    throw err;
  } finally {
    span.end();
  }
}

/** The relay of a dispatched job's reply in a span: from the job on the queue to the reply's last byte. */
export async function relayed(context: RequestContext, streamed: boolean, relay: Promise<void>): Promise<void> {
  const span = context.span.child('stream relay', { attributes: { 'gateway.streamed': streamed } });
  try {
    await relay;
  } catch (err) {
    span.fail(errorCodeOf(err));
    throw err;
  } finally {
    span.end();
  }
}

/** A signal aborted when the client leaves before its reply is complete. */
export function abortOnClose(res: Response): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}

/** The semantic-cache control of this request: the model's or else the provider's switch and the key's, then the client's `X-Semantic-Cache`. */
function semanticControl(req: Request, provider: ProviderConfig, model: string, keySwitch: boolean | undefined): SemanticControl {
  if (!semanticCacheOn(provider, model) || keySwitch === false) return { semantic: 'off' };
  const control = semanticControlOf(req.headers[SEMANTIC_CACHE_HEADER]);
  if ('error' in control) throw new InvalidRequestError(control.error);
  return control;
}
