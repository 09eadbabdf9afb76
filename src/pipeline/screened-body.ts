import { withTexts } from '../providers/openai/responses-api.ts';
import type { Exchange } from './exchange.ts';

/**
 * The Responses body of a native Responses exchange with the texts as DLP
 * left them (the request's messages, in the order of the body's text paths):
 * what the upstream is sent and what the cache keys on. Computed once per exchange.
 */
export function screenedBody(exchange: Exchange): Record<string, unknown> {
  const kind = exchange.kind;
  if (kind?.type !== 'responses') throw new Error('screenedBody: not a native Responses exchange');
  const cached = bodies.get(exchange);
  if (cached && cached.request === exchange.request) return cached.body;
  const body = withTexts(
    kind.body,
    kind.paths,
    exchange.request.messages.map((m) => m.content as string),
  );
  bodies.set(exchange, { request: exchange.request, body });
  return body;
}

/** By exchange, with the request it was computed from: a step that replaces the request gets a new body. */
const bodies = new WeakMap<Exchange, { request: Exchange['request']; body: Record<string, unknown> }>();
