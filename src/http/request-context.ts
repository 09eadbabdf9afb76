import type { Response } from 'express';
import { newContext, type RequestContext } from '../pipeline/request-context.ts';

/** Starts the context of a request (the request-id middleware, first in the chain). */
export function openContext(res: Response, requestId: string): RequestContext {
  const context = newContext(requestId);
  res.locals.ctx = context;
  return context;
}

/** The request's context. A response that never met the request-id middleware is a wiring bug, not an anonymous request. */
export function contextOf(res: Response): RequestContext {
  const context = res.locals.ctx as RequestContext | undefined;
  if (!context) throw new Error('contextOf: this response has no request context (the request-id middleware did not run)');
  return context;
}
