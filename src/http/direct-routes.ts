import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * A route served by {@link directListener} without Express' router: a
 * request whose method and URL match exactly (no query string, no trailing
 * slash) runs the app's request-wide middleware and then `handler`, in
 * order. The same handler is also mounted in the Express app, which serves
 * every other spelling of the URL.
 */
export interface DirectRoute {
  method: 'POST';
  path: string;
  handler: RequestHandler;
}

/** What {@link directListener} runs for a direct route. */
export interface DirectChain {
  /** Request-wide middleware, in the order the Express app runs them. */
  before: readonly RequestHandler[];
  /** Runs when a handler calls `next()` without an error (the app's 404). */
  after: RequestHandler;
  /** The app's one error handler. */
  onError: ErrorRequestHandler;
}

/**
 * A request listener serving `routes` directly and everything else through
 * `app`. The router walks every layer for every request (path matching, URL
 * re-parsing, a closure per step): on the hot route that was a tenth of the
 * API's CPU. Handlers still get Express' request and response objects, set
 * up as `app.handle` does, so they behave the same on either path.
 */
export function directListener(app: Express, routes: readonly DirectRoute[], chain: DirectChain): RequestListener {
  const byKey = new Map(
    routes.map((route) => [`${route.method} ${route.path}`, [...chain.before, route.handler, chain.after]]),
  );
  return (req: IncomingMessage, res: ServerResponse) => {
    const handlers = byKey.size > 0 ? byKey.get(`${req.method} ${req.url}`) : undefined;
    if (!handlers) return app(req, res);
    run(app, req, res, handlers, chain.onError);
  };
}

function run(
  app: Express,
  rawReq: IncomingMessage,
  rawRes: ServerResponse,
  handlers: readonly RequestHandler[],
  onError: ErrorRequestHandler,
): void {
  // Already so when the server was created with the app's message classes.
  const req = (
    Object.getPrototypeOf(rawReq) === app.request ? rawReq : Object.setPrototypeOf(rawReq, app.request)
  ) as Request;
  const res = (
    Object.getPrototypeOf(rawRes) === app.response ? rawRes : Object.setPrototypeOf(rawRes, app.response)
  ) as Response;
  req.res = res;
  res.req = req;
  res.locals = Object.create(null) as Response['locals'];
  req.originalUrl = req.url;
  req.baseUrl = '';
  req.params = {};

  let index = 0;
  let failed = false;
  const fail = (err: unknown) => {
    // An error after the error handler ran (or inside it) can only end the response.
    if (failed) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    failed = true;
    try {
      onError(err, req, res, fail);
    } catch (thrown) {
      fail(thrown);
    }
  };
  const next: NextFunction = (err?: unknown) => {
    if (err !== undefined && err !== null && err !== 'route' && err !== 'router') return fail(err);
    const handler = handlers[index++];
    if (!handler) return;
    try {
      const ret: unknown = handler(req, res, next);
      if (ret instanceof Promise)
        ret.then(undefined, (rejected: unknown) => fail(rejected ?? new Error('Rejected promise')));
    } catch (thrown) {
      fail(thrown);
    }
  };
  next();
}
