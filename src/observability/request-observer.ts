import type { NextFunction, Request, Response } from 'express';
import { countsOf } from '../chat/token-usage.ts';
import { pricedCounts } from '../usage/key-governor.ts';
import { costNanoUsd, promptCacheSavingNanoUsd, type PriceTable } from '../usage/price-table.ts';
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
  /** The price table in force (config.yaml `prices`), for the saved spend of `/stats`; without it nothing is counted as saved. */
  prices?: () => PriceTable;
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
      if (stats && options.prices) recordSavings(stats, options.prices(), summary);
    };
    res.once('finish', onDone);
    res.once('close', onDone);
    next();
  };
}

function recordMetrics(metrics: GatewayMetrics, summary: RequestSummary): void {
  metrics.observeRequest({
    method: summary.method,
    endpoint: summary.endpoint,
    status: summary.status,
    seconds: summary.durationMs / 1000,
  });
  if (summary.model) metrics.modelRequest(summary.model, summary.status);
  // gateway_cache_hits_total is counted by the cache itself (its onLookup callback, wired in api-root).
  const reply = summary.reply;
  if (!reply || !summary.provider) return;
  // A coalesced request relays another request's job: that job's wait and tokens were counted there.
  if (!reply.coalesced && reply.queueMs !== undefined) metrics.queueWaitSeconds(summary.provider, reply.queueMs / 1000);
  if (reply.firstTokenMs !== undefined) metrics.timeToFirstTokenSeconds(summary.provider, reply.firstTokenMs / 1000);
  if (!reply.coalesced && summary.model && (reply.promptTokens !== undefined || reply.completionTokens !== undefined)) {
    const details = {
      cachedRead: reply.cachedReadTokens ?? 0,
      cacheWrite: reply.cacheWriteTokens ?? 0,
      reasoning: reply.reasoningTokens ?? 0,
    };
    metrics.tokens(summary.provider, summary.model, reply.promptTokens ?? 0, reply.completionTokens ?? 0, details);
  }
}

/**
 * Saved spend for /stats: a reply from the gateway's cache saves what it
 * cost when it was produced; a provider's prompt cache saves what its cached
 * reads did not cost, less the premium of its writes. Counted once per call
 * (a coalesced request's tokens belong to its leader).
 */
function recordSavings(stats: StatsStore, prices: PriceTable, summary: RequestSummary): void {
  const model = summary.model;
  if (model === undefined) return;
  if (summary.cacheHitUsage) {
    stats.recordSavings({
      gatewayCacheNanoUsd: costNanoUsd(prices, model, countsOf(summary.cacheHitUsage)),
      gatewayCacheTokens: summary.cacheHitUsage.total_tokens,
    });
    return;
  }
  const reply = summary.reply;
  if (!reply || reply.coalesced || (reply.cachedReadTokens === undefined && reply.cacheWriteTokens === undefined))
    return;
  const counts = pricedCounts({
    ...reply,
    promptTokens: reply.promptTokens ?? 0,
    completionTokens: reply.completionTokens ?? 0,
  });
  stats.recordSavings({
    promptCacheNanoUsd: promptCacheSavingNanoUsd(prices, model, counts),
    promptCacheReadTokens: counts.cachedRead ?? 0,
    promptCacheWriteTokens: counts.cacheWrite ?? 0,
  });
}
