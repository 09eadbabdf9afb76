import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * Ends `res` with a JSON text as it is: what `res.json` sends (same
 * Content-Type and Content-Length), in one `writeHead` and one `end`, without
 * Express' send path (type lookup, charset rewrite, freshness check) that a
 * reply already serialized does not need.
 */
export function sendJsonText(res: ServerResponse, status: number, body: string, headers?: OutgoingHttpHeaders): void {
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
