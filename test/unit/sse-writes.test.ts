import express from 'express';
import { createServer, request, type Server } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { endSse, startSse, writeSse } from '../../src/http/sse.ts';

// A real Express server on loopback: the route writes an SSE reply in two turns, recording the
// state of its socket, and the client records when each part arrives.
const seen: { corkedAfterStart?: number; corkedAfterChunks?: number; corkedNextTurn?: number } = {};
const app = express();
app.get('/sse', (_req, res) => {
  startSse(res, { 'X-Test': 'yes' });
  seen.corkedAfterStart = res.socket?.writableCorked;
  writeSse(res, 'data: {"n":1}\n\n');
  writeSse(res, 'data: {"n":2}\n\n');
  seen.corkedAfterChunks = res.socket?.writableCorked;
  setImmediate(() => {
    seen.corkedNextTurn = res.socket?.writableCorked;
    // The rest comes much later: what was written in the first turn must not wait for it.
    setTimeout(() => {
      writeSse(res, 'data: {"n":3}\n\n');
      endSse(res, 'data: [DONE]\n\n');
    }, 300);
  });
});
const server: Server = await new Promise((resolve) => {
  const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
});
const port = (server.address() as { port: number }).port;

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('SSE writes', () => {
  it('send the headers and a turn’s chunks together, and nothing later than the end of that turn', async () => {
    const started = performance.now();
    const arrivals: { at: number; text: string }[] = [];
    const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/sse' }, (res) => {
        res.setEncoding('utf8').on('data', (text: string) => arrivals.push({ at: performance.now() - started, text }));
        res.on('end', () => resolve(res.headers));
      });
      req.on('error', reject);
      req.end();
    });
    expect(headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(headers['x-test']).toBe('yes');
    // Held while the turn lasts, released when it ends.
    expect(seen.corkedAfterStart).toBeGreaterThan(0);
    expect(seen.corkedAfterChunks).toBeGreaterThan(0);
    expect(seen.corkedNextTurn).toBe(0);
    const body = arrivals.map((a) => a.text).join('');
    expect(body).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: {"n":3}\n\ndata: [DONE]\n\n');
    // The first turn's chunks arrived long before the later ones were even written.
    const firstTwo = arrivals.find((a) => a.text.includes('{"n":2}'));
    expect(firstTwo?.at).toBeLessThan(250);
  });
});
