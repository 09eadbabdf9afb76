import type { Response } from 'express';
import type { CacheLookup } from '../../cache/response-cache.ts';
import type { ReplyFilter } from '../../dlp/reply-filter.ts';
import { ProviderTimeoutError } from '../../errors/catalog.ts';
import { noteReplyEntry } from '../../observability/reply-facts.ts';
import type { ChatDispatcher, Dispatch } from '../../queue/chat-dispatcher.ts';
import { decodeError, type StreamEntry } from '../../streams/protocol.ts';
import { StreamAbortedError, StreamDeadlineError } from '../../streams/stream-reader.ts';
import { toGatewayError } from '../error-handler.ts';
import { sendJsonText } from '../json-reply.ts';
import { contextOf, elapsedMs } from '../request-context.ts';
import { serverTiming } from '../server-timing.ts';
import { endSse, failSse, startSse, writeSseData } from '../sse.ts';

/** What {@link answerDispatch} needs besides the reply. */
export interface AnswerOptions {
  streamed: boolean;
  /** The cache lookup of a miss: a job others coalesced on is cancelled only when nobody else reads it. */
  lookup: CacheLookup | undefined;
  dispatcher: ChatDispatcher;
  maxBodyBytes: number;
  /** Scans or restores the reply (DLP_SCAN_REPLIES, DLP_RESTORE). @defaultValue none: relayed untouched */
  reply?: ReplyFilter | undefined;
}

/**
 * Answers the client from a job's reply entries, as one JSON body or as SSE.
 * A client that leaves, or a reply that misses its deadline, cancels the job.
 */
export async function answerDispatch(res: Response, dispatch: Dispatch, options: AnswerOptions): Promise<void> {
  const { lookup, dispatcher } = options;
  // A coalesced job is cancelled only when nobody else reads it.
  const cancel = () => {
    (lookup ? lookup.mayCancel() : Promise.resolve(true)).then((ok) => (ok ? dispatcher.cancel(dispatch.jobId, dispatch.provider.name) : undefined)).catch(() => {});
  };
  try {
    if (options.streamed) await replyStreamed(res, dispatch, options.maxBodyBytes, cancel, options.reply);
    else await replyOnce(res, dispatch, options.reply);
  } catch (err) {
    if (err instanceof StreamAbortedError || err instanceof StreamDeadlineError) cancel();
    if (err instanceof StreamAbortedError) return;
    if (err instanceof StreamDeadlineError) {
      throw new ProviderTimeoutError(`${dispatch.provider.name} did not answer within the gateway's deadline.`);
    }
    throw err;
  }
}

/** `Server-Timing` of the first reply entry: the worker's queue and upstream times, the gateway's total, and the attempts when the request was routed. */
function timingOf(res: Response, entry: StreamEntry): string {
  const context = contextOf(res);
  return serverTiming({ queue: entry.q, upstream: entry.u, total: elapsedMs(context), attempts: context.attempts });
}

async function replyOnce(res: Response, dispatch: Dispatch, reply: ReplyFilter | undefined): Promise<void> {
  for await (const entry of dispatch.entries) {
    noteReplyEntry(res, entry);
    if (entry.t === 'error') throw decodeError(entry);
    if (entry.t === 'result') {
      sendJsonText(res, 200, reply ? await reply.completionAsync(entry.d) : entry.d, { 'Server-Timing': timingOf(res, entry) });
      return;
    }
  }
}

async function replyStreamed(res: Response, dispatch: Dispatch, maxBodyBytes: number, cancel: () => void, reply: ReplyFilter | undefined): Promise<void> {
  let started = false;
  try {
    for await (const entry of dispatch.entries) {
      noteReplyEntry(res, entry);
      if (entry.t === 'error') {
        if (!started) throw decodeError(entry);
        failSse(res, decodeError(entry));
        return;
      }
      if (!started) {
        started = true;
        startSse(res, { 'Server-Timing': timingOf(res, entry) });
      }
      if (entry.t === 'chunk') writeSseData(res, reply ? await reply.chunkAsync(entry.d) : entry.d);
      else if (entry.t === 'end') {
        if (reply) for (const held of await reply.flushAsync()) writeSseData(res, held);
        endSse(res);
        return;
      }
    }
  } catch (err) {
    if (!started || err instanceof StreamAbortedError) throw err;
    const gatewayError =
      err instanceof StreamDeadlineError
        ? new ProviderTimeoutError(`${dispatch.provider.name} stopped sending tokens.`)
        : toGatewayError(err, maxBodyBytes);
    if (err instanceof StreamDeadlineError) cancel();
    failSse(res, gatewayError);
  }
}
