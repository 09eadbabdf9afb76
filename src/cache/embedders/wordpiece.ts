import { nearestWholeWord } from './vocabulary-typos.ts';
import { withBaseLetters } from './base-letters.ts';

/**
 * BERT's uncased WordPiece tokenizer (what all-MiniLM-L6-v2's `tokenizer.json`
 * describes: BertNormalizer with lower-casing and accent stripping,
 * BertPreTokenizer, WordPiece with `##` continuations), returning vocabulary
 * ids. Written out here because the static embedder runs it on the event
 * loop for every cache lookup, where a general tokenizer library costs more
 * than the whole embedding; it matches transformers.js' ids on the
 * evaluation prompts (`test/cache/wordpiece.test.ts`).
 */

/** Longest word looked up; longer ones are unknown, as in BERT. */
const MAX_WORD_CHARS = 100;
/** Words whose pieces are remembered; the memo is emptied when it reaches this size. */
const MEMO_WORDS = 50_000;

function isPunctuation(code: number): boolean {
  if (
    (code >= 33 && code <= 47) ||
    (code >= 58 && code <= 64) ||
    (code >= 91 && code <= 96) ||
    (code >= 123 && code <= 126)
  )
    return true;
  return code > 127 && /\p{P}/u.test(String.fromCodePoint(code));
}

/** A Han character, which BERT reads as a word of its own. */
export function isCjk(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x20000 && code <= 0x2a6df) ||
    (code >= 0x2a700 && code <= 0x2b73f) ||
    (code >= 0x2b740 && code <= 0x2b81f) ||
    (code >= 0x2b820 && code <= 0x2ceaf) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0x2f800 && code <= 0x2fa1f)
  );
}

/** Options of {@link WordPieceTokenizer}. */
export interface WordPieceOptions {
  /**
   * Read a word that is not in the vocabulary as the whole word one edit away
   * (`vocabulary-typos.ts`) instead of splitting it into pieces, and `ı`, `ł`,
   * `ø`, `đ` as `i`, `l`, `o`, `d`. Not BERT's behaviour: only for the static
   * first stage, never for the transformer.
   * @defaultValue false
   */
  typoTolerant?: boolean;
}

export class WordPieceTokenizer {
  private readonly ids: Map<string, number>;
  private readonly typoTolerant: boolean;
  private readonly unknown: number;
  /** Pieces of words seen before: prompts repeat their words, and a lookup beats the greedy split. */
  private readonly memo = new Map<string, readonly number[]>();

  /** `vocab`: the lines of `vocab.txt`, in id order. */
  constructor(vocab: readonly string[], options: WordPieceOptions = {}) {
    this.ids = new Map(vocab.map((token, id) => [token, id]));
    this.typoTolerant = options.typoTolerant ?? false;
    this.unknown = this.ids.get('[UNK]') ?? -1;
  }

  get size(): number {
    return this.ids.size;
  }

  /** Vocabulary ids of `text`, without `[CLS]`/`[SEP]`; an unknown word is `[UNK]`'s id. */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const word of this.words(text)) {
      let pieces = this.memo.get(word);
      if (!pieces) {
        const fresh: number[] = [];
        this.wordPieces(word, fresh);
        if (this.memo.size >= MEMO_WORDS) this.memo.clear();
        this.memo.set(word, fresh);
        pieces = fresh;
      }
      for (const id of pieces) out.push(id);
    }
    return out;
  }

  /** Normalizes and splits like BertNormalizer + BertPreTokenizer. */
  private *words(text: string): Generator<string> {
    let lowered = text.toLowerCase();
    // Only texts with non-ASCII letters need the (slow) decomposition that strips accents.
    if (/[^\x00-\x7f]/.test(lowered)) {
      lowered = lowered.normalize('NFD').replace(/\p{Mn}/gu, '');
      // Letters that decompose to no base letter, as their writers type them without a keyboard for them
      // (`kışa` / `kisa`, `długo` / `dlugo`): the static first stage only, so it proposes what the verifier folds.
      if (this.typoTolerant) lowered = withBaseLetters(lowered);
    }
    let word = '';
    for (const char of lowered) {
      const code = char.codePointAt(0) as number;
      if (
        code === 0 ||
        code === 0xfffd ||
        (code < 32 && code !== 9 && code !== 10 && code !== 13) ||
        (code >= 127 && code < 160)
      )
        continue;
      if (code === 32 || code === 9 || code === 10 || code === 13 || (code > 127 && /\s/.test(char))) {
        if (word) yield word;
        word = '';
      } else if (isPunctuation(code) || isCjk(code)) {
        if (word) yield word;
        word = '';
        yield char;
      } else {
        word += char;
      }
    }
    if (word) yield word;
  }

  private wordPieces(word: string, out: number[]): void {
    if (word.length > MAX_WORD_CHARS) {
      out.push(this.unknown);
      return;
    }
    const near = this.typoTolerant ? nearestWholeWord(word, this.ids) : undefined;
    if (near !== undefined) {
      out.push(near);
      return;
    }
    const start = out.length;
    let at = 0;
    while (at < word.length) {
      let end = word.length;
      let id: number | undefined;
      while (end > at) {
        id = this.ids.get(at === 0 ? word.slice(at, end) : `##${word.slice(at, end)}`);
        if (id !== undefined) break;
        end -= 1;
      }
      if (id === undefined) {
        out.length = start;
        out.push(this.unknown);
        return;
      }
      out.push(id);
      at = end;
    }
  }
}
