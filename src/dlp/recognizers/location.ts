import { readFileSync } from 'node:fs';
import type { Candidate, ContextRule, Recognizer } from '../recognizer.ts';

/** Where a place name may start: a capitalised word not glued to a letter or digit before it. */
const CAPITALISED = /(?<![\p{L}\p{N}])\p{Lu}[\p{L}\p{M}'’-]*/gu;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

const COUNTRY_SCORE = 0.6;
const CITY_SCORE = 0.5;

/** Where the dictionaries are; scripts/build-place-names.ts writes them. */
const DATA = new URL('../data/', import.meta.url);

/** Place names by their first word, longest first ("Rio de Janeiro" before "Rio"). */
function loadPlaces(file: string, score: number, into: Map<string, { name: string; score: number }[]>): void {
  for (const line of readFileSync(new URL(file, DATA), 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const head = line.split(/[ ,]/, 1)[0]!;
    const list = into.get(head) ?? [];
    if (!list.some((p) => p.name === line)) list.push({ name: line, score });
    into.set(head, list);
  }
  for (const list of into.values()) list.sort((a, b) => b.name.length - a.name.length || b.score - a.score);
}

/**
 * Countries and cities, found locally from dictionaries and context (no
 * model): about 2,900 country names in the languages of every
 * @faker-js/faker locale and 11,000 city names from the same locales and the
 * capitals and large cities of scripts/major-cities.ts (src/dlp/data/,
 * Latin script, MIT).
 *
 * Scores: a country 0.6, a city 0.5, so that neither acts alone at the
 * default threshold (0.8): "Jordan", "Santiago" or "Chicago-style" are as
 * often something else. Words that place someone ("in", "from", "to",
 * "near", "lives", "born", "moved", "city", "country", "à", "aus", "nach",
 * "wohnhaft", "país") nearby add 0.35.
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

  constructor() {
    loadPlaces('countries.txt', COUNTRY_SCORE, this.places);
    loadPlaces('cities.txt', CITY_SCORE, this.places);
  }

  analyze(text: string, out: Candidate[]): void {
    CAPITALISED.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = CAPITALISED.exec(text)) !== null) {
      const candidates =
        this.places.get(match[0].replace(/[,'’-]+$/, '')) ?? this.places.get(match[0].split(/[-'’]/, 1)[0]!);
      if (!candidates) continue;
      const start = match.index;
      const place = candidates.find(
        (p) => text.startsWith(p.name, start) && !LETTER_OR_DIGIT.test(text[start + p.name.length] ?? ''),
      );
      if (!place) continue;
      const end = start + place.name.length;
      // "the Netherlands", "the Philippines": the article belongs to the name.
      const from =
        place.score === COUNTRY_SCORE && /(?:^|[^\p{L}])the $/iu.test(text.slice(Math.max(0, start - 5), start))
          ? start - 4
          : start;
      out.push({
        entity: 'LOCATION',
        start: from,
        end,
        score: place.score,
        key: place.name.toLowerCase(),
        recognizer: this.name,
      });
      CAPITALISED.lastIndex = end;
    }
  }
}
