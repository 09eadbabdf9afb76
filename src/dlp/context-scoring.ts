import {
  CONTEXT_BOOST,
  CONTEXT_WORDS_AFTER,
  CONTEXT_WORDS_BEFORE,
  NEGATIVE_WORDS_BEFORE,
  type ContextRule,
} from './recognizer.ts';

/** How far to look for context words, in characters; five words fit easily. */
const WINDOW_CHARS = 64;
const ASCII_WORD = /[a-z][a-z0-9]*/g;
/** Words of any script ("numéro", "телефон"); slower, so only for text that is not plain ASCII. */
const WORD = /\p{L}[\p{L}\p{N}]*/gu;
const NON_ASCII = /[^\x00-\x7f]/;
/** Nouns that take their meaning from the word before: "order number", "invoice no", "Rechnungs nummer". */
const NUMBER_NOUNS = new Set(['number', 'no', 'nr', 'num', 'nummer', 'numéro', 'numero', 'número', 'numer']);

class WordSet {
  private readonly exact: Set<string>;
  /** Prefixes by their first letter: a word is compared with the few that could match it. */
  private readonly prefixes = new Map<string, string[]>();

  constructor(words: readonly string[]) {
    this.exact = new Set(words.filter((w) => !w.endsWith('*')));
    for (const w of words) {
      if (!w.endsWith('*')) continue;
      const prefix = w.slice(0, -1);
      const list = this.prefixes.get(prefix[0]!) ?? [];
      list.push(prefix);
      this.prefixes.set(prefix[0]!, list);
    }
  }

  has(word: string): boolean {
    if (this.exact.has(word)) return true;
    const candidates = this.prefixes.get(word[0]!);
    if (candidates) for (const prefix of candidates) if (word.startsWith(prefix)) return true;
    return false;
  }
}

/**
 * Raises or lowers a candidate's score from the words around it (see
 * {@link ContextRule}). Built once per recognizer; {@link adjust} reads at
 * most {@link WINDOW_CHARS} characters on each side, so its cost does not
 * grow with the text.
 */
export class ContextScorer {
  private readonly positive: WordSet;
  private readonly negative: WordSet | undefined;
  /** The first two letters of every word either list (or {@link NUMBER_NOUNS}) could match: other words are never copied out of the text. */
  private readonly openings: Uint8Array;

  constructor(rule: ContextRule) {
    this.positive = new WordSet(rule.positive);
    this.negative = rule.negative && rule.negative.length > 0 ? new WordSet(rule.negative) : undefined;
    this.openings = openingsOf([...rule.positive, ...(rule.negative ?? []), ...NUMBER_NOUNS]);
  }

  /**
   * The score after context, clamped to [0, 1]. The context word nearest to
   * the match decides, alternating before and after ("ssn 219-09-9998, order
   * 123-45-6788": "order" is nearer the second number than "ssn"). Negative
   * words count only right before the match ("Order #…", "invoice no. …"):
   * further away they are as likely to describe the whole message.
   */
  adjust(text: string, start: number, end: number, score: number): number {
    const before = lastWords(
      text,
      Math.max(0, start - WINDOW_CHARS),
      start,
      CONTEXT_WORDS_BEFORE,
      BEFORE,
      this.openings,
    );
    const after = firstWords(
      text,
      end,
      Math.min(text.length, end + WINDOW_CHARS),
      CONTEXT_WORDS_AFTER,
      AFTER,
      this.openings,
    );
    for (let distance = 0; distance < Math.max(before, after); distance++) {
      if (distance < before) {
        const previous = BEFORE[distance]!;
        if (this.positive.has(previous)) {
          // "order number 4155552671", "invoice no …": the negative word says what kind of number it is.
          const qualifier = NUMBER_NOUNS.has(previous) && distance + 1 < before ? BEFORE[distance + 1] : undefined;
          if (qualifier !== undefined && this.negative?.has(qualifier)) return Math.max(0, score - CONTEXT_BOOST);
          return Math.min(1, score + CONTEXT_BOOST);
        }
        if (distance < NEGATIVE_WORDS_BEFORE && this.negative?.has(previous)) return Math.max(0, score - CONTEXT_BOOST);
      }
      if (distance < after && this.positive.has(AFTER[distance]!)) return Math.min(1, score + CONTEXT_BOOST);
    }
    return score;
  }
}

/** Index of a word's opening in {@link ContextScorer}'s table: two lower-case ASCII letters, the second 26 when the word has one letter. */
function openingIndex(first: number, second: number): number {
  return first * 27 + second;
}

function openingsOf(words: Iterable<string>): Uint8Array {
  const table = new Uint8Array(27 * 27);
  for (const raw of words) {
    const word = raw.endsWith('*') ? raw.slice(0, -1) : raw;
    const first = word.charCodeAt(0) - 97;
    // Words of other scripts are only compared on the slow path, which copies every word.
    if (first < 0 || first > 25) continue;
    const second = word.length > 1 ? word.charCodeAt(1) - 97 : 26;
    if (raw.endsWith('*') && word.length === 1) for (let c = 0; c <= 26; c++) table[openingIndex(first, c)] = 1;
    else if (second >= 0 && second <= 26) table[openingIndex(first, second)] = 1;
  }
  return table;
}

/** Scratch lists of the words around a match, nearest first; {@link ContextScorer.adjust} is synchronous, so one pair serves every call. */
const BEFORE: string[] = [];
const AFTER: string[] = [];

function wordsOf(slice: string): string[] {
  const lower = slice.toLowerCase();
  return lower.match(NON_ASCII.test(lower) ? WORD : ASCII_WORD) ?? [];
}

function asciiOnly(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * The last `count` words of `text[from, to)` into `out`, nearest first; how
 * many. Plain ASCII, the usual case, is read backwards in place: no copy of
 * the window, and a word is lower-cased only when it has a capital.
 */
function lastWords(text: string, from: number, to: number, count: number, out: string[], openings: Uint8Array): number {
  if (!asciiOnly(text, from, to)) {
    const words = wordsOf(text.slice(from, to));
    let n = 0;
    for (let i = words.length - 1; i >= 0 && n < count; i--) out[n++] = words[i]!;
    return n;
  }
  let n = 0;
  let i = to;
  while (i > from && n < count) {
    while (i > from && !isWordChar(text.charCodeAt(i - 1))) i--;
    const end = i;
    while (i > from && isWordChar(text.charCodeAt(i - 1))) i--;
    if (end === i) break;
    // ASCII_WORD's words start with a letter: skip leading digits as it does.
    let start = i;
    while (start < end && !isLetter(text.charCodeAt(start))) start++;
    if (start < end) out[n++] = lowerWord(text, start, end, openings);
  }
  return n;
}

/** The first `count` words of `text[from, to)` into `out`; how many. */
function firstWords(
  text: string,
  from: number,
  to: number,
  count: number,
  out: string[],
  openings: Uint8Array,
): number {
  if (!asciiOnly(text, from, to)) {
    const words = wordsOf(text.slice(from, to));
    let n = 0;
    for (; n < words.length && n < count; n++) out[n] = words[n]!;
    return n;
  }
  let n = 0;
  let i = from;
  while (i < to && n < count) {
    while (i < to && !isLetter(text.charCodeAt(i))) i++;
    const start = i;
    while (i < to && isWordChar(text.charCodeAt(i))) i++;
    if (i > start) out[n++] = lowerWord(text, start, i, openings);
  }
  return n;
}

/** The word `text[start, end)` lower-cased, or '' (which no list holds) when no listed word opens like it. */
function lowerWord(text: string, start: number, end: number, openings: Uint8Array): string {
  const first = text.charCodeAt(start) | 0x20;
  const second = end - start > 1 ? text.charCodeAt(start + 1) | 0x20 : 123;
  if (second < 97 || !openings[openingIndex(first - 97, second - 97)]) return '';
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) return text.slice(start, end).toLowerCase();
  }
  return text.slice(start, end);
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isWordChar(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57);
}
