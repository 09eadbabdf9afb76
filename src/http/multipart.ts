import type { IncomingMessage } from 'node:http';
import { InvalidRequestError, RequestTooLargeError } from '../errors/catalog.ts';

/** What a {@link MultipartReader} finds in the bytes pushed so far, in order. */
export type MultipartEvent =
  | { kind: 'part'; name: string | undefined; filename: string | undefined }
  | { kind: 'data'; data: Buffer }
  | { kind: 'end' };

/** Largest header block of one part: room for a long filename to reach its own check and its own 400. */
const MAX_PART_HEADER_BYTES = 1024 * 1024;

/**
 * The boundary of a `multipart/form-data` request; 400 for any other body,
 * 413 when its declared length is over `limit` bytes.
 */
export function multipartBoundary(req: IncomingMessage, limit: number): string {
  const boundary = /^multipart\/form-data\s*;.*?boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(
    req.headers['content-type'] ?? '',
  );
  const marker = boundary?.[1] ?? boundary?.[2];
  if (!marker)
    throw new InvalidRequestError('Upload the file as multipart/form-data with a "file" part and a "purpose" field.');
  if (Number(req.headers['content-length'] ?? 0) > limit) throw new RequestTooLargeError(limit);
  return marker;
}

/**
 * An incremental `multipart/form-data` parser (RFC 7578: parts separated by
 * `--boundary`, each with a `Content-Disposition: form-data; name=...;
 * filename=...` header). Bytes go in as they arrive; a part's content comes
 * out as they do, holding back only what could be the start of the next
 * delimiter, so a file of any size passes through in bounded memory.
 */
export class MultipartReader {
  private readonly first: Buffer;
  private readonly delimiter: Buffer;
  private held = Buffer.alloc(0);
  private state: 'preamble' | 'delimited' | 'headers' | 'body' | 'done' = 'preamble';

  constructor(marker: string) {
    this.first = Buffer.from(`--${marker}`);
    this.delimiter = Buffer.from(`\r\n--${marker}`);
  }

  /** The events the bytes pushed so far complete; 400 for a malformed body. */
  push(chunk: Buffer): MultipartEvent[] {
    let buf = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
    const events: MultipartEvent[] = [];
    for (;;) {
      if (this.state === 'done') break;
      if (this.state === 'preamble') {
        const at = buf.indexOf(this.first);
        if (at < 0) {
          buf = buf.subarray(Math.max(0, buf.length - this.first.length + 1));
          break;
        }
        buf = buf.subarray(at + this.first.length);
        this.state = 'delimited';
      } else if (this.state === 'delimited') {
        if (buf.length < 2) break;
        const next = buf.subarray(0, 2).toString('latin1');
        if (next === '--') {
          this.state = 'done';
          events.push({ kind: 'end' });
          buf = Buffer.alloc(0);
          break;
        }
        if (next !== '\r\n') throw malformed();
        buf = buf.subarray(2);
        this.state = 'headers';
      } else if (this.state === 'headers') {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buf.length > MAX_PART_HEADER_BYTES)
            throw new InvalidRequestError('The multipart body has a part whose headers are over 1 MiB.');
          break;
        }
        const disposition = /content-disposition:\s*form-data([^\r\n]*)/i.exec(buf.subarray(0, end).toString('utf8'));
        events.push({
          kind: 'part',
          name: /;\s*name="([^"]*)"/i.exec(disposition?.[1] ?? '')?.[1],
          filename: /;\s*filename="([^"]*)"/i.exec(disposition?.[1] ?? '')?.[1],
        });
        buf = buf.subarray(end + 4);
        this.state = 'body';
      } else {
        const at = buf.indexOf(this.delimiter);
        if (at < 0) {
          // The tail may be the start of the delimiter: kept until the next bytes tell.
          const safe = buf.length - this.delimiter.length + 1;
          if (safe > 0) {
            events.push({ kind: 'data', data: buf.subarray(0, safe) });
            buf = buf.subarray(safe);
          }
          break;
        }
        if (at > 0) events.push({ kind: 'data', data: buf.subarray(0, at) });
        buf = buf.subarray(at + this.delimiter.length);
        this.state = 'delimited';
      }
    }
    // A copy, so the held tail does not keep the whole incoming chunk alive.
    this.held = Buffer.from(buf);
    return events;
  }

  /** Throws 400 unless the body ended with its closing delimiter. */
  finish(): void {
    if (this.state === 'preamble')
      throw new InvalidRequestError('The multipart body has no part with the declared boundary.');
    if (this.state !== 'done') throw malformed();
  }
}

const malformed = () => new InvalidRequestError('The multipart body is malformed or cut short.');
