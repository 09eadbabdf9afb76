import type { Response } from 'express';
import { contextOf } from '../pipeline/request-context.ts';
import type { GatewayError } from '../errors/catalog.ts';
import { corkForTurn } from '../net/cork-for-turn.ts';

/**
 * Holds the writes to this client's socket for the rest of the event-loop
 * turn: the headers leave with the first chunk, and every chunk of one
 * reply-stream batch together. Node uncorks a response's socket on the next
 * tick, which between two awaited chunks means one syscall per chunk.
 */
function coalesceTurn(res: Response): void {
  if (res.socket) corkForTurn(res.socket);
}

/** Starts an SSE reply: status 200 and headers, sent by the end of this event-loop turn. */
export function startSse(res: Response, headers: Record<string, string> = {}): void {
  coalesceTurn(res);
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  // Proxies such as nginx must not buffer tokens.
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.flushHeaders();
}

/** Writes whole SSE frames. */
export function writeSse(res: Response, frames: string): void {
  if (frames === '') return;
  coalesceTurn(res);
  res.write(frames);
}

/** Ends a stream with its closing frames: cleanly, or with an error event after it started (never a clean finish). */
export function endSse(res: Response, frames: string, failed?: GatewayError): void {
  if (failed) contextOf(res).errorCode = failed.code;
  res.end(frames);
}
