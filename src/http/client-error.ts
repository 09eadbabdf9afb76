import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  GatewayError,
  HeadersTooLargeError,
  InvalidRequestError,
  RequestTimeoutError,
  toEnvelope,
} from '../errors/catalog.ts';
import type { Logger } from '../observability/logger.ts';
import { newRequestId } from './middleware/request-id.ts';

/** What the parser's error codes mean to the client. */
function errorFor(code: string | undefined): GatewayError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new HeadersTooLargeError();
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('request_too_large', 'The chunk extensions of the request body are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeoutError();
    default:
      return new InvalidRequestError(
        'The request is not valid HTTP/1.1 (malformed request line, headers or body framing).',
      );
  }
}

/** The response Node is writing on a socket, if any (`socket._httpMessage`, what Node's own handler checks). */
function responseOn(socket: Duplex): ServerResponse | null | undefined {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
}

/**
 * The server's `clientError` listener. Errors of Node's HTTP parser (bad
 * framing, oversized headers, a request that took too long to arrive) never
 * reach Express; Node would answer them with a bare status line. This answers
 * with the error envelope instead: a complete HTTP/1.1 response with a new
 * request id, then closes the connection, since the parser cannot tell where
 * the next request would start. A response to an earlier request of the same
 * connection is let finish first (writing into it would corrupt it); a
 * request whose own body is malformed (a bad chunk) gets this answer at once
 * if its response has not begun, since that request can never complete. When
 * the socket is no longer writable nothing is written and it is destroyed. The raw bytes of the request (`err.rawPacket`) are
 * never logged: they may hold a key.
 */
export function clientErrorListener(logger?: Logger) {
  // Node reports the error again for every later chunk of the same connection: answer once.
  const seen = new WeakSet<Duplex>();
  return (err: Error & { code?: string }, socket: Duplex): void => {
    if (seen.has(socket)) return;
    seen.add(socket);
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const error = errorFor(err.code);
    const answer = (): void => {
      const inFlight = responseOn(socket);
      // A request whose own body broke the parser never completes: its response, not begun, is replaced by this one.
      const ownBody =
        inFlight !== null && inFlight !== undefined && !inFlight.headersSent && inFlight.req?.complete === false;
      if (inFlight && !ownBody) {
        // Node hands the socket to the next pipelined response on 'finish'; look again after that.
        inFlight.once('finish', () => setImmediate(answer));
        return;
      }
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const requestId = newRequestId();
      logger?.debug({ code: err.code, requestId, status: error.status }, 'malformed HTTP request');
      const body = JSON.stringify(toEnvelope(error, requestId));
      const head = [
        `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        'Connection: close',
      ];
      socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
      // A peer that never reads must not keep the socket: it is closed either way.
      setTimeout(() => socket.destroy(), 1_000).unref();
    };
    answer();
  };
}
