import type { Response } from 'express';
import type { CacheLookup } from '../cache/response-cache.ts';
import { completionChunks } from '../chat/completion-accumulator.ts';
import type { ChatCompletion, ChatRequest } from '../chat/types.ts';
import type { ReplyFilter } from '../dlp/reply-filter.ts';
import { sendJsonText } from './json-reply.ts';
import { serverTiming } from './server-timing.ts';
import { endSse, startSse, writeSseData } from './sse.ts';

/** `X-Cache` (and, on hits, `Age` and `X-Cache-Similarity`) of a reply. */
export function cacheHeaders(lookup: CacheLookup): Record<string, string> {
  const headers: Record<string, string> = { 'X-Cache': lookup.status };
  if (lookup.hit) {
    headers.Age = String(lookup.ageSeconds);
    if (lookup.hit.similarity !== undefined) headers['X-Cache-Similarity'] = lookup.hit.similarity.toFixed(4);
  }
  return headers;
}

/**
 * Answers a cache hit: the stored JSON as it is, or replayed as SSE chunks
 * ending with `[DONE]`; through the exchange's DLP reply filter when there is one.
 */
export async function sendCachedReply(res: Response, request: ChatRequest, lookup: CacheLookup, elapsedMs: number, reply?: ReplyFilter): Promise<void> {
  const hit = lookup.hit;
  if (!hit) throw new Error('sendCachedReply needs a hit');
  const headers = { ...cacheHeaders(lookup), 'Server-Timing': serverTiming({ cache: lookup.status, total: elapsedMs }) };
  if (!request.stream) {
    sendJsonText(res, 200, reply ? await reply.completionAsync(hit.completion) : hit.completion, headers);
    return;
  }
  // Filtered whole before the stream starts, so a blocked reply is still a plain error answer.
  const completion = JSON.parse(reply ? await reply.completionAsync(hit.completion) : hit.completion) as ChatCompletion;
  startSse(res, headers);
  for (const chunk of completionChunks(completion, request.include_usage)) writeSseData(res, JSON.stringify(chunk));
  endSse(res);
}
