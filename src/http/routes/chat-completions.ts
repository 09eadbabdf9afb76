import type { Request, Response } from 'express';
import type { DirectRoute } from '../direct-routes.ts';
import type { Principal } from '../../auth/principal.ts';
import type { CacheLookup, ResponseCache } from '../../cache/response-cache.ts';
import { chatCompletionRequestSchema, describeIssues, normalizeChatRequest } from '../../chat/request-schema.ts';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import type { ChatRequest } from '../../chat/types.ts';
import { GatewayError, InvalidRequestError, ProviderTimeoutError, errorFromCode } from '../../errors/catalog.ts';
import type { Logger } from '../../observability/logger.ts';
import { noteReplyEntry, startReplyFacts } from '../../observability/reply-facts.ts';
import type { ChatDispatcher, Dispatch } from '../../queue/chat-dispatcher.ts';
import { priorityFor } from '../../queue/priorities.ts';
import type { StreamEntry, StreamErrorPayload } from '../../streams/protocol.ts';
import { StreamAbortedError, StreamDeadlineError } from '../../streams/stream-reader.ts';
import { cacheHeaders, sendCachedReply } from '../cached-reply.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { toGatewayError } from '../error-handler.ts';
import { sendJsonText } from '../json-reply.ts';
import { serverTiming } from '../server-timing.ts';
import { endSse, failSse, startSse, writeSseData } from '../sse.ts';

/** Dependencies of the chat completions route. */
export interface ChatCompletionsDeps {
  dispatcher: ChatDispatcher;
  logger: Logger;
  maxBodyBytes: number;
  /** Exact and semantic response caches (src/cache); without them every request goes to the provider. */
  cache?: ResponseCache;
  /** DLP (src/dlp): redacts, blocks or counts personal data and secrets; without it nothing is scanned. */
  dlp?: DlpGuard;
}

/** Validates a body into a {@link ChatRequest}; 400 naming the bad fields otherwise. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
  }
  const parsed = chatCompletionRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeIssues(parsed.error)}`);
  return normalizeChatRequest(parsed.data);
}

function entryError(entry: StreamEntry): GatewayError {
  try {
    const payload = JSON.parse(entry.d) as StreamErrorPayload;
    return errorFromCode(payload.code, payload.message);
  } catch {
    return errorFromCode('internal_error', 'The worker sent an unreadable error.');
  }
}

function elapsed(res: Response): number {
  return performance.now() - (res.locals.startedAt as number);
}

/** `POST /v1/chat/completions`: enqueue, then answer as JSON or SSE from the reply stream. */
export function chatCompletionsRoute(deps: ChatCompletionsDeps): DirectRoute {
  const handler = async (req: Request, res: Response): Promise<void> => {
    const parsed = parseChatRequest(req.body);
    const provider = deps.dispatcher.route(parsed);
    // Every message is scanned before the cache, the queue and the provider see it; block mode throws pii_detected
    const request = deps.dlp ? deps.dlp.screen(parsed, res.locals) : parsed;
    res.locals.model = request.model;
    res.locals.provider = provider.name;

    // Keys hash the request as it stands here (redacted); a hit never touches the queue.
    // The rate-limit decision is awaited with the cache read (one round trip for both); a throttled request stops here.
    const owner = (res.locals.principal as Principal | undefined)?.owner ?? 'anonymous';
    const limited = settleRateLimit(res);
    let lookup: CacheLookup | undefined;
    if (deps.cache) lookup = await deps.cache.lookup(request, owner, req.headers['cache-control'], limited);
    else await limited;
    res.locals.cacheStatus = lookup?.status ?? 'BYPASS';
    if (lookup?.hit) return sendCachedReply(res, request, lookup, elapsed(res));
    if (lookup) res.set(cacheHeaders(lookup));

    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const send = (jobId?: string) =>
      deps.dispatcher.dispatch(request, provider, {
        requestId: String(res.locals.requestId),
        signal: abort.signal,
        priority: priorityFor(request.service_tier),
        ...(jobId ? { jobId } : {}),
      });
    // A coalesced miss follows an identical request in flight; its job is cancelled only when nobody else reads it.
    const dispatch = lookup ? await lookup.dispatch(provider, abort.signal, send) : await send();
    startReplyFacts(res, { streamed: request.stream, coalesced: lookup?.coalesced ?? false }); // observability: timings and tokens
    const cancel = () => {
      (lookup ? lookup.mayCancel() : Promise.resolve(true)).then((ok) => (ok ? deps.dispatcher.cancel(dispatch.jobId, dispatch.provider.name) : undefined)).catch(() => {});
    };
    try {
      if (request.stream) await replyStreamed(res, dispatch, deps, cancel);
      else await replyOnce(res, dispatch);
    } catch (err) {
      if (err instanceof StreamAbortedError || err instanceof StreamDeadlineError) cancel();
      if (err instanceof StreamAbortedError) return;
      if (err instanceof StreamDeadlineError) {
        throw new ProviderTimeoutError(`${provider.name} did not answer within the gateway's deadline.`);
      }
      throw err;
    }
  };
  return { method: 'POST', path: '/v1/chat/completions', handler };
}

async function replyOnce(res: Response, dispatch: Dispatch): Promise<void> {
  for await (const entry of dispatch.entries) {
    noteReplyEntry(res, entry);
    if (entry.t === 'error') throw entryError(entry);
    if (entry.t === 'result') {
      sendJsonText(res, 200, entry.d, { 'Server-Timing': serverTiming({ queue: entry.q, upstream: entry.u, total: elapsed(res) }) });
      return;
    }
  }
}

async function replyStreamed(res: Response, dispatch: Dispatch, deps: ChatCompletionsDeps, cancel: () => void): Promise<void> {
  let started = false;
  try {
    for await (const entry of dispatch.entries) {
      noteReplyEntry(res, entry);
      if (entry.t === 'error') {
        if (!started) throw entryError(entry);
        failSse(res, entryError(entry));
        return;
      }
      if (!started) {
        started = true;
        startSse(res, { 'Server-Timing': serverTiming({ queue: entry.q, upstream: entry.u, total: elapsed(res) }) });
      }
      if (entry.t === 'chunk') writeSseData(res, entry.d);
      else if (entry.t === 'end') {
        endSse(res);
        return;
      }
    }
  } catch (err) {
    if (!started || err instanceof StreamAbortedError) throw err;
    const gatewayError =
      err instanceof StreamDeadlineError
        ? new ProviderTimeoutError(`${dispatch.provider.name} stopped sending tokens.`)
        : toGatewayError(err, deps.maxBodyBytes);
    if (err instanceof StreamDeadlineError) cancel();
    failSse(res, gatewayError);
  }
}
