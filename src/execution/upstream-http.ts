import {
  Agent as HttpAgent,
  request as httpRequest,
  type AgentOptions,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { UpstreamHttpRequest } from '../providers/types.ts';
import { proxyAuthorization, proxyFor, TunnelingAgent, type ProxySettings } from './upstream-proxy.ts';

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
  /** Sockets per upstream host. @defaultValue 256 */
  maxSockets?: number;
  /** Idle keep-alive sockets kept per host. @defaultValue 64 */
  maxFreeSockets?: number;
  /**
   * Outbound proxies (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`; see {@link proxySettingsFrom}).
   * @defaultValue none: every upstream is called directly
   */
  proxy?: ProxySettings;
}

/**
 * The worker's HTTP client for upstream calls: node:http(s) with keep-alive
 * agents. Chosen over the global `fetch` because the call is on the hot path
 * and `fetch` adds WHATWG stream and Response objects per call.
 */
export function createUpstreamClient(options: UpstreamClientOptions = {}): { send: UpstreamSend; close(): void } {
  const agentOptions = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 256,
    maxFreeSockets: options.maxFreeSockets ?? 64,
    scheduling: 'lifo' as const,
  };
  const http = new HttpAgent(agentOptions);
  const https = new HttpsAgent(agentOptions);
  const proxied = options.proxy ? proxiedRoutes(options.proxy, agentOptions) : undefined;

  const send: UpstreamSend = (req, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(abortError(signal));
      const url = new URL(req.url);
      const secure = url.protocol === 'https:';
      const body = Buffer.from(req.body);
      const headers = { ...req.headers, 'content-length': String(body.length) };
      const route = proxied?.(url);
      const outgoing = route
        ? route(url, headers, (res) => resolve(wrap(res)))
        : (secure ? httpsRequest : httpRequest)(url, { method: 'POST', agent: secure ? https : http, headers }, (res) =>
            resolve(wrap(res)),
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
      proxied?.close();
    },
  };
}

type ProxiedRequest = (
  url: URL,
  headers: Record<string, string>,
  onResponse: (res: IncomingMessage) => void,
) => ClientRequest;

/**
 * How each upstream origin is reached when proxies are configured (decided once
 * per origin): https through a CONNECT tunnel, http as an absolute-URL request
 * to the proxy, or directly (undefined) for NO_PROXY hosts.
 */
function proxiedRoutes(
  settings: ProxySettings,
  agentOptions: AgentOptions,
): ((url: URL) => ProxiedRequest | undefined) & { close(): void } {
  const tunnels = new Map<string, TunnelingAgent>();
  const forwarder = new HttpAgent(agentOptions);
  const routes = new Map<string, ProxiedRequest | undefined>();
  const routeFor = (url: URL): ProxiedRequest | undefined => {
    const proxy = proxyFor(settings, url);
    if (!proxy) return undefined;
    const auth = proxyAuthorization(proxy);
    if (url.protocol === 'https:') {
      let agent = tunnels.get(proxy.href);
      if (!agent) tunnels.set(proxy.href, (agent = new TunnelingAgent(proxy, agentOptions)));
      const tunnel = agent;
      return (target, headers, onResponse) =>
        httpsRequest(target, { method: 'POST', agent: tunnel, headers }, onResponse);
    }
    return (target, headers, onResponse) =>
      httpRequest(
        {
          host: proxy.hostname,
          port: Number(proxy.port || 80),
          path: target.href,
          method: 'POST',
          agent: forwarder,
          headers: { ...headers, host: target.host, ...(auth ? { 'proxy-authorization': auth } : {}) },
        },
        onResponse,
      );
  };
  const lookup = (url: URL) => {
    if (!routes.has(url.origin)) routes.set(url.origin, routeFor(url));
    return routes.get(url.origin);
  };
  return Object.assign(lookup, {
    close() {
      forwarder.destroy();
      for (const agent of tunnels.values()) agent.destroy();
    },
  });
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
        res.once('end', () =>
          resolve(
            chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8'),
          ),
        );
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
