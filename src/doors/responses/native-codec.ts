import type { GatewayError } from '../../errors/catalog.ts';
import type { ReplyCodec } from '../../pipeline/door.ts';

/**
 * The reply of a native Responses call: the upstream's `response` object and
 * events, passed through as it wrote them. Events are numbered again from 0,
 * so the stream stays one gap-free sequence when the gateway ends it with its
 * own `error` event (an upstream failure or a deadline mid-stream) in place of
 * the upstream's.
 */
export class NativeResponsesCodec implements ReplyCodec {
  private seq = 0;

  completion(json: string): string {
    return json;
  }

  /** One upstream event, or the events DLP's reply filter sent in its place (one a line, none when it holds the text back). */
  chunk(json: string): string {
    let frames = '';
    for (const line of json.split('\n')) {
      if (line === '') continue;
      const event = JSON.parse(line) as { type?: unknown; sequence_number?: number };
      event.sequence_number = this.seq++;
      frames += `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
    }
    return frames;
  }

  end(): string {
    return '';
  }

  fail(err: GatewayError): string {
    const event = { type: 'error', code: err.code, message: err.message, param: null, sequence_number: this.seq++ };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  }
}
