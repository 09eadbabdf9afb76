import type { Response } from 'express';
import { contextOf } from '../pipeline/request-context.ts';
import type { GatewayError } from '../errors/catalog.ts';
import { corkForTurn } from '../net/cork-for-turn.ts';

/** Starts an SSE reply: status 200 and headers, sent by the end of this event-loop turn. */
export function startSse(res: Response, headers: Record<string, string> = {}): void {
  // Held for the rest of the turn, so a reply whose first entry is also its last leaves in one syscall.
  if (res.socket) corkForTurn(res.socket);
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  // Proxies such as nginx must not buffer tokens.
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.flushHeaders();
}

/** Frames written in this event-loop turn and not yet handed to the response, per response. */
const held = new WeakMap<Response, string>();

/**
 * Writes whole SSE frames. The frames of one turn (a reply-stream batch) go to
 * the response as one write at its end: a write per chunk cost a chunk header
 * and three socket buffers each.
 */
export function writeSse(res: Response, frames: string): void {
  if (frames === '') return;
  const before = held.get(res);
  held.set(res, before === undefined ? frames : before + frames);
  if (before === undefined) setImmediate(() => release(res));
}

function release(res: Response): void {
  const frames = held.get(res);
  if (frames === undefined) return;
  held.delete(res);
  if (!res.writableEnded && !res.destroyed) res.write(frames);
}

/** Ends a stream with its closing frames: cleanly, or with an error event after it started (never a clean finish). */
export function endSse(res: Response, frames: string, failed?: GatewayError): void {
  if (failed) contextOf(res).errorCode = failed.code;
  const before = held.get(res);
  held.delete(res);
  res.end(before === undefined ? frames : before + frames);
}
