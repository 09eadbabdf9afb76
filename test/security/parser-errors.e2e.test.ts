import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * Requests Node's HTTP parser rejects before Express sees them (bad framing,
 * oversized headers, not HTTP at all), sent over raw TCP to a real API
 * process: the answer is the error envelope in a complete HTTP/1.1 response,
 * and the connection is closed.
 */

const KEY = 'gw_parser_errors_key_0123456789';
const prefix = uniquePrefix('parser-errors');
const redis = testRedis();
let gateway: Gateway;

beforeAll(async () => {
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'unused',
      SEMANTIC_CACHE_ENABLED: 'false',
      DLP_ENABLED: 'false',
    },
    config: {
      providers: [
        { name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: 'http://127.0.0.1:9/v1', models: ['a-4o'] },
      ],
    },
    providers: [],
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

interface RawReply {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection. */
  closed: boolean;
}

/** Writes `bytes` on a new connection and reads until the server closes it (or 3 s pass). */
function raw(bytes: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(gateway.port, '127.0.0.1');
    let received = '';
    let closed = false;
    const done = () => {
      clearTimeout(timer);
      const [head = '', ...rest] = received.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ statusLine, headers, body: rest.join('\r\n\r\n'), closed });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, 3_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('end', () => {
      closed = true;
      socket.destroy();
    });
    socket.on('close', () => {
      closed = true;
      done();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
    socket.write(bytes, 'latin1');
  });
}

function expectEnvelope(reply: RawReply, status: string, code: string): void {
  expect(reply.statusLine).toBe(`HTTP/1.1 ${status}`);
  expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(Number(reply.headers['content-length'])).toBe(Buffer.byteLength(reply.body));
  expect(reply.headers.connection).toBe('close');
  const envelope = JSON.parse(reply.body) as {
    error: { code: string; type: string; message: string };
    timestamp: string;
    request_id: string;
  };
  expect(envelope.error.code).toBe(code);
  expect(envelope.error.type).toBe('invalid_request_error');
  expect(envelope.error.message.length).toBeGreaterThan(0);
  expect(envelope.request_id).toMatch(/^req_[0-9a-f]{32}$/);
  expect(reply.headers['x-request-id']).toBe(envelope.request_id);
  expect(new Date(envelope.timestamp).toISOString()).toBe(envelope.timestamp);
  expect(reply.closed).toBe(true);
}

describe('HTTP parser errors get the error envelope', () => {
  it('Content-Length together with Transfer-Encoding (request smuggling framing): 400 invalid_request', async () => {
    const reply = await raw(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    );
    expectEnvelope(reply, '400 Bad Request', 'invalid_request');
  });

  it('a malformed chunk in the body of a request being served: 400 invalid_request at once, not a hang', async () => {
    const started = Date.now();
    const reply = await raw(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nzz\r\n`,
    );
    expectEnvelope(reply, '400 Bad Request', 'invalid_request');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a request line that is not HTTP: 400 invalid_request', async () => {
    expectEnvelope(await raw('BREW /coffee HTCPCP/1.0\r\n\r\n'), '400 Bad Request', 'invalid_request');
  });

  it('a header with a character HTTP forbids: 400 invalid_request', async () => {
    expectEnvelope(
      await raw('GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Bad Header: 1\r\n\r\n'),
      '400 Bad Request',
      'invalid_request',
    );
  });

  it('headers over the size limit: 431 headers_too_large', async () => {
    const reply = await raw(
      `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\nX-Padding: ${'a'.repeat(200_000)}\r\n\r\n`,
    );
    expectEnvelope(reply, '431 Request Header Fields Too Large', 'headers_too_large');
  });

  it('the connection still serves well-formed requests before the bad one', async () => {
    const reply = await raw(
      `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEY}\r\n\r\nBREW /coffee HTCPCP/1.0\r\n\r\n`,
    );
    expect(reply.statusLine).toBe('HTTP/1.1 200 OK');
    // The second reply follows the first on the same connection, in the envelope.
    const second = reply.body.slice(reply.body.indexOf('HTTP/1.1 400'));
    expect(second).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(second).toContain('"code":"invalid_request"');
    expect(reply.closed).toBe(true);
  });
});
