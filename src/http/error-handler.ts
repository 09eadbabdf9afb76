import type { NextFunction, Request, Response } from 'express';
import {
  ERROR_TABLE,
  GatewayError,
  InternalError,
  InvalidRequestError,
  NotFoundError,
  RequestTooLargeError,
  ServiceUnavailableError,
  toEnvelope,
} from '../errors/catalog.ts';
import type { Logger } from '../observability/logger.ts';
import type { Door } from '../pipeline/door.ts';
import { sendJsonText } from './json-reply.ts';
import { settleRateLimit } from './middleware/rate-limit.ts';
import { contextOf } from '../pipeline/request-context.ts';

/** Errors thrown by body-parser carry a `type`; zlib errors of a corrupt compressed body carry a `Z_*` code. */
interface BodyParserError extends Error {
  type?: string;
  status?: number;
  expose?: boolean;
  limit?: number;
  code?: string;
}

/** Maps anything thrown to a {@link GatewayError}. Unknown errors become 500 without details. */
export function toGatewayError(err: unknown, maxBodyBytes: number): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as BodyParserError;
  switch (e?.type) {
    case 'entity.too.large':
      return new RequestTooLargeError(e.limit ?? maxBodyBytes);
    case 'entity.parse.failed':
      return new InvalidRequestError('The request body is not valid JSON.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new InvalidRequestError('The request body encoding is not supported; send UTF-8 JSON.');
    case 'request.aborted':
      return new InvalidRequestError('The request was aborted by the client.');
    case 'request.size.invalid':
      return new InvalidRequestError('The request body size does not match its Content-Length.');
  }
  if (isRedisUnavailable(err)) {
    return new ServiceUnavailableError('The gateway cannot reach its Redis store; try again shortly.', { cause: err });
  }
  if (isRedisFull(err)) {
    return new ServiceUnavailableError(
      "The gateway's Redis store is full (maxmemory); it keeps what it holds and takes no new work until memory is freed.",
      { cause: err },
    );
  }
  return new InternalError(undefined, { cause: err });
}

/**
 * Any failure while reading or parsing a request body is the client's: a
 * corrupt gzip/brotli/deflate body, a bad charset, a truncated upload. Only
 * the size limit keeps its own code (413).
 */
export function bodyReadError(err: unknown, maxBodyBytes: number): GatewayError {
  const mapped = toGatewayError(err, maxBodyBytes);
  if (mapped.code !== 'internal_error') return mapped;
  const e = err as BodyParserError;
  const encoding = typeof e?.code === 'string' && (e.code.startsWith('Z_') || e.code.startsWith('ERR__ERROR'));
  return new InvalidRequestError(
    encoding
      ? 'The request body could not be decompressed; check its Content-Encoding.'
      : 'The request body could not be read.',
  );
}

/** ioredis errors when the connection is down or a command timed out. */
function isRedisUnavailable(err: unknown): boolean {
  const message = (err as Error)?.message ?? '';
  return (
    (err as Error)?.name === 'MaxRetriesPerRequestError' ||
    message.includes("Stream isn't writeable") ||
    message.includes('Connection is closed') ||
    message === 'Command timed out' ||
    message.includes('ECONNREFUSED')
  );
}

/**
 * Redis at `maxmemory` under `noeviction` refuses writes with `OOM ...`
 * (inside MULTI: `EXECABORT` with the OOM among its previous errors): a full
 * store, not a bug, so 503 rather than 500.
 */
function isRedisFull(err: unknown): boolean {
  const e = err as { message?: string; previousErrors?: Array<{ message?: string }> } | undefined;
  const oom = (message: string | undefined) => message?.startsWith('OOM ') === true;
  return oom(e?.message) || (e?.previousErrors ?? []).some((previous) => oom(previous.message));
}

/** The door whose protocol answers a path's errors; undefined for the gateway's own envelope. */
export type DoorAt = (path: string) => Door | undefined;

/** Writes an error in the envelope of the path's door (the gateway's own by default). */
function sendError(res: Response, err: GatewayError, door: Door | undefined): void {
  const context = contextOf(res);
  context.errorCode = err.code;
  const requestId = context.requestId;
  const headers = ERROR_TABLE[err.code].final ? { ...err.headers, 'x-should-retry': 'false' } : err.headers;
  if (door) {
    const { status, body } = door.error(err, requestId);
    sendJsonText(res, status, JSON.stringify(body), headers);
    return;
  }
  sendJsonText(res, err.status, JSON.stringify(toEnvelope(err, requestId)), headers);
}

/**
 * The one error handler: every error leaves the gateway through here. A rate
 * limit decision still in flight is settled first: a throttled request gets
 * its 429 whatever else went wrong, an allowed one its X-RateLimit headers.
 */
export function errorHandler(logger: Logger, maxBodyBytes: number, doorAt: DoorAt = () => undefined) {
  const render = (err: unknown, req: Request, res: Response): void => {
    const gatewayError = toGatewayError(err, maxBodyBytes);
    if (gatewayError.status >= 500) {
      logger.error({ requestId: contextOf(res).requestId, code: gatewayError.code, err }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(res, gatewayError, doorAt(req.path));
  };
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (res.headersSent) return render(err, req, res);
    settleRateLimit(res).then(
      () => render(err, req, res),
      (limited: unknown) => render(limited, req, res),
    );
  };
}

/** 404 for every unmatched route. */
export function notFoundHandler() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    next(new NotFoundError(`No route for ${req.method} ${req.path}.`));
  };
}
