import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { UpstreamHttpRequest } from '../providers/types.ts';

/** An upstream reply: status, headers, and the body as text or as a stream of chunks. */
export interface UpstreamResponse {
  status: number;
  ok: boolean;
  header(name: string): string | undefined;
  text(): Promise<string>;
  body: AsyncIterable<Buffer>;
}

/** Sends one POST to an upstream; aborting `signal` destroys the request. */
export type UpstreamSend = (req: UpstreamHttpRequest, signal: AbortSignal) => Promise<UpstreamResponse>;

/** Options of {@link createUpstreamClient}. */
export interface UpstreamClientOptions {
  /** Sockets per upstream host. Default 256. */
  maxSockets?: number;
  /** Idle keep-alive sockets kept per host. Default 64. */
  maxFreeSockets?: number;
}

/**
 * The worker's HTTP client for upstream calls: node:http(s) with keep-alive
 * agents. Chosen over the global `fetch` because the call is on the hot path
 * and `fetch` adds WHATWG stream and Response objects per call.
 */
export function createUpstreamClient(options: UpstreamClientOptions = {}): { send: UpstreamSend; close(): void } {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 256, maxFreeSockets: options.maxFreeSockets ?? 64, scheduling: 'lifo' as const };
  const http = new HttpAgent(agentOptions);
  const https = new HttpsAgent(agentOptions);

  const send: UpstreamSend = (req, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(abortError(signal));
      const url = new URL(req.url);
      const secure = url.protocol === 'https:';
      const body = Buffer.from(req.body);
      const outgoing = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: 'POST',
          agent: secure ? https : http,
          headers: { ...req.headers, 'content-length': String(body.length) },
        },
        (res) => resolve(wrap(res)),
      );
      // Aborting destroys the request and with it the response being read. One listener,
      // removed when the exchange closes: the `signal` option's stream plumbing costs more per call.
      const onAbort = () => outgoing.destroy(abortError(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      outgoing.once('close', () => signal.removeEventListener('abort', onAbort));
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  return {
    send,
    close() {
      http.destroy();
      https.destroy();
    },
  };
}

function abortError(signal: AbortSignal): Error {
  return new DOMException('The upstream call was aborted.', { name: 'AbortError', cause: signal.reason });
}

function wrap(res: IncomingMessage): UpstreamResponse {
  const status = res.statusCode ?? 0;
  return {
    status,
    ok: status >= 200 && status < 300,
    header: (name) => {
      const value = res.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    },
    text() {
      return new Promise((resolve, reject) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8')));
        res.once('error', reject);
        // Destroyed before its end (abort, reset): never left pending.
        res.once('close', () => {
          if (!res.complete) reject(new Error('the upstream connection closed before the body ended'));
        });
      });
    },
    body: res,
  };
}
