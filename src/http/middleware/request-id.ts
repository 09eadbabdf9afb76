import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/** An incoming X-Request-Id is honoured only when it looks like an id. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Sets `res.locals.requestId` and the `X-Request-Id` response header. */
export function requestId() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replaceAll('-', '')}`;
    res.locals.requestId = id;
    res.locals.startedAt = performance.now();
    res.setHeader('X-Request-Id', id);
    next();
  };
}
