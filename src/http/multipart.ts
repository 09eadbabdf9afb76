import type { IncomingMessage } from 'node:http';
import { InvalidRequestError, RequestTooLargeError } from '../errors/catalog.ts';

/** A `multipart/form-data` body: its text fields and its files. */
export interface MultipartForm {
  fields: Map<string, string>;
  files: Map<string, { filename: string; data: Buffer }>;
}

/**
 * Reads and parses a `multipart/form-data` body of at most `limit` bytes
 * (RFC 7578: parts separated by `--boundary`, each with a
 * `Content-Disposition: form-data; name=...; filename=...` header). Whole
 * bodies only: the largest is bounded by `BATCH_MAX_FILE_BYTES`. 413 over
 * the limit, 400 for anything that is not such a body.
 */
export async function readMultipart(req: IncomingMessage, limit: number): Promise<MultipartForm> {
  const boundary = /^multipart\/form-data\s*;.*?boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(
    req.headers['content-type'] ?? '',
  );
  const marker = boundary?.[1] ?? boundary?.[2];
  if (!marker)
    throw new InvalidRequestError('Upload the file as multipart/form-data with a "file" part and a "purpose" field.');
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new RequestTooLargeError(limit);
  // With a declared length the body is copied into one buffer as it comes: no second copy to join the pieces.
  const whole = declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    if (size + chunk.length > limit || (whole && size + chunk.length > whole.length)) {
      req.resume();
      throw new RequestTooLargeError(limit);
    }
    if (whole) chunk.copy(whole, size);
    else chunks.push(chunk);
    size += chunk.length;
  }
  return parseParts(whole ? whole.subarray(0, size) : Buffer.concat(chunks), marker);
}

function parseParts(body: Buffer, marker: string): MultipartForm {
  const form: MultipartForm = { fields: new Map(), files: new Map() };
  const delimiter = Buffer.from(`--${marker}`);
  let at = body.indexOf(delimiter);
  if (at < 0) throw new InvalidRequestError('The multipart body has no part with the declared boundary.');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') return form;
    const headersEnd = body.indexOf('\r\n\r\n', at);
    const next = body.indexOf(Buffer.from(`\r\n--${marker}`), at);
    if (headersEnd < 0 || next < 0 || headersEnd > next)
      throw new InvalidRequestError('The multipart body is malformed or cut short.');
    const headers = body.subarray(at, headersEnd).toString('utf8');
    const disposition = /content-disposition:\s*form-data([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
    const filename = /;\s*filename="([^"]*)"/i.exec(disposition)?.[1];
    const data = body.subarray(headersEnd + 4, next);
    if (name !== undefined) {
      if (filename !== undefined) form.files.set(name, { filename, data });
      else form.fields.set(name, data.toString('utf8'));
    }
    at = next + 2;
  }
}
