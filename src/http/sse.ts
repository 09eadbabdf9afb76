import type { Response } from 'express';
import { toEnvelope, type GatewayError } from '../errors/catalog.ts';

/** Starts an SSE reply: status 200 and headers, flushed at once. */
export function startSse(res: Response, headers: Record<string, string> = {}): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  // Proxies such as nginx must not buffer tokens.
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.flushHeaders();
}

export function writeSseData(res: Response, data: string): void {
  res.write(`data: ${data}\n\n`);
}

/** Ends a stream cleanly. */
export function endSse(res: Response): void {
  res.end('data: [DONE]\n\n');
}

/** Ends a stream that failed after it started: an `error` event in the envelope's shape, no `[DONE]`. */
export function failSse(res: Response, err: GatewayError): void {
  res.locals.errorCode = err.code;
  const envelope = toEnvelope(err, String(res.locals.requestId ?? 'unknown'));
  res.end(`event: error\ndata: ${JSON.stringify(envelope)}\n\n`);
}
