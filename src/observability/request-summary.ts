import type { Request, Response } from 'express';
import type { Principal } from '../auth/principal.ts';
import type { EndpointLabeler } from './endpoint-label.ts';
import type { ReplyFacts } from './reply-facts.ts';

/** Cache outcome of a chat completion (`res.locals.cacheStatus`, set by the cache). */
export type CacheStatus = 'HIT' | 'SEMANTIC_HIT' | 'MISS' | 'BYPASS';

const CACHE_STATUSES = new Set<string>(['HIT', 'SEMANTIC_HIT', 'MISS', 'BYPASS']);

/**
 * One finished request, as the log line, the metrics and /stats see it.
 * Built from `res.locals` once the response is over. It holds no secret:
 * the caller appears as the key's owner, never as the key.
 */
export interface RequestSummary {
  requestId: string;
  method: string;
  /** Raw path without the query string, truncated to 200 characters (logs only). */
  path: string;
  /** Route pattern (bounded; metrics). */
  endpoint: string;
  /** HTTP status; 499 when the client left before the response started. */
  status: number;
  durationMs: number;
  /** The client went away before the response ended. */
  aborted: boolean;
  /** Key owner; absent on public paths and rejected keys. */
  owner?: string;
  model?: string;
  provider?: string;
  cacheStatus?: CacheStatus;
  errorCode?: string;
  /** Present when the request went through a provider queue. */
  reply?: ReplyFacts;
}

export function summarize(req: Request, res: Response, labeler: EndpointLabeler): RequestSummary {
  const locals = res.locals;
  const principal = locals.principal as Principal | undefined;
  const summary: RequestSummary = {
    requestId: String(locals.requestId ?? ''),
    method: req.method,
    path: req.path.slice(0, 200),
    endpoint: labeler.label(req),
    // nginx's 499: the client closed the connection before any response was sent.
    status: !res.writableFinished && !res.headersSent ? 499 : res.statusCode,
    durationMs: performance.now() - ((locals.startedAt as number | undefined) ?? performance.now()),
    aborted: !res.writableFinished,
  };
  if (principal) summary.owner = principal.owner;
  if (typeof locals.model === 'string') summary.model = locals.model;
  if (typeof locals.provider === 'string') summary.provider = locals.provider;
  if (typeof locals.cacheStatus === 'string' && CACHE_STATUSES.has(locals.cacheStatus)) summary.cacheStatus = locals.cacheStatus as CacheStatus;
  if (typeof locals.errorCode === 'string') summary.errorCode = locals.errorCode;
  if (locals.reply) summary.reply = locals.reply as ReplyFacts;
  return summary;
}
