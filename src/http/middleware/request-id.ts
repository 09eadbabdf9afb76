import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { openContext } from '../../pipeline/request-context.ts';

/** An incoming X-Request-Id is honoured only when it looks like an id. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A new request id: `req_` and 32 hex digits. */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/** Opens the request's context with its id, and sets the `X-Request-Id` response header. */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : newRequestId();
    openContext(res, id);
    res.setHeader('X-Request-Id', id);
    next();
  };
}
