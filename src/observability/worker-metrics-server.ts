import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * The worker's scrape endpoint: `GET /metrics` on its own small listener
 * (workers have no HTTP layer to mount it on), 404 for anything else. No
 * key is asked (the metrics hold no secret); it listens on HOST like the API. Resolves once listening; rejects when the port
 * cannot be bound, which fails the worker's start.
 */
export function serveWorkerMetrics(registry: Registry, options: { port: number; host: string }): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: only GET /metrics is served here\n');
      return;
    }
    registry.metrics().then(
      (body) => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`cannot serve metrics on WORKER_METRICS_PORT ${options.port}: ${err.message}`)),
    );
    server.listen(options.port, options.host, () => resolve(server));
  });
}
