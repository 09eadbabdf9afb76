import type { IncomingHttpHeaders } from 'node:http';
import type { ChatRequest, Usage } from '../chat/types.ts';
import type { EmbeddingsShape } from '../embeddings/request-schema.ts';
import type { GatewayError } from '../errors/catalog.ts';
import type { TextPath } from '../providers/openai/responses-api.ts';
import type { WireFormat } from '../providers/types.ts';

/**
 * What a request asks of its provider: a chat completion, the embeddings
 * of its texts (each user message one input) in `shape`, or a native
 * Responses call. The pipeline's steps are the same; routing, caching and
 * the job differ.
 */
export type JobKind =
  | { type: 'chat' }
  | { type: 'embeddings'; shape: EmbeddingsShape }
  /** A Responses body for an upstream's own `/responses`; its texts (at `paths`) are the request's messages, in order. */
  | { type: 'responses'; body: Record<string, unknown>; paths: readonly TextPath[]; fallback?: ResponsesFallback };

/**
 * How a native Responses request is served by a deployment that does not take
 * the Responses API natively (a fallback model, another provider entry of the
 * model): translated through the canonical request, its chat reply encoded
 * as the door encodes a translated one.
 */
export interface ResponsesFallback {
  /**
   * The canonical request for an upstream of `format`, from the body as DLP
   * left it. Throws a GatewayError when the body cannot be translated
   * (hosted tools, the upstream's own `previous_response_id`): that
   * deployment is skipped.
   */
  translate(body: Record<string, unknown>, format: WireFormat): ChatRequest;
  /**
   * Told which deployment answers, before its reply is encoded: `translated`
   * is the request sent when it was a translated one (the reply is then in
   * the chat shape). @defaultValue none
   */
  answered(by: { provider: string; model: string; translated?: ChatRequest }): void;
}

/** The job kind of a chat request: every door's, but for embeddings and native Responses requests. */
export const CHAT_JOB: JobKind = { type: 'chat' };

/** What a door reads from the HTTP request: the parsed JSON body and the headers. */
export interface DoorRequest {
  body: unknown;
  headers: IncomingHttpHeaders;
  /** The caller's owner id (key scope), for doors that keep state per key (stored responses). */
  owner: string;
}

/**
 * Encodes the pipeline's reply, which is always in OpenAI's chat shape
 * (`chat.completion` JSON, `chat.completion.chunk` JSON), into one protocol's
 * reply. One instance serves one request, so it may keep state across chunks
 * (content block indexes, sequence numbers, the accumulated message).
 */
export interface ReplyCodec {
  /** The JSON body of a non-streamed reply, from a `chat.completion` JSON text. */
  completion(json: string): string;
  /** Whole SSE frames (possibly none, possibly several) for one `chat.completion.chunk` JSON text. */
  chunk(json: string): string;
  /** The SSE frames that close a stream that ended cleanly. */
  end(): string;
  /** The SSE frames of a stream that fails after its first frame (never a clean end). */
  fail(err: GatewayError, requestId: string): string;
  /**
   * Awaited once the whole reply is encoded and before its last bytes are
   * sent (a door that stores replies stores it here, so the client's next
   * request finds it, whichever replica it reaches), with the request as the
   * pipeline sent it: routed and screened by DLP, so what is stored is what
   * the upstream saw. @defaultValue none
   */
  keep?(sent?: ChatRequest): Promise<void>;
  /**
   * A stored reply that is not a `chat.completion` (a native Responses
   * reply), replayed for a cache hit: the body completion() takes, the texts
   * chunk() takes for a stream, and its usage (for the gateway's saved-spend
   * figures). @defaultValue none: the stored chat completion is replayed
   */
  replay?(stored: string): { completion: string; chunks: string[]; usage?: Usage };
}

/**
 * An entry point's protocol: it only decodes its request into the canonical
 * {@link ChatRequest} and encodes the reply and errors in its own shapes;
 * everything else (keys, limits, DLP, caches, governance, dispatch, relay,
 * records) is the pipeline's, the same for every door.
 */
export interface Door {
  /** The door's name in metrics, logs and traces: `chat`, `messages`, `responses`. */
  readonly name: string;
  /** Decodes and validates a request; bad input throws a GatewayError (InvalidRequestError, NotFoundError). */
  decode(request: DoorRequest): ChatRequest | Promise<ChatRequest>;
  /**
   * The codec of one request's reply. `from` is the {@link DoorRequest} that
   * `decode()` read for this request: a door whose reply depends on more than
   * the canonical request (the Responses door: its response id, the caller's
   * owner, `store`, `previous_response_id`) finds its decoded facts by it.
   * A pipeline that does not pass it still gets a working codec; the Responses
   * door then stores nothing. @defaultValue none
   */
  reply(request: ChatRequest, from?: DoorRequest): ReplyCodec;
  /** The job kind of a request `decode()` read from `from`. @defaultValue chat */
  jobKind?(from: DoorRequest): JobKind;
  /** The status and body of an error answered before any reply byte, in this door's shape. */
  error(err: GatewayError, requestId: string): { status: number; body: unknown };
}
