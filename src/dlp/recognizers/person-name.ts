import { readDictionary } from '../dictionary-files.ts';
import type { Candidate, ContextRule, Recognizer } from '../recognizer.ts';
import { ORGANIZATION_HEADS } from './organization.ts';
import { COMMON_CAPITALISED } from './person-stopwords.ts';

/** A capitalised word: `Müller`, `O'Brien`, `Jean-Luc`, `McDonald`. */
const WORD = /\p{Lu}[\p{Ll}\p{M}]*(?:['’]\p{Lu}?[\p{Ll}\p{M}]+|-\p{Lu}[\p{Ll}\p{M}]+|\p{Lu}[\p{Ll}\p{M}]+)*/gu;
/** Lower-case name particles kept inside a name: `de Vries`, `van der Berg`, `da Silva`. */
export const NAME_PARTICLES: ReadonlySet<string> = new Set([
  'de',
  'da',
  'das',
  'do',
  'dos',
  'del',
  'della',
  'di',
  'van',
  'von',
  'der',
  'den',
  'ter',
  'le',
  'la',
  'bin',
  'binti',
  'al',
  'el',
]);
const MAX_TOKENS = 4;

/** Titles before a name, lower case without the dot (`Mr. Moore`, `Prof. Thompson`): the word after one is a person's. */
export const TITLES: ReadonlySet<string> = new Set(
  'mr mrs ms miss mx dr prof sir esq herr frau sr sra srta dña dott dottssa dra mme mlle sig signor signora'.split(' '),
);

/**
 * What announces a name right before it: a title, a greeting, a sign-off,
 * "this is", "my name is". Unknown capitalised words after one are a name
 * candidate too (the dictionaries cannot hold every name).
 */
const ANNOUNCED =
  /(?:^|[^\p{L}])(?:mr|mrs|ms|miss|mx|dr|prof|sir|herr|frau|sr|sra|señor|señora|mme|mlle|monsieur|madame|sig|signor|signora|gentile|dear|hi|hello|hey|hallo|bonjour|hola|ciao|liebe|lieber|caro|cara|estimad[oa]|regards|thanks|cheers|best|gruß|grüße|saludo|cordialement|name:|name is|named|called|this is|i am|i'm|its|it's|patient|speaker|colleague|holder)\.?[:,]?\s{1,3}$/iu;

const FULL_SCORE = 0.85;
const PARTIAL_SCORE = 0.7;
const SINGLE_SCORE = 0.5;

/** A name list of `src/dlp/data/` without the names that are more often another word (`Will`, `May`). */
export function loadNames(file: string): Set<string> {
  return new Set(readDictionary(file).filter((line) => !COMMON_CAPITALISED.has(line)));
}

/**
 * People's names, found locally from dictionaries and context (no model):
 * runs of capitalised words (with particles such as `de`, `van`) are scored
 * by how many of their words are known first or last names (about 15,000
 * of each, Latin script, from the person lists of every @faker-js/faker
 * locale, src/dlp/data/); capitalised words that are more often something
 * else (`Will`, `May`, `Monday`, `Java`) are never evidence.
 *
 * Scores: a known first name followed by a known last name 0.85; a known
 * first name with an unknown capitalised word, or two known names, 0.7; one
 * known name alone, or unknown capitalised words right after a title,
 * greeting or sign-off (`Dear Ms. Okonkwo`, `Regards, Sinéad`), 0.5. Words
 * such as "Mr", "Dr", "Dear", "Hi", "name", "patient" or "regards" nearby
 * add 0.35, so `Dear Ms. Okafor` acts at the default threshold and
 * `Call Jordan` does not.
 *
 * Off unless listed in DLP_ENTITIES: a name is less certain than a checksum,
 * and prompts name public figures, authors and products as often as users.
 */
export class PersonNameRecognizer implements Recognizer {
  readonly name = 'person-name';
  readonly entities = ['PERSON'] as const;
  readonly context: ContextRule = {
    positive: [
      'mr',
      'mrs',
      'ms',
      'miss',
      'mx',
      'dr',
      'prof',
      'sir',
      'madam',
      'herr',
      'frau',
      'sr',
      'sra',
      'señor',
      'señora',
      'mme',
      'mlle',
      'monsieur',
      'madame',
      'sig',
      'signor',
      'signora',
      'gentile',
      'dear',
      'hi',
      'hello',
      'hey',
      'hallo',
      'bonjour',
      'hola',
      'ciao',
      'liebe',
      'lieber',
      'caro',
      'cara',
      'estimado',
      'estimada',
      'name',
      'named',
      'called',
      'patient',
      'customer',
      'client',
      'colleague',
      'manager',
      'employee',
      'holder',
      'signed',
      'regards',
      'sincerely',
      'cheers',
      'thanks',
      'best',
      'gruß',
      'grüße',
      'saludo',
      'cordialement',
      'met',
      'speaker',
      'author',
      'contact',
      'cc',
      'from',
      'attn',
      'its',
      'this',
    ],
  };
  private readonly first: Set<string>;
  private readonly last: Set<string>;

  constructor() {
    this.first = loadNames('first-names.txt');
    this.last = loadNames('last-names.txt');
  }

  analyze(text: string, out: Candidate[]): void {
    WORD.lastIndex = 0;
    let run: { start: number; end: number; word: string }[] = [];
    let match: RegExpExecArray | null;
    while ((match = WORD.exec(text)) !== null) {
      const token = { start: match.index, end: match.index + match[0].length, word: match[0] };
      const previous = run.at(-1);
      if (
        previous &&
        (!this.joins(run, text.slice(previous.end, token.start), token.word) || run.length >= MAX_TOKENS)
      ) {
        this.score(text, run, out);
        run = [];
      }
      run.push(token);
    }
    if (run.length > 0) this.score(text, run, out);
  }

  private score(text: string, run: readonly { start: number; end: number; word: string }[], out: Candidate[]): void {
    // `Wayne Enterprises` is a company.
    if (run.length > 1 && ORGANIZATION_HEADS.has(run.at(-1)!.word.toLowerCase())) return;
    // Drop words at either end that are not names (a sentence's first word, "Senior Engineer").
    let from = 0;
    let to = run.length;
    // One unknown word may come before a known last name: a first name the dictionary lacks.
    while (
      from < to &&
      !this.known(run[from]!.word) &&
      !(from + 2 === to && this.last.has(run[from + 1]!.word) && !COMMON_CAPITALISED.has(run[from]!.word))
    )
      from++;
    // One unknown word may follow a known first name: a surname the dictionary lacks.
    while (
      to > from &&
      !this.known(run[to - 1]!.word) &&
      !(to - 2 >= from && this.first.has(run[to - 2]!.word) && !COMMON_CAPITALISED.has(run[to - 1]!.word))
    )
      to--;
    if (from >= to) {
      // Nothing known: a name only if something announces it, and never a common word.
      const before = text.slice(Math.max(0, run[0]!.start - 24), run[0]!.start);
      if (!ANNOUNCED.test(before) || run.some((t) => COMMON_CAPITALISED.has(t.word) || t.word.length < 2)) return;
      from = 0;
      to = Math.min(run.length, 3);
    }
    const words = run.slice(from, to).map((t) => t.word);
    const firstKnown = this.first.has(words[0]!);
    const lastKnown = this.last.has(words.at(-1)!);
    const knownCount = words.filter((w) => this.known(w)).length;
    let score: number;
    if (words.length === 1) score = SINGLE_SCORE;
    else if (firstKnown && lastKnown) score = FULL_SCORE;
    else if (firstKnown || knownCount >= 2) score = PARTIAL_SCORE;
    else score = SINGLE_SCORE;
    const start = run[from]!.start;
    const end = run[to - 1]!.end;
    out.push({ entity: 'PERSON', start, end, score, key: text.slice(start, end).toLowerCase(), recognizer: this.name });
  }

  /**
   * Whether the text between two capitalised words keeps them in one name: a
   * space, a particle between spaces (`de Vries`), or the comma of
   * `Last, First` when both are known that way.
   */
  private joins(run: readonly { word: string }[], between: string, next: string): boolean {
    if (between === ' ') return true;
    if (between === ', ') return run.length === 1 && this.last.has(run[0]!.word) && this.first.has(next);
    const particles = between.trim().split(/\s+/);
    return /^ .+ $/.test(between) && particles.length <= 2 && particles.every((p) => NAME_PARTICLES.has(p));
  }

  private known(word: string): boolean {
    return this.first.has(word) || this.last.has(word);
  }
}
