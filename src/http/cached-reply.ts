import type { Response } from 'express';
import type { CacheLookup } from '../cache/response-cache.ts';
import { completionChunks } from '../chat/completion-accumulator.ts';
import type { ChatCompletion, ChatRequest } from '../chat/types.ts';
import type { ReplyFilter } from '../dlp/reply-filter.ts';
import { sendJsonText } from './json-reply.ts';
import { contextOf } from './request-context.ts';
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
 * Answers a cache hit: the stored reply, or replayed as SSE chunks ending
 * with `[DONE]`; through the exchange's DLP reply filter when there is one.
 * Its usage keeps the counts of the reply when it was first produced and is
 * marked `gateway_cache` (nothing was charged); the request's context keeps
 * that usage, so the observer counts it as saved spend.
 */
export function sendCachedReply(res: Response, request: ChatRequest, lookup: CacheLookup, elapsedMs: number, reply?: ReplyFilter): void {
  const hit = lookup.hit;
  if (!hit) throw new Error('sendCachedReply needs a hit');
  const headers = { ...cacheHeaders(lookup), 'Server-Timing': serverTiming({ cache: lookup.status, total: elapsedMs }) };
  // Filtered whole before a stream starts, so a blocked reply is still a plain error answer.
  const completion = JSON.parse(reply ? reply.completion(hit.completion) : hit.completion) as ChatCompletion;
  if (completion.usage) {
    completion.usage.gateway_cache = { hit: true, type: hit.similarity === undefined ? 'exact' : 'semantic' };
    contextOf(res).cacheHitUsage = completion.usage;
  }
  if (!request.stream) {
    sendJsonText(res, 200, JSON.stringify(completion), headers);
    return;
  }
  startSse(res, headers);
  for (const chunk of completionChunks(completion, request.include_usage)) writeSseData(res, JSON.stringify(chunk));
  endSse(res);
}
