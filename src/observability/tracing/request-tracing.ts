import type { NextFunction, Request, Response } from 'express';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
} from '@opentelemetry/semantic-conventions';
import { contextOf } from '../../pipeline/request-context.ts';
import type { EndpointLabeler } from '../endpoint-label.ts';
import type { TraceCarrier, Tracing } from './trace-span.ts';

/**
 * Middleware, mounted first among the observers and only when tracing is on:
 * opens the request's server span, as a child of the client's `traceparent`
 * when it sent a valid one, puts it on the request's context for the
 * handlers' spans (auth, rate limit, DLP, cache lookup, queue, stream relay)
 * and runs the rest of the request with it current, so log lines carry its
 * ids. The span is named and ended once the response is over: method and
 * route pattern (never the raw path), status, the gateway error code.
 */
export function traceRequests(tracing: Tracing, labeler: EndpointLabeler) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const context = contextOf(res);
    const span = tracing.start(req.method, clientContext(req), {
      kind: 'server',
      attributes: { [ATTR_HTTP_REQUEST_METHOD]: req.method, 'gateway.request_id': context.requestId },
    });
    context.span = span;
    let done = false;
    const onDone = () => {
      if (done) return;
      done = true;
      const route = labeler.label(req);
      span.rename(`${req.method} ${route}`);
      span.set(ATTR_HTTP_ROUTE, route);
      const status = !res.writableFinished && !res.headersSent ? 499 : res.statusCode;
      span.set(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      if (context.errorCode) span.set('gateway.error_code', context.errorCode);
      if (status >= 500) span.fail(context.errorCode ?? String(status));
      span.end();
    };
    res.once('finish', onDone);
    res.once('close', onDone);
    tracing.within(span, next);
  };
}

/** The client's W3C trace context, if it sent one. */
function clientContext(req: Request): TraceCarrier | undefined {
  const traceparent = req.headers.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  const tracestate = req.headers.tracestate;
  return typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent };
}
