import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { StaticKeyAuthenticator } from '../../src/auth/static-key-authenticator.ts';
import { createApp } from '../../src/http/app.ts';
import { contextOf } from '../../src/pipeline/request-context.ts';
import type { Untyped } from '../support/untyped.ts';

// The real app factory on loopback with one direct route. An observer records, once each reply is
// over, whether Express' router dispatched the request (it sets req.route; the direct path does not).
const KEY = 'gw_direct_route_test_key_0123456789abcdef';
const served: { url: string; routed: boolean }[] = [];
const observer = (req: Request, res: Response, next: NextFunction) => {
  res.once('finish', () => served.push({ url: req.url, routed: req.route !== undefined }));
  next();
};
const guard = (_req: Request, res: Response, next: NextFunction) => {
  res.locals.guarded = true;
  next();
};
const handler = async (req: Request, res: Response, next: NextFunction) => {
  const body = req.body as { act?: string };
  if (body.act === 'throw') throw new Error('thrown in the handler');
  if (body.act === 'reject') return Promise.reject(new Error('rejected in the handler'));
  if (body.act === 'next') return next();
  res.json({
    body,
    path: req.path,
    guarded: res.locals.guarded === true,
    requestId: contextOf(res).requestId,
    appPrototypes: Object.getPrototypeOf(req) === http.app.request && Object.getPrototypeOf(res) === http.app.response,
  });
};
const http = createApp({
  logger: pino({ level: 'silent' }),
  authenticator: new StaticKeyAuthenticator([KEY], []),
  publicPaths: [],
  maxBodyBytes: 1024,
  observers: [observer],
  guards: [guard],
  directRoutes: [{ method: 'POST', path: '/v1/direct', handler }],
  routers: [],
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}
const server = http.createServer();
const base = await listen(server);
// Without the message classes the listener must set the prototypes itself.
const plainServer = createServer(http.listener);
const plainBase = await listen(plainServer);

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await new Promise<void>((resolve) => plainServer.close(() => resolve()));
});

async function post(url: string, body: string, headers: Record<string, string> = { 'x-api-key': KEY }) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(5000),
  });
  return {
    status: res.status,
    json: (await res.json()) as Record<string, Untyped>,
    requestId: res.headers.get('x-request-id'),
  };
}

function lastServed(url: string) {
  return served.filter((s) => s.url === url).at(-1);
}

describe('direct routes', () => {
  it('serve the exact URL through the app middleware, in order, without the router', async () => {
    const res = await post(`${base}/v1/direct`, '{"n":1}');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      body: { n: 1 },
      path: '/v1/direct',
      guarded: true,
      requestId: res.requestId,
      appPrototypes: true,
    });
    expect(res.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(lastServed('/v1/direct')).toEqual({ url: '/v1/direct', routed: false });
  });

  it('leave other spellings of the URL to Express, which serves them with the same handler', async () => {
    for (const url of ['/v1/direct?x=1', '/v1/direct/', '/V1/Direct']) {
      const res = await post(`${base}${url}`, '{"n":2}');
      expect(res.status, url).toBe(200);
      expect(res.json.body).toEqual({ n: 2 });
      expect(res.json.guarded).toBe(true);
      expect(lastServed(url)).toEqual({ url, routed: true });
    }
  });

  it('set up the request and response as Express does when the server has plain Node classes', async () => {
    const res = await post(`${plainBase}/v1/direct`, '{"n":3}');
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ body: { n: 3 }, path: '/v1/direct', guarded: true, appPrototypes: true });
  });

  it('render middleware errors through the one error handler', async () => {
    const unauthenticated = await post(`${base}/v1/direct`, '{}', {});
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.json.error.code).toBe('invalid_api_key');
    const badJson = await post(`${base}/v1/direct`, '{"n":');
    expect(badJson.status).toBe(400);
    expect(badJson.json.error).toMatchObject({
      code: 'invalid_request',
      message: 'The request body is not valid JSON.',
    });
    const tooLarge = await post(`${base}/v1/direct`, JSON.stringify({ pad: 'x'.repeat(2000) }));
    expect(tooLarge.status).toBe(413);
  });

  it('turn a thrown error or a rejected promise of the handler into a 500 envelope, and next() into a 404', async () => {
    for (const act of ['throw', 'reject']) {
      const res = await post(`${base}/v1/direct`, JSON.stringify({ act }));
      expect(res.status, act).toBe(500);
      expect(res.json.error.code).toBe('internal_error');
      expect(JSON.stringify(res.json)).not.toContain('in the handler');
      expect(res.json.request_id).toBe(res.requestId);
    }
    const fellThrough = await post(`${base}/v1/direct`, JSON.stringify({ act: 'next' }));
    expect(fellThrough.status).toBe(404);
    expect(fellThrough.json.error.code).toBe('not_found');
  });

  it('come with server options whose requests and responses are born with the app prototypes', () => {
    const { IncomingMessage: AppRequest, ServerResponse: AppResponse } = http.serverOptions;
    if (!AppRequest || !AppResponse) throw new Error('no message classes');
    const req = new AppRequest(new Socket());
    const res = new AppResponse(req);
    expect(Object.getPrototypeOf(req)).toBe(http.app.request);
    expect(Object.getPrototypeOf(res)).toBe(http.app.response);
    expect(req).toBeInstanceOf(IncomingMessage);
    expect(res).toBeInstanceOf(ServerResponse);
    expect(req.readable).toBe(true);
  });

  it('do not take other methods of the same URL', async () => {
    const res = await fetch(`${base}/v1/direct`, { headers: { 'x-api-key': KEY } });
    // Had the listener taken it, the handler would have answered 200.
    expect(res.status).toBe(404);
  });
});
