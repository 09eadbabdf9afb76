import type { NextFunction, Request, Response } from 'express';
import type { EndpointLabeler } from './endpoint-label.ts';
import type { Logger } from './logger.ts';
import type { GatewayMetrics } from './metrics.ts';
import { logRequest } from './request-log.ts';
import { summarize, type RequestSummary } from './request-summary.ts';
import type { StatsStore } from './stats-store.ts';

/** Options of {@link observeRequests}. */
export interface RequestObserverOptions {
  /** Writes the access-log line. */
  logger: Logger;
  labeler: EndpointLabeler;
  /** Omit when PROMETHEUS_METRICS_ENABLED=false. */
  metrics?: GatewayMetrics;
  stats?: StatsStore;
}

/**
 * Middleware, mounted right after the request id and before authentication
 * (so 401s are seen too): once the response is over — finished or abandoned
 * by the client — it builds one {@link RequestSummary} and hands it to the
 * log, the metrics and the stats store. Nothing runs on the request path.
 */
export function observeRequests(options: RequestObserverOptions) {
  const { labeler, metrics, stats } = options;
  // The access line is built from an allow-list of fields (requestLogFields), so it skips the
  // logger's path redaction, which costs ~40 µs per line (bench: observability).
  const logger = options.logger.child({}, { redact: { paths: [] } });
  return (req: Request, res: Response, next: NextFunction): void => {
    let done = false;
    const onDone = () => {
      if (done) return;
      done = true;
      const summary = summarize(req, res, labeler);
      logRequest(logger, summary, req);
      if (metrics) recordMetrics(metrics, summary);
      stats?.recordRequest(summary);
    };
    res.once('finish', onDone);
    res.once('close', onDone);
    next();
  };
}

function recordMetrics(metrics: GatewayMetrics, summary: RequestSummary): void {
  metrics.observeRequest({ method: summary.method, endpoint: summary.endpoint, status: summary.status, seconds: summary.durationMs / 1000 });
  if (summary.model) metrics.modelRequest(summary.model, summary.status);
  // gateway_cache_hits_total is counted by the cache itself (its onLookup callback, wired in api-root).
  const reply = summary.reply;
  if (!reply || !summary.provider) return;
  // A coalesced request relays another request's job: that job's wait and tokens were counted there.
  if (!reply.coalesced && reply.queueMs !== undefined) metrics.queueWaitSeconds(summary.provider, reply.queueMs / 1000);
  if (reply.firstTokenMs !== undefined) metrics.timeToFirstTokenSeconds(summary.provider, reply.firstTokenMs / 1000);
  if (!reply.coalesced && summary.model && (reply.promptTokens !== undefined || reply.completionTokens !== undefined)) {
    metrics.tokens(summary.provider, summary.model, reply.promptTokens ?? 0, reply.completionTokens ?? 0);
  }
}
