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

  chunk(json: string): string {
    const event = JSON.parse(json) as { type?: unknown; sequence_number?: number };
    event.sequence_number = this.seq++;
    return `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
  }

  end(): string {
    return '';
  }

  fail(err: GatewayError): string {
    const event = { type: 'error', code: err.code, message: err.message, param: null, sequence_number: this.seq++ };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  }
}
