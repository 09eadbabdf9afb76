import { z } from 'zod';
import { refineAnalyzerFindings } from './analyzer-findings.ts';
import { ANALYZER_DEFAULT_ENTITIES, isEntityType, type EntityType } from './entities.ts';
import type { Candidate } from './recognizer.ts';

/** Options of {@link AnalyzerClient}: the settings DLP_ANALYZER_*. */
export interface AnalyzerClientOptions {
  /** Base URL of a Presidio analyzer, e.g. `http://presidio-analyzer:3000` (DLP_ANALYZER_URL). */
  url: string;
  /**
   * Time budget of one call, connection included (DLP_ANALYZER_TIMEOUT_MS).
   * @defaultValue 500
   */
  timeoutMs?: number;
  /**
   * Entity types asked for (DLP_ANALYZER_ENTITIES).
   * @defaultValue {@link ANALYZER_DEFAULT_ENTITIES}
   */
  entities?: readonly EntityType[];
  /**
   * Language code sent with each text (DLP_ANALYZER_LANGUAGE).
   * @defaultValue `en`
   */
  language?: string;
}

/** Why a call failed; the label of gateway_dlp_analyzer_failures_total. */
export type AnalyzerFailureReason = 'timeout' | 'unreachable' | 'http_status' | 'bad_reply';

/** The analyzer could not screen a text. Its message names the reason only, never the text. */
export class AnalyzerFailure extends Error {
  readonly reason: AnalyzerFailureReason;
  constructor(reason: AnalyzerFailureReason, message: string) {
    super(message);
    this.name = 'AnalyzerFailure';
    this.reason = reason;
  }
}

const replySchema = z.array(
  z.object({
    entity_type: z.string(),
    start: z.number().int().nonnegative(),
    end: z.number().int().nonnegative(),
    score: z.number(),
  }),
);

/**
 * Findings of one type that only a space separates are one value: spaCy
 * splits names at an initial ("Vanessa P." and "Hertzog"), and a name
 * redacted in two pieces gets two placeholders for one person.
 */
function joinFragments(list: Candidate[], text: string): Candidate[] {
  if (list.length < 2) return list;
  list.sort((a, b) => a.start - b.start);
  const joined: Candidate[] = [list[0]!];
  for (let i = 1; i < list.length; i++) {
    const previous = joined[joined.length - 1]!;
    const next = list[i]!;
    if (next.entity === previous.entity && next.start === previous.end + 1 && text[previous.end] === ' ') {
      previous.end = next.end;
      previous.key = `${previous.key} ${next.key}`;
      previous.score = Math.max(previous.score, next.score);
    } else {
      joined.push(next);
    }
  }
  return joined;
}

/**
 * Texts are sent as one document, joined by blank lines, so a request of
 * twenty messages costs one round trip; an entity that would straddle two
 * texts is dropped (a language model does not join paragraphs this far apart).
 */
const SEPARATOR = '\n\n\n';
/** A text with no letter holds no name, place or organisation: not sent. */
const HAS_LETTER = /\p{L}/u;
const HAS_SURROGATE = /[\uD800-\uDFFF]/;
const JSON_START = /^\s*[[{]/;
/** A JSON string literal, and the colon after it when it is a key. */
const JSON_STRING = /"((?:[^"\\\n]|\\.)*)"(\s*:)?/g;
const BARE_NUMBER = /^\d{9,}$/;
/** A placeholder of an earlier turn (`<LOCATION_1>`): text, which the medium pipeline reads as a place. */
const IN_PLACEHOLDER = /^[A-Z_]+_\d+$/;

/** A piece of a scanned text placed in the document sent: `at` in the text, `doc` in the document. */
interface Segment {
  index: number;
  at: number;
  doc: number;
  length: number;
}

/**
 * A client of Presidio's analyzer REST API (`POST /analyze` with
 * `{text, language, entities, score_threshold}`, answered by a list of
 * `{entity_type, start, end, score}`), as Microsoft's presidio-analyzer
 * service and `analyzer/presidio_server.py` expose it. It finds what needs a
 * language model (people, places, organisations, nationalities, dates); the
 * in-process recognizers stay the fast path for pattern types.
 *
 * Holds no text after a call returns and never logs one.
 */
export class AnalyzerClient {
  readonly url: string;
  readonly timeoutMs: number;
  readonly entities: readonly EntityType[];
  readonly language: string;
  private readonly endpoint: string;

  constructor(options: AnalyzerClientOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.endpoint = `${this.url}/analyze`;
    this.timeoutMs = options.timeoutMs ?? 500;
    this.entities = options.entities ?? ANALYZER_DEFAULT_ENTITIES;
    this.language = options.language ?? 'en';
  }

  /**
   * Candidates per text (UTF-16 offsets into that text), at or above
   * `threshold`; throws {@link AnalyzerFailure} when the analyzer fails or
   * misses the time budget.
   */
  async analyze(texts: readonly string[], threshold: number): Promise<Candidate[][]> {
    const out: Candidate[][] = texts.map(() => []);
    const segments: Segment[] = [];
    let document = '';
    const add = (index: number, at: number, value: string, prefix: string) => {
      if (document !== '') document += SEPARATOR;
      document += prefix;
      segments.push({ index, at, doc: document.length, length: value.length });
      document += value;
    };
    texts.forEach((text, index) => {
      if (!HAS_LETTER.test(text)) return;
      if (JSON_START.test(text))
        for (const member of jsonStrings(text)) add(index, member.at, member.value, member.key);
      else add(index, 0, text, '');
    });
    if (segments.length === 0) return out;

    const results = await this.call(document, threshold);
    const toUtf16 = HAS_SURROGATE.test(document) ? codePointOffsets(document) : undefined;
    const wanted = new Set<string>(this.entities);
    for (const r of results) {
      if (!wanted.has(r.entity_type) || !isEntityType(r.entity_type) || r.score < threshold) continue;
      let start = toUtf16 ? toUtf16[r.start] : r.start;
      const end = toUtf16 ? toUtf16[r.end] : r.end;
      if (start === undefined || end === undefined || end <= start || end > document.length) continue;
      const segment = segmentOf(segments, end - 1);
      if (!segment || end > segment.doc + segment.length) continue;
      // A span that begins in a JSON member's key ("name: Ada Lovelace") keeps its value part only.
      start = Math.max(start, segment.doc);
      const text = texts[segment.index]!;
      const localStart = start - segment.doc + segment.at;
      const localEnd = end - segment.doc + segment.at;
      const value = text.slice(localStart, localEnd);
      // Presidio's spans may carry the spaces around a value; a placeholder replaces the value only.
      const lead = value.length - value.trimStart().length;
      const trail = value.length - value.trimEnd().length;
      if (lead + trail >= value.length) continue;
      // spaCy reads a long bare number as a date ("order number 4155552671"): no date is nine digits or more.
      if (r.entity_type === 'DATE_TIME' && BARE_NUMBER.test(value.trim())) continue;
      if (text[localStart - 1] === '<' && text[localEnd] === '>' && IN_PLACEHOLDER.test(value)) continue;
      out[segment.index]!.push({
        entity: r.entity_type,
        start: localStart + lead,
        end: localEnd - trail,
        score: Math.min(1, Math.max(0, r.score)),
        key: value.trim().toLowerCase().replace(/\s+/g, ' '),
        recognizer: 'analyzer',
      });
    }
    return out.map((list, i) => refineAnalyzerFindings(joinFragments(list, texts[i]!), texts[i]!));
  }

  private async call(text: string, threshold: number): Promise<z.infer<typeof replySchema>> {
    let response: Response;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text, language: this.language, entities: this.entities, score_threshold: threshold }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError');
      throw timedOut
        ? new AnalyzerFailure('timeout', `the DLP analyzer did not answer within ${this.timeoutMs} ms`)
        : new AnalyzerFailure('unreachable', 'the DLP analyzer is unreachable');
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (err) {
      const timedOut = err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError');
      if (timedOut) throw new AnalyzerFailure('timeout', `the DLP analyzer did not answer within ${this.timeoutMs} ms`);
      if (!response.ok) throw new AnalyzerFailure('http_status', `the DLP analyzer answered ${response.status}`);
      throw new AnalyzerFailure('bad_reply', 'the DLP analyzer answered something other than JSON');
    }
    if (!response.ok) throw new AnalyzerFailure('http_status', `the DLP analyzer answered ${response.status}`);
    const parsed = replySchema.safeParse(body);
    if (!parsed.success)
      throw new AnalyzerFailure('bad_reply', 'the DLP analyzer answered a list of something other than findings');
    return parsed.data;
  }
}

/** The segment whose value holds document offset `position`, if any (a separator or a key holds none). */
function segmentOf(segments: readonly Segment[], position: number): Segment | undefined {
  let low = 0;
  let high = segments.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >>> 1;
    if (segments[mid]!.doc <= position) low = mid;
    else high = mid - 1;
  }
  const segment = segments[low]!;
  return position >= segment.doc && position < segment.doc + segment.length ? segment : undefined;
}

/**
 * The string values of JSON text (tool-call arguments, a reply's JSON), each
 * with the key it belongs to as a `key: ` prefix: a language model reads
 * `recipient: Jürgen Weber` as a name and `{"recipient":"Jürgen Weber"}` as
 * nothing. Read with a pattern rather than parsed, so a streamed piece of JSON
 * works too; escapes stay as written, so offsets map one to one.
 */
function* jsonStrings(text: string): Generator<{ at: number; value: string; key: string }> {
  let key = '';
  for (const match of text.matchAll(JSON_STRING)) {
    const value = match[1]!;
    if (match[2] !== undefined) {
      key = value;
      continue;
    }
    if (HAS_LETTER.test(value)) yield { at: match.index + 1, value, key: key === '' ? '' : `${key}: ` };
    key = '';
  }
}

/** Presidio counts offsets in code points (Python strings); UTF-16 offset of each code point offset, end included. */
function codePointOffsets(text: string): number[] {
  const offsets: number[] = [];
  let i = 0;
  for (const ch of text) {
    offsets.push(i);
    i += ch.length;
  }
  offsets.push(i);
  return offsets;
}
