import { readDictionary } from '../dictionary-files.ts';
import type { Candidate, ContextRule, Recognizer } from '../recognizer.ts';
import { loadNames, TITLES } from './person-name.ts';

/** Where a place name may start: a capitalised word not glued to a letter or digit before it. */
const CAPITALISED = /(?<![\p{L}\p{N}])\p{Lu}[\p{L}\p{M}'’-]*/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

const COUNTRY_SCORE = 0.6;
const CITY_SCORE = 0.5;
/** A name of standalone-places.txt, neither part of a longer name nor followed by a hyphen (`Chicago-style`). */
const STANDALONE_SCORE = 0.85;
/** A capitalised word right after (`Real Madrid`, `Dott. Colombo`) or before (`Sofia Gonzalez`, `New York Times`). */
const TITLE_WORD_BEFORE = /(?:^|[^\p{L}\p{M}.])(?:\p{Lu}\p{Ll}[\p{L}\p{M}'’-]*|\p{Lu}\p{Ll}{0,3}\.) $/u;
const TITLE_WORD_AFTER = /^ \p{Lu}\p{Ll}/u;
/** The word right before a place, with the dot of an abbreviated title (`Mr. `, `Laura `). */
const WORD_BEFORE = /(\p{L}+)\.? $/u;
/** A word in capitals (`NEW YORK`, `ENGLAND`): read as the name only where that name stands alone. */
const SHOUTED = /^\p{Lu}{3,}$/u;

/** Place names by their first word, longest first ("Rio de Janeiro" before "Rio"). */
function loadPlaces(file: string, score: number, into: Map<string, { name: string; score: number }[]>): void {
  for (const line of readDictionary(file)) {
    const head = line.split(/[ ,]/, 1)[0]!;
    const list = into.get(head) ?? [];
    if (!list.some((p) => p.name === line)) list.push({ name: line, score });
    into.set(head, list);
  }
  for (const list of into.values()) list.sort((a, b) => b.name.length - a.name.length || b.score - a.score);
}

/**
 * Whether the place is a word of a longer capitalised name, a person's, a
 * team's or a company's (`Sofia Gonzalez`, `Real Madrid`, `New York Times`):
 * such a place is found only with a context word, like an ambiguous one.
 * A sentence's last word is no neighbour (`Reuters. Madrid`), an
 * abbreviated title is (`Dott. Colombo`); in capitals every word looks
 * capitalised, so there the neighbours say nothing.
 */
function insideLongerName(text: string, start: number, end: number): boolean {
  return (
    TITLE_WORD_AFTER.test(text.slice(end, end + 3)) ||
    TITLE_WORD_BEFORE.test(text.slice(Math.max(0, start - 24), start))
  );
}

/** `NEW` as the dictionaries' keys write it: `New`. */
function titleCase(word: string): string {
  return word[0] + word.slice(1).toLowerCase();
}

/**
 * Countries and cities, found locally from dictionaries and context (no
 * model): about 2,900 country names in the languages of every
 * @faker-js/faker locale and 11,000 city names from the same locales and the
 * capitals and large cities of scripts/major-cities.ts (src/dlp/data/,
 * Latin script, MIT).
 *
 * Scores: a name of standalone-places.txt (no common English word, no
 * first name, and for a town no last name: `Nigeria`, `Buenos Aires`,
 * `Lyon`; scripts/build-place-names.ts) 0.85, unless it is part of a longer
 * name; another country 0.6, another city 0.5, so that neither acts alone
 * at the default threshold (0.8): "Jordan", "Turkey" or "Santiago" are as
 * often something else. Words that place someone ("in", "from", "to",
 * "near", "lives", "born", "moved", "city", "country", "à", "aus", "nach",
 * "wohnhaft", "país") nearby add 0.35. A name in capitals (`NEW YORK`, a
 * dateline or a heading) counts only where it stands alone. A place that
 * does not stand alone is a surname right after a title or a known first
 * name (`to Mr. Moore`, `To: Laura Cook`, `Michael Jordan`), and no place.
 *
 * Off unless listed in DLP_ENTITIES: prompts name places they talk about far
 * more often than where a user lives.
 */
export class LocationRecognizer implements Recognizer {
  readonly name = 'location';
  readonly entities = ['LOCATION'] as const;
  readonly context: ContextRule = {
    positive: [
      'in',
      'from',
      'to',
      'near',
      'via',
      'at',
      'lives',
      'live',
      'living',
      'lived',
      'born',
      'moved',
      'moving',
      'based',
      'located',
      'resident',
      'residence',
      'visit*',
      'travel*',
      'flight',
      'city',
      'town',
      'country',
      'office',
      'à',
      'en',
      'au',
      'aux',
      'ville',
      'pays',
      'habite',
      'née',
      'né',
      'aus',
      'nach',
      'bei',
      'wohnhaft',
      'wohnt',
      'geboren',
      'stadt',
      'land',
      'desde',
      'vive',
      'ciudad',
      'país',
      'nacido',
      'nacida',
      'dal',
      'vicino',
      'città',
    ],
  };
  private readonly places = new Map<string, { name: string; score: number }[]>();
  private readonly standalone: ReadonlySet<string>;
  private readonly firstNames: ReadonlySet<string>;

  constructor() {
    loadPlaces('countries.txt', COUNTRY_SCORE, this.places);
    loadPlaces('cities.txt', CITY_SCORE, this.places);
    this.standalone = new Set(readDictionary('standalone-places.txt'));
    this.firstNames = loadNames('first-names.txt');
  }

  /** Whether a title or a known first name comes right before the place: it is a surname (`Mr. Moore`, `Michael Jordan`). */
  private surname(text: string, start: number): boolean {
    const before = WORD_BEFORE.exec(text.slice(Math.max(0, start - 16), start))?.[1];
    return before !== undefined && (TITLES.has(before.toLowerCase()) || this.firstNames.has(before));
  }

  analyze(text: string, out: Candidate[]): void {
    CAPITALISED.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = CAPITALISED.exec(text)) !== null) {
      const word = match[0].replace(/[,'’-]+$/, '');
      const written = this.places.get(word) ?? this.places.get(word.split(/[-'’]/, 1)[0]!);
      const shouted = written === undefined && SHOUTED.test(word);
      const candidates = written ?? (shouted ? this.places.get(titleCase(word)) : undefined);
      if (!candidates) continue;
      const start = match.index;
      const place = candidates.find((p) => {
        const spelled = text.slice(start, start + p.name.length);
        return (
          (spelled === p.name || (shouted && spelled === p.name.toUpperCase())) &&
          !LETTER_OR_DIGIT.test(text[start + p.name.length] ?? '')
        );
      });
      if (!place) continue;
      const end = start + place.name.length;
      const alone = this.standalone.has(place.name) && text[end] !== '-' && !insideLongerName(text, start, end);
      if (shouted && !alone) continue;
      if (!alone && this.surname(text, start)) continue;
      // "the Netherlands", "the Philippines": the article belongs to the name.
      const from =
        place.score === COUNTRY_SCORE && /(?:^|[^\p{L}])the $/iu.test(text.slice(Math.max(0, start - 5), start))
          ? start - 4
          : start;
      out.push({
        entity: 'LOCATION',
        start: from,
        end,
        score: alone ? STANDALONE_SCORE : place.score,
        key: place.name.toLowerCase(),
        recognizer: this.name,
      });
      CAPITALISED.lastIndex = end;
    }
  }
}
