import type { ChatCompletion, ChatRequest } from '../../chat/types.ts';
import type { GatewayConfig } from '../../config/gateway-config.ts';
import type { Door, DoorRequest, ReplyCodec } from '../../pipeline/door.ts';
import { normalizeMessagesRequest, parseMessagesBody, withAnthropicHeaders } from './decode.ts';
import { messagesError } from './errors.ts';
import { messageOf } from './reply-encoding.ts';
import { MessagesStreamEncoder } from './stream-encoder.ts';

/** What the Messages door reads besides the request. */
export interface MessagesDoorOptions {
  /** The current configuration: its models and `model_aliases`. */
  config: () => GatewayConfig;
}

/** The model a client's name stands for: itself when configured, else its alias' target, else itself (the pipeline answers not found). */
export function resolveModel(config: GatewayConfig, name: string): string {
  if (config.modelIndex.has(name)) return name;
  return config.aliases?.resolve(name) ?? name;
}

/** The codec of one reply: a whole `Message`, or the event stream. */
export function messagesReplyCodec(): ReplyCodec {
  const stream = new MessagesStreamEncoder(undefined);
  return {
    completion: (json) => JSON.stringify(messageOf(JSON.parse(json) as ChatCompletion, undefined)),
    chunk: (json) => stream.chunk(json),
    end: () => stream.end(),
    fail: (err, requestId) => stream.fail(err, requestId),
  };
}

/** The door; its decoding is synchronous. */
export type MessagesDoor = Omit<Door, 'decode'> & { decode(request: DoorRequest): ChatRequest };

/** Anthropic's Messages API (`POST /v1/messages`) as a door of the one pipeline. */
export function messagesDoor(options: MessagesDoorOptions): MessagesDoor {
  return {
    name: 'messages',
    decode(request: DoorRequest): ChatRequest {
      const body = parseMessagesBody(request.body);
      return withAnthropicHeaders(
        normalizeMessagesRequest(body, resolveModel(options.config(), body.model)),
        request.headers,
      );
    },
    reply: () => messagesReplyCodec(),
    error: messagesError,
  };
}
