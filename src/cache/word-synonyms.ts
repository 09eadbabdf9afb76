import { WORDNET_GROUPS } from './synonyms/wordnet-groups.ts';

/**
 * Whether two words are synonyms in WordNet, as the semantic-cache verifier
 * needs it: "easy" synonyms are matched, words whose shared sense is rare are
 * not. Two words qualify when they share a synset among their first three
 * senses attested in WordNet's sense-tagged corpus, and the two senses' ranks
 * add up to at most {@link MAX_RANK_SUM} (`begin` / `start`, `big` / `large`,
 * `main` / `primary`, `purchase` / `buy`; not `big` / `bad`, whose shared sense
 * is the third of `big`). A sentence embedding cannot tell synonyms from near
 * misses by itself (MiniLM scores `fast` / `quick` below `ascending` /
 * `descending`); a lexical database written by people can, for the words it
 * lists.
 */

/** Largest sum of the ranks (0 = a word's most frequent sense) of the shared sense in both words. */
const MAX_RANK_SUM = 2;

/**
 * The same for nouns: the shared sense must be the first of both. A noun names a thing, and two nouns
 * that share only a later sense name different things where it matters (`pond` / `pool`: a house with
 * a pool has a swimming pool).
 */
const MAX_NOUN_RANK_SUM = 0;

/**
 * Words never matched: relation, direction, time, order and quantity words, and names that are also words.
 * WordNet gives them senses that would let a near miss through (`before` =
 * `earlier`, `last` = `final`, `up` = `upward`, `present` = `show`).
 */
const NEVER = new Set([
  'about',
  'above',
  'across',
  'after',
  'against',
  'ago',
  'ahead',
  'along',
  'around',
  'away',
  'back',
  'backward',
  'before',
  'behind',
  'below',
  'beneath',
  'beside',
  'between',
  'beyond',
  'bottom',
  'current',
  'currently',
  'daily',
  'down',
  'downward',
  'during',
  'early',
  'earlier',
  'east',
  'ever',
  'final',
  'first',
  'former',
  'forward',
  'front',
  'future',
  'half',
  'inside',
  'last',
  'late',
  'later',
  'latter',
  'least',
  'left',
  'less',
  'more',
  'most',
  'near',
  'never',
  'next',
  'north',
  'now',
  'off',
  'often',
  'once',
  'onto',
  'out',
  'outside',
  'over',
  'past',
  'present',
  'previous',
  'previously',
  'rear',
  'recent',
  'recently',
  'right',
  'second',
  'soon',
  'south',
  'third',
  'through',
  'today',
  'tomorrow',
  'tonight',
  'top',
  'toward',
  'towards',
  'twice',
  'under',
  'until',
  'upon',
  'upward',
  'west',
  'within',
  'without',
  'yesterday',
  // Names of languages and products that WordNet knows only as common words (`java` = `coffee`).
  'java',
  'python',
  'ruby',
  'rust',
  'swift',
  'dart',
  'perl',
  'julia',
  'go',
  'mercury',
  'apple',
  'amazon',
  'oracle',
]);

/** Inflections WordNet's morphology strips to find a lemma (its `morphy` rules, without the exception lists). */
const ENDINGS: ReadonlyArray<readonly [pos: string, suffix: string, lemmaEnding: string]> = [
  ['n', 's', ''],
  ['n', 'ses', 's'],
  ['n', 'xes', 'x'],
  ['n', 'zes', 'z'],
  ['n', 'ches', 'ch'],
  ['n', 'shes', 'sh'],
  ['n', 'men', 'man'],
  ['n', 'ies', 'y'],
  ['v', 's', ''],
  ['v', 'ies', 'y'],
  ['v', 'es', 'e'],
  ['v', 'es', ''],
  ['v', 'ed', 'e'],
  ['v', 'ed', ''],
  ['v', 'ing', 'e'],
  ['v', 'ing', ''],
  ['a', 'er', ''],
  ['a', 'est', ''],
  ['a', 'er', 'e'],
  ['a', 'est', 'e'],
];
const PARTS = ['n', 'v', 'a', 'r'];

/** `pos:lemma` → the synsets it is in, as [group, rank] pairs. Parsed on first use. */
let senses: Map<string, Array<readonly [number, number]>> | undefined;

function table(): Map<string, Array<readonly [number, number]>> {
  if (senses) return senses;
  const built = new Map<string, Array<readonly [number, number]>>();
  WORDNET_GROUPS.split('\n').forEach((line, group) => {
    const [pos, ...members] = line.split(' ');
    for (const member of members) {
      const key = `${pos}:${member.slice(0, -1)}`;
      let list = built.get(key);
      if (!list) built.set(key, (list = []));
      list.push([group, Number(member.at(-1))]);
    }
  });
  senses = built;
  return built;
}

/** Each reading of `word` as a lemma: its part of speech, the lemma, and the ending taken off. */
function readings(word: string): Array<readonly [pos: string, lemma: string, ending: string]> {
  const known = table();
  const out: Array<readonly [string, string, string]> = [];
  for (const pos of PARTS) if (known.has(`${pos}:${word}`)) out.push([pos, word, '']);
  for (const [pos, suffix, lemmaEnding] of ENDINGS) {
    if (word.length <= suffix.length + 1 || !word.endsWith(suffix)) continue;
    const lemma = word.slice(0, -suffix.length) + lemmaEnding;
    if (known.has(`${pos}:${lemma}`)) out.push([pos, lemma, suffix]);
  }
  return out;
}

/** Whether `a` and `b` (lower-case words) are synonyms in the sense above; inflected alike (`drawbacks` / `downsides`). */
export function synonymous(a: string, b: string): boolean {
  if (a === b || NEVER.has(a) || NEVER.has(b) || !/^[a-z]{3,}$/.test(a) || !/^[a-z]{3,}$/.test(b)) return false;
  const known = table();
  for (const [posA, lemmaA, endingA] of readings(a)) {
    for (const [posB, lemmaB, endingB] of readings(b)) {
      if (posA !== posB || endingA !== endingB || lemmaA === lemmaB) continue;
      const ranks = new Map(known.get(`${posA}:${lemmaA}`));
      const limit = posA === 'n' ? MAX_NOUN_RANK_SUM : MAX_RANK_SUM;
      for (const [group, rank] of known.get(`${posB}:${lemmaB}`) ?? []) {
        const other = ranks.get(group);
        if (other !== undefined && other + rank <= limit) return true;
      }
    }
  }
  return false;
}
