import { connect as netConnect, isIP } from 'node:net';
import { Agent as HttpsAgent, type AgentOptions } from 'node:https';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';

/**
 * Outbound proxies for upstream calls, as corporate networks require them:
 * `HTTPS_PROXY` for https upstreams (a CONNECT tunnel; TLS stays end to end,
 * so the proxy never sees the upstream key), `HTTP_PROXY` for http ones (the
 * request goes to the proxy with an absolute URL), and `NO_PROXY` for hosts
 * reached directly. Read as curl reads them: either case, `NO_PROXY` a comma
 * list of hosts, `.domains` or `*`, each with an optional `:port`.
 */

export interface ProxySettings {
  http?: URL;
  https?: URL;
  /** Lower-case entries of NO_PROXY. */
  noProxy: readonly string[];
}

function proxyUrl(value: string | undefined): URL | undefined {
  if (!value) return undefined;
  try {
    return new URL(value.includes('://') ? value : `http://${value}`);
  } catch {
    throw new Error(`the proxy URL '${value.replace(/\/\/[^@/]*@/, '//…@')}' is not a URL`);
  }
}

/** The proxy settings of an environment; none when no proxy variable is set. */
export function proxySettingsFrom(env: NodeJS.ProcessEnv): ProxySettings | undefined {
  const http = proxyUrl(env.HTTP_PROXY ?? env.http_proxy);
  const https = proxyUrl(env.HTTPS_PROXY ?? env.https_proxy);
  if (!http && !https) return undefined;
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  return { ...(http ? { http } : {}), ...(https ? { https } : {}), noProxy };
}

function bypassed(noProxy: readonly string[], url: URL): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return noProxy.some((entry) => {
    if (entry === '*') return true;
    const [name = '', entryPort] = entry.startsWith('[')
      ? [entry.slice(1, entry.indexOf(']')), entry.split(']:')[1]]
      : entry.split(':');
    if (entryPort !== undefined && entryPort !== port) return false;
    const domain = name.replace(/^\*?\./, '');
    return host === domain || host.endsWith(`.${domain}`);
  });
}

/** The proxy to reach `url` through, or undefined to go directly. */
export function proxyFor(settings: ProxySettings, url: URL): URL | undefined {
  const proxy = url.protocol === 'https:' ? settings.https : settings.http;
  return proxy && !bypassed(settings.noProxy, url) ? proxy : undefined;
}

/** `Proxy-Authorization` for a proxy URL with credentials. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (!proxy.username) return undefined;
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(credentials).toString('base64')}`;
}

function proxyPort(proxy: URL): number {
  return Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
}

/** The longest proxy CONNECT answer read before giving up on it. */
const MAX_CONNECT_RESPONSE = 16 * 1024;

/**
 * An https agent (keep-alive, as the direct one) whose sockets are CONNECT
 * tunnels through an http proxy, with TLS to the upstream inside them.
 */
export class TunnelingAgent extends HttpsAgent {
  private readonly proxy: URL;

  constructor(proxy: URL, options: AgentOptions) {
    super(options);
    this.proxy = proxy;
  }

  override createConnection(
    options: ConnectionOptions & { host?: string; port?: number },
    callback: (err: Error | null, socket?: Duplex) => void,
  ): undefined {
    const target = `${options.host}:${options.port ?? 443}`;
    const socket = netConnect({ host: this.proxy.hostname, port: proxyPort(this.proxy) });
    let answer = Buffer.alloc(0);
    const fail = (err: Error) => {
      socket.destroy();
      callback(err);
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      const auth = proxyAuthorization(this.proxy);
      socket.write(
        `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ''}\r\n`,
      );
    });
    const onData = (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf('\r\n\r\n');
      if (end < 0) {
        if (answer.length > MAX_CONNECT_RESPONSE) fail(new Error('the proxy sent an oversized answer to CONNECT'));
        return;
      }
      socket.off('data', onData);
      socket.off('error', fail);
      const status = answer.subarray(0, answer.indexOf('\r\n')).toString('latin1');
      if (!/^HTTP\/1\.[01] 2\d\d/.test(status))
        return fail(new Error(`the proxy refused the tunnel to ${target}: ${status.slice(0, 100)}`));
      // Bytes after the proxy's answer belong to the tunnel; a proxy does not send any before TLS starts.
      const host = options.host ?? '';
      const servername = options.servername ?? (isIP(host) ? undefined : host);
      const tls = tlsConnect({ ...options, socket, ...(servername ? { servername } : {}) });
      callback(null, tls);
    };
    socket.on('data', onData);
    return undefined;
  }
}
