import type { Response } from 'express';
import type { CacheLookup } from '../cache/response-cache.ts';
import { completionChunks } from '../chat/completion-accumulator.ts';
import type { ChatCompletion } from '../chat/types.ts';
import { gatewayCacheMark, withUsageMark } from '../chat/usage-mark.ts';
import { ProviderTimeoutError } from '../errors/catalog.ts';
import type { ReplyCodec } from '../pipeline/door.ts';
import type { Answerer, Exchange } from '../pipeline/exchange.ts';
import { noteReplyEntry } from '../pipeline/reply-facts.ts';
import { elapsedMs } from '../pipeline/request-context.ts';
import { serverTiming } from '../pipeline/server-timing.ts';
import type { ChatDispatcher, Dispatch } from '../queue/chat-dispatcher.ts';
import { decodeError, type StreamEntry } from '../streams/protocol.ts';
import { StreamAbortedError, StreamDeadlineError } from '../streams/stream-reader.ts';
import { toGatewayError } from './error-handler.ts';
import { sendJsonText } from './json-reply.ts';
import { endSse, startSse, writeSse } from './sse.ts';

/**
 * Answers an HTTP client in its door's protocol: a cache hit, or a job's
 * reply entries, as one JSON body or as SSE, through the exchange's DLP reply
 * filter when there is one. A client that leaves, or a reply that misses its
 * deadline, cancels the job (a coalesced one only when nobody else reads it).
 */
export class HttpAnswerer implements Answerer {
  private readonly res: Response;
  private readonly codec: ReplyCodec;
  private readonly dispatcher: ChatDispatcher;
  private readonly maxBodyBytes: number;

  constructor(res: Response, codec: ReplyCodec, dispatcher: ChatDispatcher, maxBodyBytes: number) {
    this.res = res;
    this.codec = codec;
    this.dispatcher = dispatcher;
    this.maxBodyBytes = maxBodyBytes;
  }

  async hit(exchange: Exchange, lookup: CacheLookup): Promise<void> {
    const { res, codec } = this;
    const stored = (lookup.hit as NonNullable<CacheLookup['hit']>).completion;
    const filter = exchange.replyFilter;
    const headers = { 'Server-Timing': serverTiming({ cache: lookup.status, total: elapsedMs(exchange.context) }) };
    // Filtered whole before the stream starts, so a blocked reply is still a plain error answer.
    const completion = filter ? await filter.completionAsync(stored) : stored;
    // The usage it replays is marked as the gateway cache's, and kept for the saved spend of /stats.
    const mark = gatewayCacheMark(lookup.hit as NonNullable<CacheLookup['hit']>);
    if (codec.replay) {
      // A reply in the door's own shape (a native Responses reply): the codec replays it, its body left as stored.
      const replay = codec.replay(completion);
      if (replay.usage) exchange.context.cacheHitUsage = { ...replay.usage, gateway_cache: mark };
      if (!exchange.request.stream) {
        await this.sendJson(exchange, codec.completion(replay.completion), headers);
        return;
      }
      startSse(res, headers);
      writeSse(res, replay.chunks.map((chunk) => codec.chunk(chunk)).join(''));
      await this.endStream(exchange);
      return;
    }
    if (!exchange.request.stream) {
      const marked = withUsageMark(completion, mark);
      if (marked.usage) exchange.context.cacheHitUsage = marked.usage;
      await this.sendJson(exchange, codec.completion(marked.json), headers);
      return;
    }
    const parsed = JSON.parse(completion) as ChatCompletion;
    if (parsed.usage) {
      parsed.usage.gateway_cache = mark;
      exchange.context.cacheHitUsage = parsed.usage;
    }
    startSse(res, headers);
    let frames = '';
    for (const chunk of completionChunks(parsed, exchange.request.include_usage))
      frames += codec.chunk(JSON.stringify(chunk));
    writeSse(res, frames);
    await this.endStream(exchange);
  }

  /** A JSON reply, sent once the codec kept what it keeps of it. */
  private async sendJson(exchange: Exchange, body: string, headers: Record<string, string>): Promise<void> {
    if (this.codec.keep) await this.codec.keep(exchange.request);
    sendJsonText(this.res, 200, body, headers);
  }

  /** A stream's clean end: its closing frames are held until the codec kept what it keeps of the reply. */
  private async endStream(exchange: Exchange): Promise<void> {
    const closing = this.codec.end();
    if (this.codec.keep) await this.codec.keep(exchange.request);
    endSse(this.res, closing);
  }

  async relay(exchange: Exchange, dispatch: Dispatch): Promise<void> {
    const { lookup } = exchange;
    const cancel = () => {
      (lookup ? lookup.mayCancel() : Promise.resolve(true))
        .then((ok) => (ok ? this.dispatcher.cancel(dispatch.jobId, dispatch.provider.name) : undefined))
        .catch(() => {});
    };
    try {
      if (exchange.request.stream) await this.streamed(exchange, dispatch, cancel);
      else await this.once(exchange, dispatch);
    } catch (err) {
      if (err instanceof StreamAbortedError || err instanceof StreamDeadlineError) cancel();
      if (err instanceof StreamDeadlineError)
        throw new ProviderTimeoutError(`${dispatch.provider.name} did not answer within the gateway's deadline.`);
      throw err;
    }
  }

  private async once(exchange: Exchange, dispatch: Dispatch): Promise<void> {
    const filter = exchange.replyFilter;
    for await (const entry of dispatch.entries) {
      noteReplyEntry(exchange.context, entry);
      if (entry.t === 'error') throw decodeError(entry);
      if (entry.t === 'result') {
        await this.sendJson(exchange, this.codec.completion(filter ? await filter.completionAsync(entry.d) : entry.d), {
          'Server-Timing': timingOf(exchange, entry),
        });
        return;
      }
    }
  }

  private async streamed(exchange: Exchange, dispatch: Dispatch, cancel: () => void): Promise<void> {
    const { res, codec } = this;
    const { context } = exchange;
    const filter = exchange.replyFilter;
    let started = false;
    try {
      for await (const entry of dispatch.entries) {
        noteReplyEntry(context, entry);
        if (entry.t === 'error') {
          if (!started) throw decodeError(entry);
          const err = decodeError(entry);
          endSse(res, codec.fail(err, context.requestId), err);
          return;
        }
        if (!started) {
          started = true;
          startSse(res, { 'Server-Timing': timingOf(exchange, entry) });
        }
        if (entry.t === 'chunk') writeSse(res, codec.chunk(filter ? await filter.chunkAsync(entry.d) : entry.d));
        else if (entry.t === 'end') {
          if (filter) for (const held of await filter.flushAsync()) writeSse(res, codec.chunk(held));
          await this.endStream(exchange);
          return;
        }
      }
    } catch (err) {
      if (!started || err instanceof StreamAbortedError) throw err;
      const failure =
        err instanceof StreamDeadlineError
          ? new ProviderTimeoutError(`${dispatch.provider.name} stopped sending tokens.`)
          : toGatewayError(err, this.maxBodyBytes);
      if (err instanceof StreamDeadlineError) cancel();
      endSse(res, codec.fail(failure, context.requestId), failure);
    }
  }
}

/** `Server-Timing` of the first reply entry: the worker's queue and upstream times, the gateway's total, and the attempts when the request was routed. */
function timingOf(exchange: Exchange, entry: StreamEntry): string {
  const { context } = exchange;
  return serverTiming({ queue: entry.q, upstream: entry.u, total: elapsedMs(context), attempts: context.attempts });
}
