import type { Request } from 'express';
import type { Logger } from './logger.ts';
import type { RequestSummary } from './request-summary.ts';

/**
 * The one access-log line per request. It names the key's owner, never the
 * key; it never carries headers that authenticate, bodies, or query strings
 * (which a client might put a key in). At debug level a few harmless request
 * headers are added. Only the fields below are ever written, which is why the
 * observer may log these lines without path redaction.
 */

const DEBUG_HEADERS = ['user-agent', 'content-type', 'content-length', 'accept'] as const;

/** Fields of the line, in a stable order. Durations in ms, one decimal. */
export function requestLogFields(summary: RequestSummary): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    requestId: summary.requestId,
    method: summary.method,
    path: summary.path,
    status: summary.status,
    durationMs: round1(summary.durationMs),
  };
  if (summary.owner) fields.owner = summary.owner;
  if (summary.model) fields.model = summary.model;
  if (summary.provider) fields.provider = summary.provider;
  if (summary.cacheStatus) fields.cache = summary.cacheStatus;
  if (summary.errorCode) fields.errorCode = summary.errorCode;
  if (summary.aborted) fields.aborted = true;
  // The access line is written once the response is over, outside the request's span: its ids are added here.
  if (summary.trace) {
    fields.trace_id = summary.trace.trace_id;
    fields.span_id = summary.trace.span_id;
  }
  const reply = summary.reply;
  if (reply) {
    if (reply.coalesced) fields.coalesced = true;
    if (reply.queueMs !== undefined) fields.queueMs = reply.queueMs;
    if (reply.upstreamMs !== undefined) fields.upstreamMs = reply.upstreamMs;
    if (reply.firstTokenMs !== undefined) fields.ttftMs = round1(reply.firstTokenMs);
    if (reply.promptTokens !== undefined) fields.promptTokens = reply.promptTokens;
    if (reply.completionTokens !== undefined) fields.completionTokens = reply.completionTokens;
    // Token types inside those two, only when the provider reported some (ordinary lines stay as they were).
    if (reply.cachedReadTokens !== undefined) fields.cachedTokens = reply.cachedReadTokens;
    if (reply.cacheWriteTokens !== undefined) fields.cacheWriteTokens = reply.cacheWriteTokens;
    if (reply.reasoningTokens !== undefined) fields.reasoningTokens = reply.reasoningTokens;
  }
  return fields;
}

/** Writes the line: info below 500, error from 500 up (the client saw a gateway failure). */
export function logRequest(logger: Logger, summary: RequestSummary, req: Request): void {
  const message = `${summary.method} ${summary.endpoint} ${summary.status} ${round1(summary.durationMs)}ms`;
  const level = summary.status >= 500 ? 'error' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const fields = requestLogFields(summary);
  if (logger.isLevelEnabled('debug')) {
    const headers: Record<string, string> = {};
    for (const name of DEBUG_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value.slice(0, 200);
    }
    fields.headers = headers;
    fields.endpoint = summary.endpoint;
    if (summary.reply?.terminal) fields.terminal = summary.reply.terminal;
  }
  logger[level](fields, message);
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}
