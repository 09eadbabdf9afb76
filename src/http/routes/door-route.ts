import type { Request, Response } from 'express';
import type { ChatRequest } from '../../chat/types.ts';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import { ProviderTimeoutError } from '../../errors/catalog.ts';
import type { Logger } from '../../observability/logger.ts';
import { noteReplyEntry, startReplyFacts } from '../../observability/reply-facts.ts';
import type { Door, DoorRequest, ReplyCodec } from '../../pipeline/door.ts';
import type { ChatDispatcher, Dispatch } from '../../queue/chat-dispatcher.ts';
import { dispatchMiss } from '../../queue/dispatch-miss.ts';
import { priorityFor } from '../../queue/priorities.ts';
import { decodeError } from '../../streams/protocol.ts';
import { StreamAbortedError, StreamDeadlineError } from '../../streams/stream-reader.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';
import type { DirectRoute } from '../direct-routes.ts';
import { toGatewayError } from '../error-handler.ts';
import { sendJsonText } from '../json-reply.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { contextOf } from '../request-context.ts';
import { abortOnClose, dlpStep, relayed } from './chat-cache-step.ts';
import { governed } from './chat-governance.ts';
import { MODEL_HEADER } from './chat-routed.ts';

/** Dependencies of {@link doorRoute}. */
export interface DoorRouteDeps {
  door: Door;
  path: string;
  dispatcher: ChatDispatcher;
  logger: Logger;
  maxBodyBytes: number;
  /** DLP, as on the chat route. @defaultValue none: nothing is scanned */
  dlp?: DlpGuard;
  /** Per-key models, token limits, budgets and usage. @defaultValue none */
  governor?: KeyGovernor;
}

/**
 * A door's entry point, made of the chat route's own steps (validate and
 * route, DLP, key governance, rate limit, dispatch, relay) with the door's
 * decoding and reply codec. Stands in until the one request pipeline
 * (src/pipeline/) runs every door; until then the caches and fallback
 * routing stay on the chat route: a cached reply is in the chat shape.
 */
export function doorRoute(deps: DoorRouteDeps): DirectRoute {
  const handler = async (req: Request, res: Response): Promise<void> => {
    const context = contextOf(res);
    const from: DoorRequest = { body: req.body, headers: req.headers, owner: context.principal?.owner ?? 'anonymous' };
    const decoded = await deps.door.decode(from);
    const routed = deps.dispatcher.route(decoded);
    const provider = routed.provider;
    const { request, reply } = deps.dlp ? dlpStep(deps.dlp, routed.request, context) : { request: routed.request, reply: undefined };
    context.model = request.model;
    context.provider = provider.name;
    res.setHeader(MODEL_HEADER, request.model);
    deps.governor?.checkModel(context.principal, request.model);
    const admission = await settleRateLimit(res);
    const codec = deps.door.reply(request, from);
    await governed(deps.governor, res, request, async () => {
      const dispatch = await dispatchMiss(deps.dispatcher, request, provider, {
        requestId: context.requestId,
        lookup: undefined,
        admission,
        signal: abortOnClose(res),
        priority: priorityFor(request.service_tier),
        span: context.span,
      });
      startReplyFacts(res, { streamed: request.stream, coalesced: false });
      const filter = reply;
      const encode = {
        completion: (json: string) => codec.completion(filter ? filter.completion(json) : json),
        chunk: (json: string) => codec.chunk(filter ? filter.chunk(json) : json),
        flush: () => (filter ? filter.flush().map((held) => codec.chunk(held)).join('') : ''),
      };
      await relayed(context, request.stream, answer(res, dispatch, request, codec, encode, deps));
    });
    // After the reply: a failure to store is logged, the client has its answer.
    await codec.settled?.().catch((err: unknown) => deps.logger.warn({ err: (err as Error).message, requestId: context.requestId }, `${deps.door.name}: reply not stored`));
  };
  return { method: 'POST', path: deps.path, handler };
}

interface Encode {
  completion(json: string): string;
  chunk(json: string): string;
  flush(): string;
}

async function answer(res: Response, dispatch: Dispatch, request: ChatRequest, codec: ReplyCodec, encode: Encode, deps: DoorRouteDeps): Promise<void> {
  const cancel = () => void deps.dispatcher.cancel(dispatch.jobId, dispatch.provider.name).catch(() => {});
  let started = false;
  try {
    for await (const entry of dispatch.entries) {
      noteReplyEntry(res, entry);
      if (entry.t === 'error') {
        if (!started) throw decodeError(entry);
        res.end(codec.fail(decodeError(entry), contextOf(res).requestId));
        return;
      }
      if (entry.t === 'result') {
        sendJsonText(res, 200, encode.completion(entry.d));
        return;
      }
      if (!request.stream) continue;
      if (!started) {
        started = true;
        startEventStream(res);
      }
      if (entry.t === 'chunk') res.write(encode.chunk(entry.d));
      else if (entry.t === 'end') {
        res.end(encode.flush() + codec.end());
        return;
      }
    }
  } catch (err) {
    if (err instanceof StreamAbortedError || err instanceof StreamDeadlineError) cancel();
    if (err instanceof StreamAbortedError) return;
    const gatewayError = err instanceof StreamDeadlineError ? new ProviderTimeoutError(`${dispatch.provider.name} did not answer within the gateway's deadline.`) : toGatewayError(err, deps.maxBodyBytes);
    if (!started) throw gatewayError;
    contextOf(res).errorCode = gatewayError.code;
    res.end(codec.fail(gatewayError, contextOf(res).requestId));
  }
}

function startEventStream(res: Response): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
}
