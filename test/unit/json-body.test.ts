import express from 'express';
import { connect } from 'node:net';
import { createServer, request, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { toEnvelope, type GatewayError } from '../../src/errors/catalog.ts';
import { jsonBody } from '../../src/http/json-body.ts';

// A real Express app on loopback: the reader under test, then a route echoing what it parsed.
const LIMIT = 1_000;
const app = express();
app.use(jsonBody({ limit: LIMIT }));
app.post('/echo', (req, res) => res.json({ body: req.body ?? null }));
app.use((err: GatewayError, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
  res.status(err.status).json(toEnvelope(err, 'req_test'));
});
const server: Server = await new Promise((resolve) => {
  const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
});
const port = (server.address() as { port: number }).port;

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function post(
  body: Buffer | string,
  headers: Record<string, string | number>,
): Promise<{ status: number; json: { body?: unknown; error?: { code: string; message: string } } }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/echo', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (body: string, extra: Record<string, string | number> = {}) =>
  post(body, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extra });

describe('jsonBody: the plain application/json path', () => {
  it('parses an object, with or without a UTF-8 charset, multi-byte text intact', async () => {
    expect((await json('{"a":[1,2],"t":"héllo ✓"}')).json.body).toEqual({ a: [1, 2], t: 'héllo ✓' });
    const withCharset = await json('{"a":1}', { 'content-type': 'application/json; charset=utf-8' });
    expect(withCharset.json.body).toEqual({ a: 1 });
  });

  it('drops a byte-order mark and reads an empty body as {}', async () => {
    expect((await json('\uFEFF{"bom":true}')).json.body).toEqual({ bom: true });
    expect((await json('')).json.body).toEqual({});
  });

  it('400 for invalid JSON and for JSON that is not an object or an array', async () => {
    for (const bad of ['{"a":', '"just a string"', '42', 'null']) {
      const res = await json(bad);
      expect(res.status, bad).toBe(400);
      expect(res.json.error?.message).toBe('The request body is not valid JSON.');
    }
    expect((await json('  [1]')).json.body).toEqual([1]);
  });

  it('413 when Content-Length is over the limit, without parsing', async () => {
    const res = await json(`{"x":"${'a'.repeat(LIMIT)}"}`);
    expect(res.status).toBe(413);
    expect(res.json.error?.code).toBe('request_too_large');
  });

  it('400 when the body ends short of its Content-Length', async () => {
    // Raw socket: Node's client would not send a body shorter than its header says.
    const reply = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":1}',
        );
        socket.end();
      });
      let text = '';
      socket.setEncoding('utf8').on('data', (c: string) => (text += c));
      socket.on('close', () => resolve(text));
    });
    // The body is cut short: a 400, never a parsed body or a 500.
    expect(reply).toMatch(/^HTTP\/1.1 400 /);
  });
});

describe('jsonBody: everything else goes through express.json, with the same results', () => {
  it('gzip-compressed bodies are inflated', async () => {
    const zipped = gzipSync('{"zipped":true}');
    const res = await post(zipped, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'content-length': zipped.length,
    });
    expect(res.json.body).toEqual({ zipped: true });
  });

  it('application/*+json and chunked bodies are parsed', async () => {
    expect((await json('{"plus":1}', { 'content-type': 'application/merge-patch+json' })).json.body).toEqual({
      plus: 1,
    });
    const chunked = await post('{"chunked":1}', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    expect(chunked.json.body).toEqual({ chunked: 1 });
  });

  it('413 over the limit and 400 for bad JSON on the general path too', async () => {
    const big = await post(`{"x":"${'a'.repeat(LIMIT)}"}`, {
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    });
    expect(big.status).toBe(413);
    const bad = await post('{"a":', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toBe('The request body is not valid JSON.');
  });

  it('other charsets and content types are not parsed as JSON', async () => {
    const latin = await json('{"a":1}', { 'content-type': 'application/json; charset=latin1' });
    expect(latin.status).toBe(400);
    expect((await json('{"a":1}', { 'content-type': 'text/plain' })).json.body).toBeNull();
  });
});
