import type { GatewayError } from '../../errors/catalog.ts';
import type { Usage } from '../../chat/types.ts';
import type { ReplyCodec } from '../../pipeline/door.ts';
import { responseUsage } from '../../providers/openai/responses-api.ts';
import { freshResponse, responseEvents } from './native-replay.ts';
import type { ResponseStore } from './response-store.ts';

/** Where a native response's id is recorded as its key owner's (with `store`, the default). */
export interface NativeRecording {
  store: ResponseStore;
  owner: string;
  provider: string;
  /** The model as the client named it. */
  model: string;
  /** Told when the record could not be written; without it keep() rejects. @defaultValue none */
  onError?: (err: Error, responseId: string) => void;
}

type Json = Record<string, unknown>;

/**
 * The reply of a native Responses call: the upstream's `response` object and
 * events, passed through as it wrote them. Events are numbered again from 0,
 * so the stream stays one gap-free sequence when the gateway ends it with its
 * own `error` event (an upstream failure or a deadline mid-stream) in place of
 * the upstream's. With a {@link NativeRecording}, the id of a response the
 * upstream keeps is recorded as the key owner's from the first event that
 * names it, and the reply's last bytes wait for that record (keep()).
 */
export class NativeResponsesCodec implements ReplyCodec {
  private seq = 0;
  private readonly recording: NativeRecording | undefined;
  /** The record of the response the upstream keeps, written once the reply names it. */
  private recorded: Promise<void> | undefined;
  /** A cache hit: the response is the gateway's replay, which no upstream keeps. */
  private replayed = false;

  constructor(recording?: NativeRecording) {
    this.recording = recording;
  }

  completion(json: string): string {
    this.note(JSON.parse(json) as Json);
    return json;
  }

  private note(response: Json): void {
    const recording = this.recording;
    if (this.recorded || this.replayed || !recording || typeof response.id !== 'string' || response.store === false)
      return;
    const id = response.id;
    const createdAt = typeof response.created_at === 'number' ? response.created_at : Math.floor(Date.now() / 1000);
    // Written while the rest of the reply streams; the upstream keeps the response even when the stream fails later.
    const { store, owner, provider, model, onError } = recording;
    const saving = store.saveNative({ id, owner, provider, model, createdAt });
    this.recorded = onError ? saving.catch((err: unknown) => onError(err as Error, id)) : saving;
    // keep() is not called for a reply that failed: its rejection is not left unhandled.
    this.recorded.catch(() => {});
  }

  async keep(): Promise<void> {
    await this.recorded;
  }

  /** One upstream event, or the events DLP's reply filter sent in its place (one a line, none when it holds the text back). */
  chunk(json: string): string {
    let frames = '';
    for (const line of json.split('\n')) {
      if (line === '') continue;
      const event = JSON.parse(line) as { type?: unknown; sequence_number?: number; response?: unknown };
      event.sequence_number = this.seq++;
      // The first event (response.created) names the response: the upstream may keep it even when the stream fails later.
      if (typeof event.response === 'object' && event.response !== null) this.note(event.response as Json);
      frames += `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
    }
    return frames;
  }

  end(): string {
    return '';
  }

  /**
   * A cached native reply (only `store: false` ones are replayed) as a new
   * response: fresh response and item ids, and for a stream the events an
   * upstream would have sent for it, numbered by chunk() like the upstream's.
   */
  replay(stored: string): { completion: string; chunks: string[]; usage?: Usage } {
    this.replayed = true;
    const response = freshResponse(JSON.parse(stored) as Json, Date.now());
    const usage = responseUsage(response);
    return {
      completion: JSON.stringify(response),
      chunks: responseEvents(response).map((event) => JSON.stringify(event)),
      ...(usage ? { usage } : {}),
    };
  }

  fail(err: GatewayError): string {
    const event = { type: 'error', code: err.code, message: err.message, param: null, sequence_number: this.seq++ };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  }
}
