import type { Response } from 'express';
import type { CacheLookup } from '../cache/response-cache.ts';
import { completionChunks } from '../chat/completion-accumulator.ts';
import type { ChatCompletion, ChatRequest, GatewayCacheMark, Usage } from '../chat/types.ts';
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
  const mark: GatewayCacheMark = { hit: true, type: hit.similarity === undefined ? 'exact' : 'semantic' };
  // Filtered whole before a stream starts, so a blocked reply is still a plain error answer.
  const stored = reply ? reply.completion(hit.completion) : hit.completion;
  if (!request.stream) {
    const marked = withUsageMark(stored, mark);
    if (marked.usage) contextOf(res).cacheHitUsage = marked.usage;
    sendJsonText(res, 200, marked.json, headers);
    return;
  }
  const completion = JSON.parse(stored) as ChatCompletion;
  if (completion.usage) {
    completion.usage.gateway_cache = mark;
    contextOf(res).cacheHitUsage = completion.usage;
  }
  startSse(res, headers);
  for (const chunk of completionChunks(completion, request.include_usage)) writeSseData(res, JSON.stringify(chunk));
  endSse(res);
}

const USAGE_KEY = '"usage":';

/**
 * The stored `chat.completion` JSON with `mark` added to its usage, and that
 * usage. The gateway writes `usage` as the reply's last field, so only that
 * tail is parsed and rewritten (a hit is served without parsing the whole
 * reply); a reply of another shape is parsed whole. A key inside a string
 * cannot match: its quotes are escaped there.
 */
export function withUsageMark(json: string, mark: GatewayCacheMark): { json: string; usage?: Usage } {
  const at = json.lastIndexOf(USAGE_KEY);
  if (at > 0 && json.endsWith('}')) {
    try {
      const usage = JSON.parse(json.slice(at + USAGE_KEY.length, -1)) as Usage | null;
      if (usage !== null && typeof usage === 'object' && typeof usage.prompt_tokens === 'number') {
        const marked = { ...usage, gateway_cache: mark };
        return { json: `${json.slice(0, at + USAGE_KEY.length)}${JSON.stringify(marked)}}`, usage: marked };
      }
    } catch {
      // Not the last field: parsed whole below.
    }
  }
  const completion = JSON.parse(json) as ChatCompletion;
  if (!completion.usage) return { json };
  completion.usage.gateway_cache = mark;
  return { json: JSON.stringify(completion), usage: completion.usage };
}
