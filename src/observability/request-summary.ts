import type { Request, Response } from 'express';
import type { CacheStatus } from '../cache/response-cache.ts';
import { contextOf, elapsedMs } from '../pipeline/request-context.ts';
import type { EndpointLabeler } from './endpoint-label.ts';
import type { TraceIds } from './logger.ts';
import type { ReplyFacts } from '../pipeline/reply-facts.ts';

/**
 * One finished request, as the log line, the metrics and /stats see it.
 * Built from the request's context once the response is over. It holds no secret:
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
  /** The request's server span, when tracing is on. */
  trace?: TraceIds;
}

export function summarize(req: Request, res: Response, labeler: EndpointLabeler): RequestSummary {
  const context = contextOf(res);
  const summary: RequestSummary = {
    requestId: context.requestId,
    method: req.method,
    path: req.path.slice(0, 200),
    endpoint: labeler.label(req),
    // nginx's 499: the client closed the connection before any response was sent.
    status: !res.writableFinished && !res.headersSent ? 499 : res.statusCode,
    durationMs: elapsedMs(context),
    aborted: !res.writableFinished,
  };
  if (context.principal) summary.owner = context.principal.owner;
  if (context.model !== undefined) summary.model = context.model;
  if (context.provider !== undefined) summary.provider = context.provider;
  if (context.cacheStatus !== undefined) summary.cacheStatus = context.cacheStatus;
  if (context.errorCode !== undefined) summary.errorCode = context.errorCode;
  if (context.reply) summary.reply = context.reply;
  if (context.span.recording) summary.trace = context.span.ids();
  return summary;
}
