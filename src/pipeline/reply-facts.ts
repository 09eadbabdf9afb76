import type { StreamEntry } from '../streams/protocol.ts';
import { elapsedMs, type RequestContext } from './request-context.ts';

/**
 * What the pipeline learns from a reply stream, kept on the request's context
 * (`reply`) for the governor (usage to charge) and the request observer (log
 * line and metrics). Present only when the request was dispatched to a
 * provider queue, so a cache hit or a request refused before the queue never
 * counts as a provider call. All durations in ms.
 */
export interface ReplyFacts {
  /** Whether the client asked for SSE. */
  streamed: boolean;
  /** This request read the reply of an identical request in flight: its tokens were counted there. */
  coalesced: boolean;
  /** Queue wait reported by the worker (`q` on the first entry). */
  queueMs?: number;
  /** Upstream time reported by the worker (`u`): whole call, or time to first token when streamed. */
  upstreamMs?: number;
  /** Gateway time from receiving the request to the first reply entry. */
  firstEntryMs?: number;
  /** Streamed replies: gateway time from receiving the request to the first chunk (time to first token). */
  firstTokenMs?: number;
  /** `result`, `end` or `error` once the reply finished. */
  terminal?: 'result' | 'end' | 'error';
  promptTokens?: number;
  completionTokens?: number;
}

/** Marks the request as dispatched; call once the job is on the queue. */
export function startReplyFacts(context: RequestContext, facts: { streamed: boolean; coalesced: boolean }): void {
  context.reply = { streamed: facts.streamed, coalesced: facts.coalesced };
}

/** Notes one reply entry: timings from the first, usage from the terminal one. Cheap enough for every chunk. */
export function noteReplyEntry(context: RequestContext, entry: StreamEntry): void {
  const facts = context.reply;
  if (!facts) return;
  if (facts.firstEntryMs === undefined) {
    facts.firstEntryMs = elapsedMs(context);
    if (entry.q !== undefined && Number.isFinite(entry.q)) facts.queueMs = entry.q;
    if (entry.u !== undefined && Number.isFinite(entry.u)) facts.upstreamMs = entry.u;
    if (entry.t === 'chunk') facts.firstTokenMs = facts.firstEntryMs;
  }
  if (entry.t === 'chunk') return;
  facts.terminal = entry.t;
  if (entry.pt !== undefined && Number.isFinite(entry.pt)) facts.promptTokens = entry.pt;
  if (entry.ct !== undefined && Number.isFinite(entry.ct)) facts.completionTokens = entry.ct;
}
