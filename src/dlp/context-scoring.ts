import { CONTEXT_BOOST, CONTEXT_WORDS_AFTER, CONTEXT_WORDS_BEFORE, NEGATIVE_WORDS_BEFORE, type ContextRule } from './recognizer.ts';

/** How far to look for context words, in characters; five words fit easily. */
const WINDOW_CHARS = 64;
const ASCII_WORD = /[a-z][a-z0-9]*/g;
/** Words of any script ("numéro", "телефон"); slower, so only for text that is not plain ASCII. */
const WORD = /\p{L}[\p{L}\p{N}]*/gu;
const NON_ASCII = /[^\x00-\x7f]/;

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
        if (this.positive.has(previous)) return Math.min(1, score + CONTEXT_BOOST);
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

function lastWords(slice: string, count: number): string[] {
  const words = wordsOf(slice);
  return words.slice(-count);
}

function firstWords(slice: string, count: number): string[] {
  const words = wordsOf(slice);
  return words.slice(0, count);
}
