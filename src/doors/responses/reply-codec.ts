import type { ChatCompletion, ChatMessage, ChatRequest, ReplyMessage } from '../../chat/types.ts';
import type { GatewayError } from '../../errors/catalog.ts';
import type { ReplyCodec } from '../../pipeline/door.ts';
import { messagesToItems } from './input-items.ts';
import { responseFromCompletion, type ChatUsageJson, type ResponseFacts } from './response-object.ts';
import type { ResponseStore } from './response-store.ts';
import { ResponseStreamEncoder } from './stream-encoder.ts';

/** Where a reply is stored once sent; absent with `store: false`. */
export interface ReplyStorage {
  store: ResponseStore;
  owner: string;
  /** How many of the request's last messages are this request's own input (after instructions and earlier turns). */
  inputCount: number;
  /** The request as decoded, when keep() is not told the one the pipeline sent. */
  request: ChatRequest;
  /** Told when storing failed; without it keep() rejects. @defaultValue none */
  onError?: (err: Error, responseId: string) => void;
}

/**
 * The Responses door's codec of one reply: a `chat.completion` becomes a
 * `response` object, a chunk stream becomes the Responses event grammar, and
 * once the reply is encoded whole, before its last bytes are sent, the
 * response, its input items and its turn are stored (unless `store: false`).
 * A reply that failed is not stored.
 */
export class ResponsesReplyCodec implements ReplyCodec {
  private readonly facts: ResponseFacts;
  private readonly storage: ReplyStorage | undefined;
  private stream: ResponseStreamEncoder | undefined;
  private sent: { response: Record<string, unknown>; reply: ReplyMessage } | undefined;

  constructor(facts: ResponseFacts, storage?: ReplyStorage) {
    this.facts = facts;
    this.storage = storage;
  }

  completion(json: string): string {
    const completion = JSON.parse(json) as ChatCompletion & { usage: ChatUsageJson };
    const response = responseFromCompletion(this.facts, completion);
    const message = completion.choices[0]?.message ?? { role: 'assistant', content: null };
    this.sent = { response, reply: message };
    return JSON.stringify(response);
  }

  private encoder(): ResponseStreamEncoder {
    this.stream ??= new ResponseStreamEncoder(this.facts);
    return this.stream;
  }

  chunk(json: string): string {
    return this.encoder().chunk(json);
  }

  end(): string {
    const encoder = this.encoder();
    const frames = encoder.end();
    if (encoder.final) this.sent = { response: encoder.final, reply: encoder.replyMessage() };
    return frames;
  }

  fail(err: GatewayError): string {
    this.sent = undefined;
    return this.encoder().fail(err);
  }

  async keep(sent?: ChatRequest): Promise<void> {
    if (!this.storage || !this.sent) return;
    const { store, owner, inputCount } = this.storage;
    // The request's last messages are its own input, as DLP left them: what is stored is what the upstream saw.
    const input = (sent ?? this.storage.request).messages.slice(-inputCount);
    const reply: ChatMessage = { role: 'assistant', content: this.sent.reply.content };
    if (this.sent.reply.tool_calls && this.sent.reply.tool_calls.length > 0)
      reply.tool_calls = this.sent.reply.tool_calls;
    // Kept for the upstream that signed it: a later previous_response_id turn gives it back.
    if (this.sent.reply.thinking && this.sent.reply.thinking.length > 0) reply.thinking = this.sent.reply.thinking;
    const saving = store.save({
      id: this.facts.id,
      owner,
      createdAt: this.facts.created_at,
      previousResponseId: this.facts.previous_response_id,
      response: this.sent.response,
      inputItems: messagesToItems(input),
      turn: [...input, reply],
    });
    const onError = this.storage.onError;
    if (!onError) return saving;
    await saving.catch((err: unknown) => onError(err as Error, this.facts.id));
  }
}
