import { CONTEXT_BOOST, CONTEXT_WORDS_AFTER, CONTEXT_WORDS_BEFORE, NEGATIVE_WORDS_BEFORE, type ContextRule } from './recognizer.ts';

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
  private readonly prefixes: string[];

  constructor(words: readonly string[]) {
    this.exact = new Set(words.filter((w) => !w.endsWith('*')));
    this.prefixes = words.filter((w) => w.endsWith('*')).map((w) => w.slice(0, -1));
  }

  has(word: string): boolean {
    if (this.exact.has(word)) return true;
    for (const prefix of this.prefixes) if (word.startsWith(prefix)) return true;
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

  constructor(rule: ContextRule) {
    this.positive = new WordSet(rule.positive);
    this.negative = rule.negative && rule.negative.length > 0 ? new WordSet(rule.negative) : undefined;
  }

  /**
   * The score after context, clamped to [0, 1]. The context word nearest to
   * the match decides, alternating before and after ("ssn 219-09-9998, order
   * 123-45-6788": "order" is nearer the second number than "ssn"). Negative
   * words count only right before the match ("Order #…", "invoice no. …"):
   * further away they are as likely to describe the whole message.
   */
  adjust(text: string, start: number, end: number, score: number): number {
    const before = lastWords(text.slice(Math.max(0, start - WINDOW_CHARS), start), CONTEXT_WORDS_BEFORE);
    const after = firstWords(text.slice(end, end + WINDOW_CHARS), CONTEXT_WORDS_AFTER);
    for (let distance = 0; distance < Math.max(before.length, after.length); distance++) {
      const previous = before[before.length - 1 - distance];
      if (previous !== undefined) {
        if (this.positive.has(previous)) {
          // "order number 4155552671", "invoice no …": the negative word says what kind of number it is.
          const qualifier = NUMBER_NOUNS.has(previous) ? before[before.length - 2 - distance] : undefined;
          if (qualifier !== undefined && this.negative?.has(qualifier)) return Math.max(0, score - CONTEXT_BOOST);
          return Math.min(1, score + CONTEXT_BOOST);
        }
        if (distance < NEGATIVE_WORDS_BEFORE && this.negative?.has(previous)) return Math.max(0, score - CONTEXT_BOOST);
      }
      const next = after[distance];
      if (next !== undefined && this.positive.has(next)) return Math.min(1, score + CONTEXT_BOOST);
    }
    return score;
  }
}

function wordsOf(slice: string): string[] {
  const lower = slice.toLowerCase();
  return lower.match(NON_ASCII.test(lower) ? WORD : ASCII_WORD) ?? [];
}

/**
 * The last `count` words of `slice`. Plain ASCII, the usual case, is read
 * backwards character by character: no lower-cased copy and no match array
 * of the whole window, which cost more than the rest of a phone scan.
 */
function lastWords(slice: string, count: number): string[] {
  if (NON_ASCII.test(slice)) return wordsOf(slice).slice(-count);
  const words: string[] = [];
  let i = slice.length;
  while (i > 0 && words.length < count) {
    while (i > 0 && !isWordChar(slice.charCodeAt(i - 1))) i--;
    const end = i;
    while (i > 0 && isWordChar(slice.charCodeAt(i - 1))) i--;
    if (end === i) break;
    // ASCII_WORD's words start with a letter: skip leading digits as it does.
    let start = i;
    while (start < end && !isLetter(slice.charCodeAt(start))) start++;
    if (start < end) words.unshift(slice.slice(start, end).toLowerCase());
  }
  return words;
}

function firstWords(slice: string, count: number): string[] {
  if (NON_ASCII.test(slice)) return wordsOf(slice).slice(0, count);
  const words: string[] = [];
  let i = 0;
  while (i < slice.length && words.length < count) {
    while (i < slice.length && !isLetter(slice.charCodeAt(i))) i++;
    const start = i;
    while (i < slice.length && isWordChar(slice.charCodeAt(i))) i++;
    if (i > start) words.push(slice.slice(start, i).toLowerCase());
  }
  return words;
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isWordChar(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57);
}
