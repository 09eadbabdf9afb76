import type { ChatRequest } from '../../chat/types.ts';
import { embeddingsAsChat } from '../../embeddings/embeddings-texts.ts';
import { parseEmbeddingsRequest, type EmbeddingsShape } from '../../embeddings/request-schema.ts';
import { toEnvelope, type GatewayError } from '../../errors/catalog.ts';
import type { Door, DoorRequest, JobKind, ReplyCodec } from '../../pipeline/door.ts';

/**
 * The worker writes OpenAI's embeddings list object, so the reply passes
 * through. An embeddings request is never streamed: the SSE methods exist
 * for the interface only.
 */
const EMBEDDINGS_CODEC: ReplyCodec = {
  completion: (json) => json,
  chunk: () => '',
  end: () => '',
  fail: (err, requestId) => `event: error\ndata: ${JSON.stringify(toEnvelope(err, requestId))}\n\n`,
};

/**
 * `POST /v1/embeddings` in OpenAI's shape, for the embedding models of
 * config.yaml (`embedding_models`): each input becomes one text of the
 * canonical request, so the pipeline screens, caches (exact cache only),
 * governs and dispatches it as any other; its job kind makes the worker call
 * the provider's embeddings API (docs/decisions/embeddings-through-the-queue.md).
 */
export class EmbeddingsDoor implements Door {
  readonly name = 'embeddings';
  /** The vectors' shape of requests between decode() and jobKind(). */
  private readonly shapes = new WeakMap<DoorRequest, EmbeddingsShape>();

  decode(from: DoorRequest): ChatRequest {
    const parsed = parseEmbeddingsRequest(from.body);
    const shape: EmbeddingsShape = { encoding_format: parsed.encoding_format };
    if (parsed.dimensions !== undefined) shape.dimensions = parsed.dimensions;
    this.shapes.set(from, shape);
    return embeddingsAsChat(parsed);
  }

  jobKind(from: DoorRequest): JobKind {
    const shape = this.shapes.get(from);
    if (!shape) throw new Error('EmbeddingsDoor.jobKind: the request was not decoded by this door');
    this.shapes.delete(from);
    return { type: 'embeddings', shape };
  }

  reply(): ReplyCodec {
    return EMBEDDINGS_CODEC;
  }

  error(err: GatewayError, requestId: string): { status: number; body: unknown } {
    return { status: err.status, body: toEnvelope(err, requestId) };
  }
}
