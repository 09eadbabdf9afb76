import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpResponseReader } from '../../bench/support/http-response-reader.ts';
import { runLoad } from '../../bench/support/load.ts';

// The benchmarks' load generator reads responses off raw sockets; these tests
// hold its parser and its numbers against Node's own HTTP server.

/** Raw bytes of one response as Node's server writes them. */
async function capture(handler: (res: ServerResponse) => void | Promise<void>): Promise<Buffer> {
  const server = createServer((_req, res) => void handler(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  const parts: Buffer[] = [];
  socket.on('data', (d: Buffer) => parts.push(d));
  socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  await new Promise((resolve) => socket.on('close', resolve));
  server.close();
  return Buffer.concat(parts);
}

describe('HttpResponseReader', () => {
  let json: Buffer;
  let sse: Buffer;
  let empty: Buffer;

  beforeAll(async () => {
    json = await capture((res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'content-length': '15' });
      res.end('{"error":"slow"}'.slice(0, 15));
    });
    sse = await capture(async (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const word of ['one', 'two', 'three']) {
        res.write(`data: ${word}\n\n`);
        await sleep(5);
      }
      res.end('data: [DONE]\n\n');
    });
    empty = await capture((res) => {
      res.writeHead(204);
      res.end();
    });
  });

  it('reads a Content-Length response in one piece: status, first byte, connection close', () => {
    const reader = new HttpResponseReader();
    expect(reader.feed(json, 7)).toEqual({ status: 429, firstByteAt: 7, closes: true });
  });

  it('reads a chunked stream whatever the packet boundaries, dating the first body byte', () => {
    expect(sse.toString('latin1')).toContain('Transfer-Encoding: chunked');
    const headEnd = sse.indexOf('\r\n\r\n') + 4;
    const firstData = sse.indexOf('data: one');
    for (let size = 1; size <= 40; size++) {
      const reader = new HttpResponseReader();
      let result;
      for (let at = 0; at < sse.length; at += size) {
        const piece = sse.subarray(at, Math.min(at + size, sse.length));
        // Each piece is "received" at its offset, so the first body byte's time is checkable.
        const got = reader.feed(piece, at + 1);
        if (got) {
          expect(at + size).toBeGreaterThanOrEqual(sse.length);
          result = got;
        }
      }
      expect(result?.status).toBe(200);
      // The chunk-size line precedes the first data byte: the first body byte is in the piece holding "data: one" or earlier, never in the head.
      expect(result?.firstByteAt).toBeGreaterThan(Math.floor((headEnd - 1) / size) * size);
      expect(result?.firstByteAt).toBeLessThanOrEqual(firstData + 1);
    }
  });

  it('dates an empty body at the end of the head', () => {
    const reader = new HttpResponseReader();
    expect(reader.feed(empty, 3)).toEqual({ status: 204, firstByteAt: 3, closes: true });
  });

  it('reads two responses in a row on one connection', () => {
    const reader = new HttpResponseReader();
    const keepAlive = Buffer.from(
      json.toString('latin1').replace('Connection: close', 'Connection: keep-alive'),
      'latin1',
    );
    expect(reader.feed(keepAlive, 1)).toEqual({ status: 429, firstByteAt: 1, closes: false });
    expect(reader.feed(sse, 2)?.status).toBe(200);
  });

  it('refuses bytes after a complete response and responses without framing', () => {
    expect(() => new HttpResponseReader().feed(Buffer.concat([json, Buffer.from('x')]), 1)).toThrow(
      /after a complete response/,
    );
    expect(() =>
      new HttpResponseReader().feed(Buffer.from('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhello'), 1),
    ).toThrow(/without Content-Length/);
  });
});

describe('runLoad against a real server', () => {
  let server: Server;
  let url: string;
  let seen = 0;

  beforeAll(async () => {
    const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      let body = '';
      for await (const chunk of req) body += chunk;
      seen++;
      const { stream, fail } = JSON.parse(body) as { stream?: boolean; fail?: boolean };
      if (fail) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"busy"}');
      } else if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
        await sleep(20);
        res.end('data: [DONE]\n\n');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: body.length }));
      }
    };
    server = createServer((req, res) => void answer(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/chat`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('counts every request the server saw, on as many keep-alive connections as asked', async () => {
    seen = 0;
    const sockets = new Set<string>();
    server.on('connection', (s) => sockets.add(`${s.remotePort}`));
    const result = await runLoad({
      url,
      body: (i) => JSON.stringify({ i }),
      connections: 4,
      durationMs: 300,
      warmupMs: 100,
    });
    expect(result.errors).toBe(0);
    expect(result.finished).toBe(seen);
    expect(result.requests).toBeGreaterThan(10);
    expect(result.requests).toBeLessThanOrEqual(result.finished);
    expect(sockets.size).toBe(4);
    expect(result.statuses).toEqual({});
  });

  it('times the first streamed chunk apart from the end of the stream', async () => {
    const result = await runLoad({
      url,
      body: JSON.stringify({ stream: true }),
      connections: 2,
      durationMs: 300,
      warmupMs: 50,
    });
    expect(result.errors).toBe(0);
    expect(result.latency.p50).toBeGreaterThanOrEqual(19);
    expect(result.ttfb.p50).toBeLessThan(result.latency.p50 - 10);
  });

  it('reports non-2xx statuses, and a dead server as errors, without hanging', async () => {
    const failing = await runLoad({
      url,
      body: JSON.stringify({ fail: true }),
      connections: 2,
      durationMs: 200,
      warmupMs: 0,
    });
    expect(failing.statuses[503]).toBe(failing.requests);
    expect(failing.requests).toBeGreaterThan(0);
    const dead = await runLoad({
      url: 'http://127.0.0.1:1/chat',
      body: '{}',
      connections: 2,
      durationMs: 100,
      warmupMs: 0,
    });
    expect(dead.requests).toBe(0);
    expect(dead.errors).toBeGreaterThan(0);
  });

  it('counts a server that never answers as errors after the reply timeout', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const started = performance.now();
    const result = await runLoad({
      url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`,
      body: '{}',
      connections: 2,
      durationMs: 100,
      warmupMs: 0,
      replyTimeoutMs: 300,
    });
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
    expect(result.errors).toBe(2);
    expect(result.requests).toBe(0);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
