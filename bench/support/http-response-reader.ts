/** What {@link HttpResponseReader.feed} learned from one whole response. */
export interface ReadResponse {
  status: number;
  /** When the first body byte arrived (`performance.now()`), or when the head ended for an empty body. */
  firstByteAt: number;
  /** The server will close the connection after this response. */
  closes: boolean;
  /**
   * When the first byte of generated text arrived (`performance.now()`): the first
   * `"content":"x` with a non-empty string, so an SSE role chunk or a comment sent
   * early does not count. Only with {@link ReaderOptions.firstToken}; 0 when none came.
   */
  firstTokenAt?: number;
}

/** Options of {@link HttpResponseReader}. */
export interface ReaderOptions {
  /**
   * Look for the first generated text in each body (time to first token).
   * @defaultValue false: only the framing is read
   */
  firstToken?: boolean;
}

/** `"content"` followed by a non-empty JSON string, spaces allowed as Python's JSON writer puts them. */
const TOKEN = /"content"\s*:\s*"[^"]/;
/** Enough of a packet's end to find {@link TOKEN} split across packets. */
const TOKEN_TAIL = 24;

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailer';

/**
 * Reads HTTP/1.1 responses off a keep-alive connection for the load generator,
 * one at a time, without building any object per header or chunk: only the
 * status, the framing (`Content-Length` or chunked) and the time of the first
 * body byte are kept. A response without either framing (read until close) is
 * not supported: the gateway and the stand-ins always frame their replies.
 */
export class HttpResponseReader {
  private state: State = 'head';
  private text = '';
  private remaining = 0;
  private status = 0;
  private closes = false;
  private firstByteAt = 0;
  private firstTokenAt = 0;
  /** The end of the body read so far, while the first token is looked for. */
  private tokenTail = '';
  private readonly scanTokens: boolean;

  constructor(options: ReaderOptions = {}) {
    this.scanTokens = options.firstToken ?? false;
  }

  /**
   * Consumes bytes that arrived at `now`. Returns the response once its last
   * byte is in; bytes after it (which a client waiting for each reply never
   * receives) are an error.
   */
  feed(data: Buffer, now: number): ReadResponse | undefined {
    let i = 0;
    while (i < data.length) {
      switch (this.state) {
        case 'head': {
          const head = this.takeUntil(data, i, '\r\n\r\n');
          if (!head) return undefined;
          i = head.next;
          this.startBody(head.text, now);
          if (this.state === 'head') return this.finish(data, i);
          break;
        }
        case 'length': {
          const take = Math.min(this.remaining, data.length - i);
          if (take > 0 && this.firstByteAt === 0) this.firstByteAt = now;
          this.scanToken(data, i, i + take, now);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) return this.finish(data, i);
          break;
        }
        case 'chunk-size':
        case 'trailer': {
          const line = this.takeUntil(data, i, '\r\n');
          if (!line) return undefined;
          i = line.next;
          if (this.state === 'trailer') {
            if (line.text === '') return this.finish(data, i);
            break;
          }
          const size = Number.parseInt(line.text, 16);
          if (!Number.isFinite(size)) throw new Error(`bad chunk size line: ${JSON.stringify(line.text)}`);
          if (size === 0) this.state = 'trailer';
          else {
            this.remaining = size;
            this.state = 'chunk-data';
          }
          break;
        }
        case 'chunk-data': {
          if (this.firstByteAt === 0) this.firstByteAt = now;
          const take = Math.min(this.remaining, data.length - i);
          this.scanToken(data, i, i + take, now);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) {
            this.remaining = 2;
            this.state = 'chunk-crlf';
          }
          break;
        }
        case 'chunk-crlf': {
          const take = Math.min(this.remaining, data.length - i);
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) this.state = 'chunk-size';
          break;
        }
      }
    }
    return undefined;
  }

  /** Notes `now` as the first token's time when body bytes `data[from, to)` complete one. */
  private scanToken(data: Buffer, from: number, to: number, now: number): void {
    if (!this.scanTokens || this.firstTokenAt !== 0 || from >= to) return;
    const text = this.tokenTail + data.toString('latin1', from, to);
    if (TOKEN.test(text)) this.firstTokenAt = now;
    else this.tokenTail = text.slice(-TOKEN_TAIL);
  }

  /**
   * The text from `i` up to `delimiter`, which may have begun in earlier
   * packets (kept in `text` meanwhile), and the offset after the delimiter in
   * `data`; undefined while the delimiter has not arrived.
   */
  private takeUntil(data: Buffer, i: number, delimiter: string): { text: string; next: number } | undefined {
    if (this.text === '') {
      const at = data.indexOf(delimiter, i, 'latin1');
      if (at >= 0) return { text: data.toString('latin1', i, at), next: at + delimiter.length };
    }
    const before = this.text.length;
    this.text += data.toString('latin1', i);
    const at = this.text.indexOf(delimiter, Math.max(0, before - delimiter.length + 1));
    if (at < 0) return undefined;
    const text = this.text.slice(0, at);
    this.text = '';
    // latin1: one character per byte, so text offsets map onto `data`.
    return { text, next: i + (at + delimiter.length - before) };
  }

  private startBody(head: string, now: number): void {
    const eol = head.indexOf('\r\n');
    const firstLine = eol < 0 ? head : head.slice(0, eol);
    this.status = Number(firstLine.split(' ')[1]);
    const lower = head.toLowerCase();
    this.closes = /\r\nconnection:\s*close/.test(lower);
    if (this.status === 204 || this.status === 304) {
      // No body by definition (RFC 9112 6.3), whatever the headers say.
      this.firstByteAt = now;
      return;
    }
    if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
      this.state = 'chunk-size';
      return;
    }
    const length = /\r\ncontent-length:\s*(\d+)/.exec(lower);
    if (!length) throw new Error(`response without Content-Length or chunked framing (status ${this.status})`);
    this.remaining = Number(length[1]);
    if (this.remaining === 0) this.firstByteAt = now;
    else this.state = 'length';
  }

  private finish(data: Buffer, at: number): ReadResponse {
    if (at < data.length) throw new Error(`${data.length - at} bytes after a complete response`);
    const response: ReadResponse = { status: this.status, firstByteAt: this.firstByteAt, closes: this.closes };
    if (this.scanTokens) response.firstTokenAt = this.firstTokenAt;
    this.state = 'head';
    this.text = '';
    this.remaining = 0;
    this.status = 0;
    this.closes = false;
    this.firstByteAt = 0;
    this.firstTokenAt = 0;
    this.tokenTail = '';
    return response;
  }
}
