import { parseChatRequest } from '../../chat/request-schema.ts';
import { toEnvelope, type GatewayError } from '../../errors/catalog.ts';
import type { Door, ReplyCodec } from '../../pipeline/door.ts';

/**
 * OpenAI's chat completions: the canonical model is this protocol, so the
 * reply passes through as the worker wrote it (no parse, no re-serialization
 * on the hot path).
 */
const CHAT_CODEC: ReplyCodec = {
  completion: (json) => json,
  chunk: (json) => `data: ${json}\n\n`,
  end: () => 'data: [DONE]\n\n',
  fail: (err, requestId) => `event: error\ndata: ${JSON.stringify(toEnvelope(err, requestId))}\n\n`,
};

/** `POST /v1/chat/completions`. */
export const chatDoor: Door = {
  name: 'chat',
  decode: ({ body }) => parseChatRequest(body),
  reply: () => CHAT_CODEC,
  error: (err: GatewayError, requestId: string) => ({ status: err.status, body: toEnvelope(err, requestId) }),
};
