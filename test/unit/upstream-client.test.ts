import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createUpstreamClient } from '../../src/execution/upstream-http.ts';

/** The worker's HTTP client against a real loopback server: bodies, aborts at each stage, no listener left behind. */

let onRequest: (req: IncomingMessage, res: ServerResponse) => void = () => {};
const closedRequests: string[] = [];
const server = createServer((req, res) => {
  res.on('close', () => {
    if (!res.writableFinished) closedRequests.push(req.url ?? '');
  });
  onRequest(req, res);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const client = createUpstreamClient();

afterAll(async () => {
  client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (path: string, signal: AbortSignal) =>
  client.send(
    { url: `${base}${path}`, headers: { 'content-type': 'application/json' }, body: '{"hello":"wörld"}' },
    signal,
  );

describe('upstream HTTP client', () => {
  it('sends the body and reads status, headers and a body that arrives in pieces', async () => {
    let received = '';
    onRequest = (req, res) => {
      req.setEncoding('utf8');
      req.on('data', (d: string) => (received += d));
      req.on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json', 'x-extra': 'yes' });
        res.write('{"part":');
        setTimeout(() => res.end('"two ✓"}'), 20);
      });
    };
    const signal = new AbortController().signal;
    const res = await post('/pieces', signal);
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.header('X-Extra')).toBe('yes');
    expect(await res.text()).toBe('{"part":"two ✓"}');
    expect(received).toBe('{"hello":"wörld"}');
    await expect.poll(() => getEventListeners(signal, 'abort').length).toBe(0);
  });

  it('an aborted signal fails at once, without a request', async () => {
    const controller = new AbortController();
    controller.abort();
    let requests = 0;
    onRequest = () => requests++;
    await expect(post('/never', controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(requests).toBe(0);
  });

  it('aborting before the answer destroys the request: it rejects and the upstream sees the connection go', async () => {
    onRequest = () => {}; // never answers
    const controller = new AbortController();
    const pending = post('/slow', controller.signal);
    setTimeout(() => controller.abort(), 30);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await expect.poll(() => closedRequests.includes('/slow')).toBe(true);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('aborting mid-body fails the body read instead of leaving it pending', async () => {
    onRequest = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
    };
    const controller = new AbortController();
    const res = await post('/half', controller.signal);
    const text = res.text();
    controller.abort();
    await expect(text).rejects.toThrow();
  });

  it('a connection the upstream drops mid-body fails the body read', async () => {
    onRequest = (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"cut":', () => req.socket.destroy());
    };
    const res = await post('/cut', new AbortController().signal);
    await expect(res.text()).rejects.toThrow();
  });
});
