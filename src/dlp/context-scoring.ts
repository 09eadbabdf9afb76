import {
  CONTEXT_BOOST,
  CONTEXT_WORDS_AFTER,
  CONTEXT_WORDS_BEFORE,
  NEGATIVE_WORDS_BEFORE,
  type ContextRule,
} from './recognizer.ts';

/** How far to look for context words, in characters; five words fit easily. */
const WINDOW_CHARS = 64;
/** A letter or a digit outside ASCII ("é", "т", "٣"): tested only on such characters, one at a time. */
const WIDE_LETTER = /\p{L}/u;
const WIDE_DIGIT = /\p{N}/u;
/** Nouns that take their meaning from the word before: "order number", "invoice no", "Rechnungs nummer". */
const NUMBER_NOUNS = new Set(['number', 'no', 'nr', 'num', 'nummer', 'numéro', 'numero', 'número', 'numer']);

class WordSet {
  private readonly exact: Set<string>;
  /** Prefixes by their first letter: a word is compared with the few that could match it. */
  private readonly prefixes = new Map<string, string[]>();
  private readonly hasEmpty: boolean;

  constructor(words: readonly string[]) {
    this.exact = new Set(words.filter((w) => !w.endsWith('*')));
    for (const w of words) {
      if (!w.endsWith('*')) continue;
      const prefix = w.slice(0, -1);
      const list = this.prefixes.get(prefix[0]!) ?? [];
      list.push(prefix);
      this.prefixes.set(prefix[0]!, list);
    }
    this.hasEmpty = this.exact.has('') || this.prefixes.has(undefined as unknown as string);
  }

  has(word: string): boolean {
    // The word a reader gives for one that no listed word opens like.
    if (word === '') return this.hasEmpty;
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
  /** The first three letters of every word either list (or {@link NUMBER_NOUNS}) could match: other words are never copied out of the text. */
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
   * further away they are as likely to describe the whole message. Words are
   * read only as far as the nearest deciding one.
   */
  adjust(text: string, start: number, end: number, score: number): number {
    const from = Math.max(0, start - WINDOW_CHARS);
    const to = Math.min(text.length, end + WINDOW_CHARS);
    BEFORE.open(text, from, start, this.openings);
    AFTER.open(text, end, to, this.openings);
    for (let distance = 0; ; distance++) {
      const before = BEFORE.reach(distance);
      if (before) {
        const previous = BEFORE.words[distance]!;
        if (this.positive.has(previous)) {
          // "order number 4155552671", "invoice no …": the negative word says what kind of number it is.
          const qualifier =
            NUMBER_NOUNS.has(previous) && BEFORE.reach(distance + 1) ? BEFORE.words[distance + 1] : undefined;
          if (qualifier !== undefined && this.negative?.has(qualifier)) return Math.max(0, score - CONTEXT_BOOST);
          return Math.min(1, score + CONTEXT_BOOST);
        }
        if (distance < NEGATIVE_WORDS_BEFORE && this.negative?.has(previous)) return Math.max(0, score - CONTEXT_BOOST);
      }
      const after = AFTER.reach(distance);
      if (after && this.positive.has(AFTER.words[distance]!)) return Math.min(1, score + CONTEXT_BOOST);
      if (!before && !after) return score;
    }
  }
}

/** Where a word stops before its second or third letter: {@link openingIndex}'s 26. */
const ENDED = 26;

/**
 * Index of a word's opening in {@link ContextScorer}'s table: its first
 * three letters, lower-case ASCII, each 0-25, or {@link ENDED} after the
 * last one (a digit in third place counts as an end: such a word opens like
 * the two letters before it, so it is still copied and compared whenever
 * they could match).
 */
function openingIndex(first: number, second: number, third: number): number {
  return (first * 27 + second) * 27 + third;
}

/** Every opening a listed word could share with a word of plain ASCII text; the others can never match. */
function openingsOf(words: Iterable<string>): Uint8Array {
  const table = new Uint8Array(27 * 27 * 27);
  const letter = (word: string, i: number) => (i < word.length ? word.charCodeAt(i) - 97 : ENDED);
  const any = [...Array(ENDED + 1).keys()];
  for (const raw of words) {
    const prefix = raw.endsWith('*');
    const word = prefix ? raw.slice(0, -1) : raw;
    const first = letter(word, 0);
    const second = letter(word, 1);
    // A digit in third place reads as an end (see openingIndex).
    const third = isDigit(word.charCodeAt(2)) ? ENDED : letter(word, 2);
    // Words of other scripts are only compared on the slow path, which copies every word.
    if (first < 0 || first > 25 || second < 0 || second > ENDED || third < 0 || third > ENDED) continue;
    // A prefix opens every longer word.
    const seconds = prefix && second === ENDED ? any : [second];
    const thirds = prefix && third === ENDED ? any : [third];
    for (const s of seconds) for (const t of thirds) table[openingIndex(first, s, t)] = 1;
  }
  return table;
}

/**
 * The words of a window on one side of a match, nearest first, read on
 * demand: most matches are decided by the first word or two. A word starts
 * with a letter of any script and goes on with letters and digits; it is
 * read in place (no copy of the window), copied only when a listed word
 * could open like it, and lower-cased only when it has a capital.
 */
abstract class WordReader {
  /** The words read so far, nearest first. */
  readonly words: string[] = [];
  protected count = 0;
  protected done = true;
  protected text = '';
  protected from = 0;
  protected to = 0;
  /** Where the next word is looked for. */
  protected at = 0;
  protected openings: Uint8Array = new Uint8Array(0);
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  open(text: string, from: number, to: number, openings: Uint8Array): void {
    this.count = 0;
    this.done = false;
    this.text = text;
    this.from = from;
    this.to = to;
    this.openings = openings;
    this.at = this.start();
  }

  /** Whether the window has a word at `index` (nearest first), reading up to it. */
  reach(index: number): boolean {
    while (this.count <= index && !this.done) {
      if (this.count === this.limit) this.done = true;
      else this.readNext();
    }
    return index < this.count;
  }

  protected push(word: string): void {
    this.words[this.count++] = word;
  }

  protected abstract start(): number;
  /** Reads one word into {@link words}, or sets {@link done}. */
  protected abstract readNext(): void;
}

/** The last words before a match, read backwards. */
class WordsBefore extends WordReader {
  protected start(): number {
    return this.to;
  }

  protected readNext(): void {
    const { text, from } = this;
    let i = this.at;
    for (;;) {
      while (i > from && classOf(text.charCodeAt(i - 1)) === OTHER) i--;
      const end = i;
      // Words start with a letter: digits before the first one are not part of the word.
      let start = end;
      for (; i > from; i--) {
        const kind = classOf(text.charCodeAt(i - 1));
        if (kind === LETTER) start = i - 1;
        else if (kind === OTHER) break;
      }
      if (end === i) {
        this.done = true;
        break;
      }
      if (start < end) {
        this.push(lowerWord(text, start, end, this.openings));
        break;
      }
    }
    this.at = i;
  }
}

/** The first words after a match. */
class WordsAfter extends WordReader {
  protected start(): number {
    return this.from;
  }

  protected readNext(): void {
    const { text, to } = this;
    let i = this.at;
    for (;;) {
      if (i >= to) {
        this.done = true;
        break;
      }
      while (i < to && classOf(text.charCodeAt(i)) !== LETTER) i++;
      const start = i;
      while (i < to && classOf(text.charCodeAt(i)) !== OTHER) i++;
      if (i > start) {
        this.push(lowerWord(text, start, i, this.openings));
        break;
      }
    }
    this.at = i;
  }
}

/** One reader per side; {@link ContextScorer.adjust} is synchronous, so one pair serves every call. */
const BEFORE = new WordsBefore(CONTEXT_WORDS_BEFORE);
const AFTER = new WordsAfter(CONTEXT_WORDS_AFTER);

/** The word `text[start, end)` lower-cased, or '' (which no list holds) when no listed word opens like it. */
function lowerWord(text: string, start: number, end: number, openings: Uint8Array): string {
  const first = text.charCodeAt(start) | 0x20;
  const second = end - start > 1 ? text.charCodeAt(start + 1) | 0x20 : 123;
  const third = end - start > 2 ? text.charCodeAt(start + 2) | 0x20 : 123;
  // A word that opens with a letter outside ASCII is compared whole: the table holds ASCII openings only.
  if (first > 127 || second > 127 || third > 127) return text.slice(start, end).toLowerCase();
  if (second < 97) return '';
  if (!openings[openingIndex(first - 97, second - 97, third < 97 ? ENDED : third - 97)]) return '';
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return text.slice(start, end).toLowerCase();
  }
  return text.slice(start, end);
}

const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
/** {@link classOf} for ASCII, looked up: words are read a character at a time. */
const ASCII_CLASS = Uint8Array.from({ length: 128 }, (_, c) =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? LETTER : c >= 48 && c <= 57 ? DIGIT : OTHER,
);

/**
 * Whether a character is a letter of any script, a digit, or neither. A
 * character outside the Basic Multilingual Plane is two code units, neither
 * of which is a letter here: no listed word has one, and reading them as a
 * pair would cost every character a check.
 */
function classOf(c: number): number {
  if (c < 128) return ASCII_CLASS[c]!;
  const char = String.fromCharCode(c);
  return WIDE_LETTER.test(char) ? LETTER : WIDE_DIGIT.test(char) ? DIGIT : OTHER;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
