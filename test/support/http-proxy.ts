import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback forward proxy for tests, as corporate proxies behave: CONNECT
 * opens a tunnel (the proxy sees only the target, never what TLS carries),
 * and a request with an absolute URL is forwarded. Records both.
 */
export interface HttpProxy {
  url: string;
  /** `host:port` of every CONNECT, with its Proxy-Authorization. */
  connects: Array<{ target: string; authorization: string | undefined }>;
  /** Absolute URLs of forwarded requests, with the headers the proxy saw. */
  forwarded: Array<{ url: string; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
}

export async function startHttpProxy(): Promise<HttpProxy> {
  const connects: HttpProxy['connects'] = [];
  const forwarded: HttpProxy['forwarded'] = [];
  const server = createServer((req, res) => {
    forwarded.push({ url: req.url ?? '', headers: req.headers });
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
      },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client, head: Buffer) => {
    connects.push({ target: req.url ?? '', authorization: req.headers['proxy-authorization'] });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect({ host, port: Number(port) }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    forwarded,
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
