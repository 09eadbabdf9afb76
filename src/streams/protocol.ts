/**
 * The stream protocol: how a worker answers the API. Each request has its own
 * Redis stream; every entry has a type field `t` and a data field `d`.
 *
 * | t        | d                                       | when |
 * |----------|-----------------------------------------|------|
 * | `result` | `chat.completion` JSON                  | non-streamed reply (last entry) |
 * | `chunk`  | `chat.completion.chunk` JSON, one or more, a line each | streamed reply |
 * | `end`    | `{}`                                    | streamed reply finished cleanly (last entry) |
 * | `error`  | `{"code":ErrorCode,"message":string}`   | failure (last entry) |
 *
 * The first `result` or `chunk` entry also carries timings in ms: `q` (queue
 * wait) and `u` (upstream time: whole call, or time to first token).
 * `result` and `end` entries carry the token usage: `pt` (prompt) and `ct`
 * (completion), so the API can count tokens without parsing payloads, and,
 * when not zero, the token types inside them: `cr` (prompt tokens read from
 * the upstream's prompt cache), `cw` (prompt tokens written to it), `ch` (of
 * `cw`, those kept for an hour) and `rt` (completion tokens spent reasoning).
 * Chunk and result payloads are forwarded to the client as they are, so the API
 * never re-serializes them on the hot path. A worker writes the chunks of one
 * upstream read as one `chunk` entry; {@link parseEntries} hands them to readers
 * one entry each (a newline in JSON can only be whitespace: it is written as a space).
 *
 * This module owns the protocol: the entry kinds, which of them end a reply,
 * and how an error crosses it; `reply-writer.ts` beside it is the one writer
 * (workers, and the request coalescer when a leader fails before enqueuing).
 */

import { countsOf } from '../chat/token-usage.ts';
import type { Usage } from '../chat/types.ts';
import { errorFromCode, type GatewayError } from '../errors/catalog.ts';

export type StreamEntryType = 'result' | 'chunk' | 'end' | 'error';

export interface StreamEntry {
  id: string;
  t: StreamEntryType;
  d: string;
  /** Queue wait, ms (first entry only). */
  q?: number;
  /** Upstream time, ms (first entry only). */
  u?: number;
  /** Prompt tokens (`result`, `end`). */
  pt?: number;
  /** Completion tokens (`result`, `end`). */
  ct?: number;
  /** Of `pt`, read from the upstream's prompt cache (`result`, `end`; absent when 0). */
  cr?: number;
  /** Of `pt`, written to the upstream's prompt cache (absent when 0). */
  cw?: number;
  /** Of `cw`, written for an hour (absent when 0). */
  ch?: number;
  /** Of `ct`, reasoning tokens (absent when 0). */
  rt?: number;
}

/** The token-type fields of an entry beyond `pt` and `ct`, in {@link entryFields} order. */
const DETAIL_FIELDS = [
  ['cr', 'cachedRead'],
  ['cw', 'cacheWrite'],
  ['ch', 'cacheWrite1h'],
  ['rt', 'reasoning'],
] as const;

/** The entry kinds after which nothing more is written. */
const TERMINAL: ReadonlySet<string> = new Set<StreamEntryType>(['result', 'end', 'error']);

/** True for `result`, `end` and `error`: the reply is over. */
export function isTerminal(type: string): boolean {
  return TERMINAL.has(type);
}

/** The `d` of an `error` entry. */
export function encodeError(err: Pick<GatewayError, 'code' | 'message'>): string {
  return JSON.stringify({ code: err.code, message: err.message });
}

/** The error an `error` entry carries, as the catalog's class for its code. */
export function decodeError(entry: Pick<StreamEntry, 'd'>): GatewayError {
  try {
    const payload = JSON.parse(entry.d) as { code?: unknown; message?: unknown };
    if (typeof payload.code === 'string' && typeof payload.message === 'string')
      return errorFromCode(payload.code, payload.message);
  } catch {
    // Falls through: an unreadable payload is an internal error, not a crash of the reader.
  }
  return errorFromCode('internal_error', 'The worker sent an unreadable error.');
}

/** Redis key of the reply stream of a job. */
export function responseStreamKey(prefix: string, jobId: string): string {
  return `${prefix}:resp:${jobId}`;
}

/** Redis key whose existence tells workers a job was cancelled. */
export function cancelKey(prefix: string, jobId: string): string {
  return `${prefix}:cancel:${jobId}`;
}

/** Pub/sub channel on which cancellations are announced (message: job id). */
export function cancelChannel(prefix: string): string {
  return `${prefix}:cancel`;
}

/** Flattens an entry's fields for XADD. */
export function entryFields(
  t: StreamEntryType,
  d: string,
  timing?: { q: number; u: number },
  usage?: Pick<Usage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details' | 'completion_tokens_details'>,
): string[] {
  const fields = ['t', t, 'd', d];
  if (timing) fields.push('q', String(Math.round(timing.q)), 'u', String(Math.round(timing.u)));
  if (usage) {
    fields.push('pt', String(usage.prompt_tokens), 'ct', String(usage.completion_tokens));
    if (usage.prompt_tokens_details || usage.completion_tokens_details) {
      const counts = countsOf(usage);
      for (const [field, type] of DETAIL_FIELDS) if (counts[type] > 0) fields.push(field, String(counts[type]));
    }
  }
  return fields;
}

/** The `d` of a `chunk` entry carrying `chunks`, in order. */
export function joinChunks(chunks: readonly string[]): string {
  let d = '';
  for (const json of chunks) {
    const line = json.includes('\n') ? json.replaceAll('\n', ' ') : json;
    d = d === '' ? line : `${d}\n${line}`;
  }
  return d;
}

/** One XREAD entry `[id, [field, value, ...]]` as the entries it stands for: a `chunk` entry's lines one entry each, with its id. */
export function parseEntries(id: string, fields: readonly string[]): StreamEntry[] {
  const entry = parseEntry(id, fields);
  if (entry.t !== 'chunk' || !entry.d.includes('\n')) return [entry];
  return entry.d.split('\n').map((d, i) => (i === 0 ? { ...entry, d } : { id, t: 'chunk', d }));
}

/** Parses one XREAD entry `[id, [field, value, ...]]`. */
export function parseEntry(id: string, fields: readonly string[]): StreamEntry {
  const entry: StreamEntry = { id, t: 'error', d: '' };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const value = fields[i + 1] as string;
    switch (fields[i]) {
      case 't':
        entry.t = value as StreamEntryType;
        break;
      case 'd':
        entry.d = value;
        break;
      case 'q':
        entry.q = Number(value);
        break;
      case 'u':
        entry.u = Number(value);
        break;
      case 'pt':
        entry.pt = Number(value);
        break;
      case 'ct':
        entry.ct = Number(value);
        break;
      case 'cr':
        entry.cr = Number(value);
        break;
      case 'cw':
        entry.cw = Number(value);
        break;
      case 'ch':
        entry.ch = Number(value);
        break;
      case 'rt':
        entry.rt = Number(value);
        break;
    }
  }
  return entry;
}
