import { isWordOf } from '../cache/other-dictionaries.ts';
import { readDictionary } from './dictionary-files.ts';
import type { Candidate } from './recognizer.ts';
import { ORGANIZATION_HEADS } from './recognizers/organization.ts';
import { loadNames, NAME_PARTICLES, TITLES } from './recognizers/person-name.ts';

/**
 * Lower-case words that belong inside a name, a place or an organisation: a name's particles
 * (`de Vries`) and the joining words of places and organisations (`Bank of America`,
 * `Federación Internacional de Fútbol`).
 */
const CONNECTORS: ReadonlySet<string> = new Set([
  ...NAME_PARTICLES,
  ...'delle dei du des las los y e i et of and the for on upon sur und für am an im zu zum zur en'.split(' '),
]);

/**
 * Words that open a sentence or a form's line in the languages the
 * gateway's users write besides English (articles, prepositions,
 * conjunctions, pronouns, adverbs, courtesies), capitalised there and read
 * as names by an English pipeline (`Según`, `Además`, `Ihre Anfrage`,
 * `Vos coordonnées`). Compared in lower case without accents; never part of a name.
 */
const FUNCTION_WORDS = new Set(
  [
    // Spanish
    'un una uno unos unas por para con sin según tras entre sobre desde hasta durante además también mientras',
    'pero aunque si se su sus ese esa este esta estos estas esos esas ahora después antes ambos sólo solo',
    'todavía todo toda todos todas otro otra otros otras asimismo así cuando donde hoy ayer mañana muy más',
    'menos cada qué sí no nos les gracias estimado estimada estimados',
    // Portuguese
    'um uma os pelo pela pelos pelas com sem ao aos também então obrigado obrigada depois',
    // French
    'une les pour avec dans par vos votre nous vous notre leur merci bonjour cordialement madame monsieur',
    // Italian
    'il gli per più della dello delle degli nel nella sul sulla grazie cordiali saluti gentile',
    // German
    'der die das ein eine einer einem einen ihr ihre ihren ihrem ihnen sie wir mit bei nach aus vom zum zur',
    'für bitte vielen dank sehr liebe lieber geehrte geehrter falls wenn dass freundlichen grüßen grüssen später',
  ]
    .join(' ')
    .split(' ')
    // Compared without accents: text typed without them (`Despues`, `Piu`) is the same word.
    .map((word) => fold(word)),
);

/** The two-letter codes of the United States' states and capital district. */
const US_STATES = new Set(
  'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC'.split(
    ' ',
  ),
);

/** The last word of a medical condition's name (`Chronic Kidney Disease`, `Atrial Fibrillation`). */
const CONDITION_HEADS = new Set(
  'disease disorder syndrome fibrillation hypertension infection deficiency insufficiency failure cancer'.split(' '),
);

/** A German article or a preposition merged with one: the capitalised word after it is a noun (`die Hauptperson`, `im Vorgang`). */
const GERMAN_ARTICLES = new Set(
  'der die das den dem des ein eine einen einem einer eines im zum zur vom beim am'.split(' '),
);

/** A Spanish article, or a preposition merged with one: a capitalised word after it is an institution, not a person (`el Gobierno`, `del Parlamento`). */
const SPANISH_ARTICLES = new Set('el la los las del al'.split(' '));

/** The word before `start`, lower case; with `dot`, an abbreviation's dot may follow it (`Mr.`). */
function wordBefore(text: string, start: number, dot = false): string {
  return (
    (dot ? /(\p{L}+)\.?\s+$/u : /(\p{L}+)\s+$/u).exec(text.slice(Math.max(0, start - 24), start))?.[1]?.toLowerCase() ??
    ''
  );
}

interface Dictionaries {
  /** Known first and last names, lower case, without the words more often something else. */
  names: Set<string>;
  firstNames: Set<string>;
  /** Known countries and cities, lower case without accents (`sao paulo`, `rio de janeiro`). */
  countries: Set<string>;
  cities: Set<string>;
}

let dictionaries: Dictionaries | undefined;

/** Lower case without accents: `Río` and `Rio`, `São Paulo` and `Sao Paulo` are one place. */
function fold(value: string): string {
  return value.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The engine's name and place lists, read on first use (the engine reads its own copies only when the opt-in types are on). */
function loadDictionaries(): Dictionaries {
  // As in the engine, a name that is more often another word (`Will`, `Paris`) is not evidence of a person.
  const names = (file: string) => [...loadNames(file)].map((line) => line.toLowerCase());
  const firstNames = new Set(names('first-names.txt'));
  return {
    firstNames,
    names: new Set([...firstNames, ...names('last-names.txt')]),
    countries: new Set(readDictionary('countries.txt').map(fold)),
    cities: new Set(readDictionary('cities.txt').map(fold)),
  };
}

const NAME_TYPES = new Set(['PERSON', 'LOCATION', 'ORGANIZATION', 'NRP']);
/** A short word in capitals is an acronym (ATM, ASAP, IBAN) far more often than a name or a company. */
const ACRONYM = /^(?:\p{Lu}{1,4}|iban|atm)$/u;
const WORD = /\S+/gu;
const WORD_EDGE = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
const POSSESSIVE = /['’]s$/u;
const LEADING_PUNCTUATION = /^[^\p{L}\p{N}]+/u;
/** A final `.` stays: `Vanessa P.`, `Acme Inc.`. */
const TRAILING_PUNCTUATION = /[^\p{L}\p{N}.]+$/u;
const UPPER = /\p{Lu}/u;
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;
/** A lower-case word this short between capitalised ones is a particle of a language the list does not cover (`Kengo wa Dondo`). */
const SHORT_PARTICLE = 3;
/**
 * What follows a form's label rather than a name: a colon, then the end of
 * the line, a value with a digit in its first characters or an e-mail address (`Zwischensumme: CHF
 * 1'234`, `Von:` and the sender below, `E-Mail: anna@example.com`), also with a word in brackets
 * before the colon (`License Plate (rental): HVX-4245`); a speaker in a chat (`Amy: Remember me?`)
 * is not one.
 */
const LABEL = /^(?:[^\S\n]*\([^()\n]{1,24}\))?:[^\S\n]*(?:\n|$|[^\n\d]{0,6}\d|[^\s@]+@)/u;

/** Nothing but spaces or a bullet since the line's or the text's start. */
const LINE_START = /(?:^|\n)[^\S\n]*[-*•]?[^\S\n]*$/u;
/** Lower-case words, then a colon, on the finding's line: the rest of a form's title or label. */
const TITLE_WORDS = /^(?:[^\S\n]+\p{Ll}[\p{L}\p{M}'’-]*){1,3}[^\S\n]*:/u;

interface Word {
  start: number;
  end: number;
  /** Lower case, edge punctuation and a possessive `'s` taken off (`Kent,` is `kent`). */
  bare: string;
  digit: boolean;
  /** Letters, none of them upper case, and not a connector; or a function word however written. */
  lower: boolean;
  /** Has an upper-case letter. */
  cased: boolean;
  /** A short word in capitals: `ATM`, `DPO`, `AE`. */
  acronym: boolean;
}

function wordsOf(text: string, start: number, end: number): Word[] {
  const list: Word[] = [];
  for (const m of text.slice(start, end).matchAll(WORD)) {
    const raw = m[0];
    const bare = raw.replace(WORD_EDGE, '').replace(POSSESSIVE, '');
    if (bare === '') continue;
    list.push({
      start: start + m.index,
      end: start + m.index + raw.length,
      bare: bare.toLowerCase(),
      acronym: ACRONYM.test(bare),
      digit: DIGIT.test(raw),
      lower: (LETTER.test(raw) && !UPPER.test(raw) && !CONNECTORS.has(bare)) || FUNCTION_WORDS.has(fold(bare)),
      cased: UPPER.test(raw),
    });
  }
  return list;
}

/**
 * Corrections of the analyzer's people, places, organisations and groups,
 * where spaCy's English pipelines are known to be wrong (eval/dlp, splits
 * `dev`, `dev2` and `holdout`); each one narrows, drops or retypes a finding, never
 * adds one:
 *
 * - a finding ends at a line break: a form's next line is another field
 *   (`United Kingdom\nMobile`), a scorecard's next line another player;
 * - lower-case words and other languages' function words at its edges, and
 *   a possessive `'s`, are not part of the value (`Charles ceded`,
 *   `st Kaluwitharana`, `Según Alvarez`, `England's`); numbers stay (a house
 *   number is redacted with its street) but do not decide the type;
 * - a phrase is not a name: a finding with more lower-case or function
 *   words than others, or a long lower-case word between capitalised ones
 *   (`möchten Ihnen mitteilen`, `Mit freundlichen Grüssen`, `hoy de que
 *   pidió`), one written all in lower case whose words the name lists do
 *   not all know, or that has only one (`bearbeitet wurde`, `de la`, `de
 *   julio`; `sarah johnson` stays), a
 *   short word in capitals (`ATM`, `IBAN`, `DPO AE`), or a form's label, a
 *   word before a colon and a value that is neither a known name nor a
 *   known place (`Zwischensumme: CHF 1250`; a chat's `Amy: hi` stays), or
 *   such a word opening a line before lower-case words and a colon
 *   (`Registro de empleado:`);
 * - one word the name and place lists do not know after a German article is
 *   a noun (`die Hauptperson`), and after a Spanish one, found as a person,
 *   an institution (`el Gobierno`, `la Junta`: an organisation); a title
 *   alone (`Sra`, `Esq`) and a medical condition (`Atrial Fibrillation`)
 *   are no names;
 * - the in-process dictionaries settle the type: a known country, or a
 *   known city (with its state's code: `Bristol FL`) that is not also a first name, found as a person is a place
 *   (`Bern`, `Francia`; `Verona` stays), a known city or country found as
 *   an organisation is a place (`ESPOO`), and known first and last names
 *   found as an organisation are a person (`Michael Hoffmann`; `Johnson &
 *   Johnson` stays); a person or place whose last word only organisations
 *   end in is an organisation (`Wayne Enterprises`);
 * - a word after a title is a person's name (`Mr. Moore`), and a person's
 *   last name alone, found as a place where the text names the person in
 *   full, is that person again (`MaliVai Washington` … `Washington fell
 *   short`), as is a known first name alone (`Samantha Rodriguez` … `call
 *   me Samantha`).
 */
export function refineAnalyzerFindings(list: readonly Candidate[], text: string): Candidate[] {
  const out: Candidate[] = [];
  for (const finding of list) {
    const refined = NAME_TYPES.has(finding.entity) ? refine({ ...finding }, text) : finding;
    if (refined) out.push(refined);
  }
  // The last word of a person's full name, and its first when that is a known first name (`Samantha Moore` …
  // `call me Samantha`): where the text names the person in full, that word alone is the person again.
  const firstNames = (dictionaries ??= loadDictionaries()).firstNames;
  const nameWords = new Set(
    out
      .filter((f) => f.entity === 'PERSON')
      .flatMap((f) => {
        const words = text.slice(f.start, f.end).split(/\s+/);
        if (words.length < 2) return [];
        return firstNames.has(words[0]!.toLowerCase()) ? [words[0]!, words.at(-1)!] : [words.at(-1)!];
      }),
  );
  for (const f of out)
    if (f.entity === 'LOCATION' && nameWords.has(text.slice(f.start, f.end))) {
      f.entity = 'PERSON';
      f.key = text.slice(f.start, f.end).toLowerCase();
    }
  return out;
}

function refine(f: Candidate, text: string): Candidate | undefined {
  const lineBreak = text.indexOf('\n', f.start);
  const all = wordsOf(text, f.start, lineBreak >= 0 && lineBreak < f.end ? lineBreak : f.end);
  // Written all in lower case, a value is judged by the dictionaries below, not by its case.
  const cased = all.some((w) => w.cased);
  // Mostly lower-case words is a phrase, not a name (`möchten Ihnen mitteilen`); connectors are neutral (`Bank of America`).
  const lower = cased ? all.filter((w) => w.lower).length : 0;
  if (lower * 2 > all.length) return undefined;
  // A lower-case connector at an edge is the phrase around the name (`Numéro de`); a capitalised one opens it (`El Salvador`).
  const edge = (w: Word) => cased && (w.lower || (!w.cased && CONNECTORS.has(w.bare)));
  let words = all;
  while (words.length > 0 && edge(words[0]!)) words = words.slice(1);
  while (words.length > 0 && edge(words.at(-1)!)) words = words.slice(0, -1);
  if (words.some((w) => w.lower && cased && w.bare.length > SHORT_PARTICLE)) return undefined;
  // Numbers stay in the span (a house number redacted with its street) but say nothing about the type.
  const named = words.filter((w) => !w.digit);
  if (named.length === 0 || words.every((w) => w.acronym || CONNECTORS.has(w.bare))) return undefined;

  let value = text.slice(words[0]!.start, words.at(-1)!.end);
  const lead = value.length - value.replace(LEADING_PUNCTUATION, '').length;
  value = value.slice(lead).replace(TRAILING_PUNCTUATION, '').replace(POSSESSIVE, '');
  if (value === '') return undefined;
  f.start = words[0]!.start + lead;
  f.end = f.start + value.length;

  const dict = (dictionaries ??= loadDictionaries());
  const whole = named.map((w) => w.bare).join(' ');
  const folded = fold(whole);
  const country = dict.countries.has(folded);
  // A town and its state's code (`Bristol FL`, `Austin, TX`) is the town.
  const state =
    named.length > 1 && US_STATES.has(text.slice(named.at(-1)!.start, named.at(-1)!.end).replace(WORD_EDGE, ''));
  const town = state
    ? fold(
        named
          .slice(0, -1)
          .map((w) => w.bare)
          .join(' '),
      )
    : folded;
  const place = country || dict.cities.has(town);
  // Initials and connectors say nothing; a lower-case name needs its other words known.
  const content = named.filter((w) => w.bare.length >= 3 && !CONNECTORS.has(w.bare) && !TITLES.has(w.bare));
  const known = content.filter((w) => dict.names.has(w.bare)).length;
  const name = known > 0 && known === content.length;
  // All in lower case, one known word is as often a word (`de julio`, `de una`) as a name: it takes two (`sarah johnson`).
  if (!cased && !(f.entity === 'LOCATION' ? place : name && content.length > 1)) return undefined;
  if (LABEL.test(text.slice(f.end, f.end + 24)) && !place && known === 0) return undefined;
  // One word that neither the name nor the place lists know, and a word of `language` right after one of its articles.
  const unknownWord = named.length === 1 && !place && known === 0;
  const nounAfter = (articles: ReadonlySet<string>, language: 'de' | 'es') =>
    unknownWord && articles.has(wordBefore(text, f.start)) && isWordOf(language, named[0]!.bare);
  // The first word of a form's title or label, which opens its line (`Registro de empleado:`, `Fiche employé:`).
  if (
    unknownWord &&
    LINE_START.test(text.slice(Math.max(0, f.start - 24), f.start)) &&
    TITLE_WORDS.test(text.slice(f.end, f.end + 48))
  )
    return undefined;
  // A German noun after its article is no name (`die Hauptperson`, `im Vorgang`).
  if (nounAfter(GERMAN_ARTICLES, 'de')) return undefined;
  // A Spanish noun after its article is an institution (`el Gobierno`, `la Junta`), which spaCy's English pipelines read as a person.
  if (f.entity === 'PERSON' && nounAfter(SPANISH_ARTICLES, 'es')) f.entity = 'ORGANIZATION';
  // A title alone (`Sra`, `Dott`, `Esq`) names nobody; a condition (`Atrial Fibrillation`, `Irritable Bowel Syndrome`) is no name.
  if (named.every((w) => TITLES.has(w.bare)) || CONDITION_HEADS.has(named.at(-1)!.bare)) return undefined;
  const afterTitle = TITLES.has(wordBefore(text, f.start, true));
  // After a title it is a person's name (`Mr. Moore`, `Dr. Davis`), whatever the town or the company of that name.
  if (f.entity !== 'PERSON' && afterTitle) f.entity = 'PERSON';
  else if (f.entity !== 'ORGANIZATION' && named.length > 1 && ORGANIZATION_HEADS.has(named.at(-1)!.bare))
    f.entity = 'ORGANIZATION';
  // An English county (`Yorkshire`, `North Yorkshire`) names no one, except as a surname after a title.
  else if (f.entity === 'PERSON' && named.at(-1)!.bare.endsWith('shire') && !afterTitle) f.entity = 'LOCATION';
  // A known first name and known names after it, which no place list knows, found as a place, are a person (`Justin
  // Hall`); one word alone is as often a state or a region the lists lack (`Florida`, `Asia`).
  else if (f.entity === 'LOCATION' && name && !place && content.length > 1 && dict.firstNames.has(content[0]!.bare))
    f.entity = 'PERSON';
  // A town may be a first name too (`Florence`, `Verona`); a country found as a person hardly ever is one.
  else if (
    f.entity === 'ORGANIZATION' ? place : f.entity === 'PERSON' && (country || (place && !dict.firstNames.has(whole)))
  )
    f.entity = 'LOCATION';
  else if (f.entity === 'ORGANIZATION' && name && !value.includes('&')) f.entity = 'PERSON';
  f.key = value.toLowerCase().replace(/\s+/g, ' ');
  return f;
}
