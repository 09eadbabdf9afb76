import { CAPITONYMS } from './capitonyms.ts';
import { isEnglishAdverb, isEnglishWord } from './english-dictionary.ts';
import { NUMBER_WORDS } from './prompt-guards.ts';
import { slipsOfTheFinger } from './keyboard-slips.ts';
import { hasDictionary, isWordOf } from './other-dictionaries.ts';
import { withoutAccents } from './prompt-other-languages.ts';
import { type PromptLanguage, promptLanguage } from './prompt-language.ts';
import { isOneWordQuote } from './prompt-quotes.ts';
import { negates, opposes } from './word-opposites.ts';
import { synonymous } from './word-synonyms.ts';

/**
 * The second stage of a semantic hit: the vector search proposes a cached
 * prompt, and this decides whether its answer answers the new prompt. The
 * embedding is blind to what flips an answer while keeping the words (a
 * swapped direction, a case-sensitive payload, the last sentence of a long
 * document); this compares the two canonical token sequences (see
 * `prompt-canonical.ts`) and accepts only differences that cannot change the
 * answer:
 *
 * - function words that carry no content (`a`, `the`, `is`, `of`...), and a
 *   number in words or digits (`three` = `3`); not pronouns and possessives,
 *   which say who does what to whom ("why does my dog ignore me" is not "why
 *   do I ignore my dog"), nor `for`;
 * - the case of a word, when the prompt writing it in lower case has no
 *   capital anywhere in its prose ("what is dna" = "What is DNA?"), except a
 *   name that is also a common word (`Turkey` / `turkey`), a word of one
 *   letter (`G` / `g` in vim) or of two that spells a word (`US` / `us`),
 *   and mixed case (`kB` / `kb`); a word in capitals for emphasis (`SPANISH`
 *   = `Spanish`, `FREE` = `free`); and the case of a name's later words (`Eiffel Tower` =
 *   `Eiffel tower`);
 * - accents, in any language, when one of the two prompts writes none
 *   (`reinitialiser` / `réinitialiser`, `Bettwaesche` / `Bettwäsche`), and
 *   those its language's keyboard types with a dead key when one of the two
 *   writes only letters of one key (`cuantas` / `cuántas` beside `niño`,
 *   `etre` / `être` beside `remboursé`), never between two that both type
 *   them (`papa` / `papá`); a compound written apart
 *   (`zomer vakantie`, `wi fi`), unless it is two English words;
 * - a typo: two words of 4+ letters with the same first letter, one edit
 *   apart (two from 8 letters), one of which is no English word
 *   (`english-dictionary.ts`: "recieve" / "receive", never "horse" / "house"),
 *   not a negating prefix (`safe`/`unsafe`) and not one opposite part for
 *   another (`employer`/`employee`, `maximize`/`minimize`);
 * - an acronym and its spelled-out words (`CEO` = `chief executive officer`);
 * - one contiguous block moved ("roughly, what is X" = "what is X roughly"),
 *   with relation words (`to`, `from`, `for`, `than`, `before`...) kept in place, so
 *   "USD to EUR" never matches "EUR to USD", and a possessor (`neighbour's`)
 *   kept in place unless the whole prompt turns around; not two neighbouring words
 *   swapped, unless one is `not` or an -ly adverb
 *   ("diff main feature" / "diff feature main", `mv a.yaml a.bak` /
 *   `mv a.bak a.yaml`, `a => b` / `a >= b`), and no symbol moved across
 *   another (`*p++` / `++*p`).
 *
 * Everything else rejects: a different content word (an entity, an antonym, a
 * time word, a tone or format instruction), a different payload (code, a
 * quoted string, a symbol, a word whose case matters), or any other order.
 * A synonym counts only where WordNet has it (`word-synonyms.ts`): a table of
 * our own would be tuned to the words its author thought of, and a missed hit
 * costs only an upstream call.
 *
 * All of the above but accents is for English prompts (`prompt-language.ts`):
 * the word lists are English. Two prompts of which either is not English must
 * have the same tokens once case and accents are settled, that is, differ only
 * in case, accents, whitespace, punctuation and the courtesy that the
 * canonical form takes out (`prompt-other-languages.ts`), and, in French,
 * Spanish, Italian, Portuguese, German, Dutch, Polish and Swedish, in typos:
 * a word one slip from the other's in the same place, one of the two no word
 * of the language and, in German, Dutch and Swedish, the other one
 * (`other-dictionaries.ts`).
 */

/** Why a candidate was rejected (the `reason` label of the rejection metric). */
export type VerifyReason = 'payload' | 'content' | 'order';

/**
 * An accepted candidate; `corrected` is the new prompt's tokens with the typos
 * and acronyms the verifier explained written as the cached prompt has them,
 * when there were any: what the second stage compares, so that a typo the
 * embedding model reads as another word does not turn a verified paraphrase
 * away.
 */
export type Verdict = { ok: true; corrected?: string[] } | { ok: false; reason: VerifyReason };

/** Words of the new prompt and what they stand for in the cached one. */
type Replacement = readonly [from: readonly string[], to: readonly string[]];

/** Words that carry no content of their own. Tense, negation, quantity, time and relation words are not here. */
const FUNCTION_WORDS = new Set([
  'a',
  'an',
  'the',
  'is',
  'are',
  'am',
  'be',
  'been',
  'being',
  'do',
  'does',
  'it',
  'its',
  'of',
  'some',
  'any',
  'just',
  'also',
  'so',
  'well',
  'ok',
  'okay',
  'um',
  'oh',
  'actually',
  'basically',
  'there',
  'what',
  "'s",
]);

/** Interchangeable question words. */
const SAME_WORD: ReadonlyMap<string, string> = new Map([['which', 'what']]);

/** A payload token: compared exactly, never explained away (code, quotes, symbols, digits, case that matters). */
function isPayload(token: string): boolean {
  return !/^[\p{Ll}]+(?:['’-][\p{Ll}]+)*$/u.test(token);
}

/** Words that may change places with a neighbour without changing the question: `not` ("why is not Python fast" = "why is Python not fast") and -ly adverbs ("quickly reset" = "reset quickly"). */
function floats(word: string): boolean {
  return word === 'not' || isLyWord(word);
}

/** A word of five letters or more ending in -ly that WordNet lists as an adverb (`quickly`; not `butterfly`, whose place says who eats whom). */
function isLyWord(word: string): boolean {
  return word.length > 4 && word.endsWith('ly') && isEnglishAdverb(word);
}

/** -ly words whose place is their meaning ("take two weekly and one daily") or that are no adverb. */
const PLACED_LY = new Set([
  'daily',
  'weekly',
  'monthly',
  'yearly',
  'hourly',
  'nightly',
  'early',
  'family',
  'supply',
  'apply',
  'reply',
  'rally',
  'jelly',
  'belly',
  'bully',
]);

/** An adverb that may stand anywhere in its sentence ("suddenly", "roughly"). */
function isFreeAdverb(word: string): boolean {
  return isLyWord(word) && !PLACED_LY.has(word);
}

/**
 * Whether `b` is `a` with its one free adverb moved anywhere and one block moved: "suddenly my
 * budgie plucks its feathers, why" = "why does my budgie suddenly pluck its feathers". One adverb
 * only, so two never trade places, and within its clause.
 */
function adverbMoved(
  a: readonly string[],
  b: readonly string[],
  rawA: readonly string[],
  rawB: readonly string[],
): boolean {
  const adverbs = a.filter(isFreeAdverb);
  if (adverbs.length !== 1 || b.filter(isFreeAdverb).length !== 1) return false;
  // Within its clause: not across a relation word ("slowly add the eggs, then the flour").
  const relationsBefore = (words: readonly string[]) =>
    words.slice(0, words.findIndex(isFreeAdverb)).filter((word) => RELATIONS.has(word)).length;
  if (relationsBefore(a) !== relationsBefore(b)) return false;
  const rest = (words: readonly string[]) => words.filter((word) => !isFreeAdverb(word));
  return isBlockMove(rest(a), rest(b), rawA, rawB);
}

/** A lone symbol of code or maths (`=`, `>`, `*`); quoted and fenced spans are longer tokens. */
function isSymbol(token: string): boolean {
  return /^[^\p{L}\p{N}]$/u.test(token);
}

/** The content words of token lists seen recently: a lookup verifies one prompt against up to four candidates. */
const contents = new WeakMap<readonly string[], readonly string[]>();

function contentOf(tokens: readonly string[]): readonly string[] {
  let known = contents.get(tokens);
  if (!known) {
    known = contentWords(tokens);
    contents.set(tokens, known);
  }
  return known;
}

function contentWords(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    // A number word is its digits: the guards have already checked both prompts hold the same numbers.
    const word = SAME_WORD.get(token) ?? NUMBER_WORDS.get(token) ?? token;
    if (FUNCTION_WORDS.has(word)) continue;
    // "how to" asks for a method; its "to" relates nothing.
    if (word === 'to' && out.at(-1) === 'how') out[out.length - 1] = 'how-to';
    else out.push(word);
  }
  return out;
}

/** Damerau-Levenshtein distance (adjacent transpositions count one), bounded by `max` + 1. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        (rows[0] as number[])[j] = j;
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = rows[i] as number[];
      const up = rows[i - 1] as number[];
      let value = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = value;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}

function isTypo(a: string, b: string): boolean {
  // A word and its -s form read alike: "how long cooked chicken keeps" = "how long does cooked chicken keep".
  if (
    a.length >= 4 &&
    b.length >= 4 &&
    /^\p{Ll}+$/u.test(a) &&
    /^\p{Ll}+$/u.test(b) &&
    (a === `${b}s` || b === `${a}s`)
  )
    return true;
  // A typo is a word that is none: two words are two words, whatever one edit separates them (`horse` / `house`).
  // Looked up last, for the few pairs close enough to be a typo at all.
  return closeEnough(a, b) && !(isEnglishWord(a) && isEnglishWord(b));
}

/** Whether `a` and `b` are close enough in spelling to be one word mistyped. */
function closeEnough(a: string, b: string, language: PromptLanguage = 'en'): boolean {
  // A capitalized name of six letters or more may carry one slip (`Novmber`); shorter ones are other names (`Iran`, `Iraq`).
  if (CAPITALIZED.test(a) && CAPITALIZED.test(b) && a[0] === b[0] && Math.min(a.length, b.length) >= 6)
    return editDistance(a, b, 1) <= 1 && slipsOfTheFinger(a, b, language);
  if (isPayload(a) || isPayload(b) || a.length < 4 || b.length < 4 || a[0] !== b[0] || negates(a, b) || opposes(a, b))
    return false;
  const allowed = Math.min(a.length, b.length) >= 8 ? 2 : 1;
  return editDistance(a, b, allowed) <= allowed && slipsOfTheFinger(a, b, language);
}

const CAPITALIZED = /^\p{Lu}\p{Ll}+$/u;

/** Removes one occurrence of each of `remove` from `list` (multiset difference). */
function without(list: readonly string[], remove: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const token of remove) counts.set(token, (counts.get(token) ?? 0) + 1);
  return list.filter((token) => {
    const n = counts.get(token) ?? 0;
    if (n === 0) return true;
    counts.set(token, n - 1);
    return false;
  });
}

/**
 * Rewrites `sequence` so the words of `other` it spells out or misspells read
 * as in `other`: a typo becomes the word it misspells, the words of an acronym
 * become the acronym. Returns the rewritten sequence and the words of `other`
 * still unexplained.
 */
function explain(
  sequence: readonly string[],
  other: readonly string[],
  raw: { here: readonly string[]; there: readonly string[] },
): { sequence: string[]; unexplained: string[]; replacements: Replacement[] } {
  const possessed = { here: possessedWords(raw.here), there: possessedWords(raw.there) };
  let onlyHere = without(sequence, other);
  let onlyThere = without(other, sequence);
  const out = [...sequence];
  const replacements: Replacement[] = [];
  // A possessive typed without its apostrophe: "my dogs ears" = "my dog's ears" (either way round).
  for (const word of [...onlyThere]) {
    const bare = word.slice(0, -1);
    const match =
      word.endsWith('s') && possessed.here.has(bare)
        ? bare
        : possessed.there.has(word) && onlyHere.includes(`${word}s`)
          ? `${word}s`
          : undefined;
    if (match === undefined || !onlyHere.includes(match)) continue;
    out[out.indexOf(match)] = word;
    onlyHere = without(onlyHere, [match]);
    onlyThere = without(onlyThere, [word]);
  }
  for (const word of [...onlyThere]) {
    const typo = onlyHere.find((candidate) => isTypo(candidate, word));
    if (typo !== undefined) {
      out[out.indexOf(typo)] = word;
      replacements.push([[typo], [word]]);
      onlyHere = without(onlyHere, [typo]);
      onlyThere = without(onlyThere, [word]);
    }
  }
  // A synonym (`word-synonyms.ts`) reads as the cached word for the order check, but stays as written
  // for the second stage: the transformer must still find the two prompts alike in context.
  for (const word of [...onlyThere]) {
    const synonym = onlyHere.find((candidate) => synonymous(candidate, word));
    if (synonym !== undefined) {
      out[out.indexOf(synonym)] = word;
      onlyHere = without(onlyHere, [synonym]);
      onlyThere = without(onlyThere, [word]);
    }
  }
  // An acronym on one side, its words on the other, either way round.
  for (const acronym of [...onlyThere]) {
    const words = spelledOut(acronym, out, onlyHere);
    if (!words) continue;
    const spelled = out.splice(words.start, words.length, acronym);
    replacements.push([spelled, [acronym]]);
    onlyHere = without(onlyHere, spelled);
    onlyThere = without(onlyThere, [acronym]);
  }
  for (const acronym of [...onlyHere]) {
    const words = spelledOut(acronym, other, onlyThere);
    if (!words) continue;
    const spelled = other.slice(words.start, words.start + words.length);
    out.splice(out.indexOf(acronym), 1, ...spelled);
    replacements.push([[acronym], spelled]);
    onlyHere = without(onlyHere, [acronym]);
    onlyThere = without(onlyThere, spelled);
  }
  // A typo of a function word the cached prompt has ("wich documents" = "which documents"): no content either.
  const functionTypo = (word: string, tokens: readonly string[]) =>
    tokens.some((token) => (FUNCTION_WORDS.has(token) || SAME_WORD.has(token)) && isTypo(word, token));
  for (const word of onlyHere.filter((candidate) => functionTypo(candidate, raw.there))) {
    out.splice(out.indexOf(word), 1);
    onlyHere = without(onlyHere, [word]);
  }
  return { sequence: out, unexplained: [...onlyHere, ...onlyThere], replacements };
}

/** `tokens` with each replacement's words (the first place they stand together) written as it says. */
function corrected(tokens: readonly string[], replacements: readonly Replacement[]): string[] {
  const out = [...tokens];
  for (const [from, to] of replacements) {
    const at = out.findIndex((_, i) => from.every((word, k) => out[i + k] === word));
    if (at >= 0) out.splice(at, from.length, ...to);
  }
  return out;
}

/** Where `list` spells out `acronym` with words all still unexplained (`loose`): `CEO` = `chief executive officer`. */
function spelledOut(
  acronym: string,
  list: readonly string[],
  loose: readonly string[],
): { start: number; length: number } | undefined {
  if (!/^\p{Lu}{2,6}s?$/u.test(acronym)) return undefined;
  const letters = acronym.replace(/s$/, '').toLowerCase();
  // A hyphenated word gives the initial of each part: `NDA` = `non-disclosure agreement`.
  const initials = (word: string) =>
    word
      .split('-')
      .map((part) => part[0]?.toLowerCase() ?? '')
      .join('');
  for (let start = 0; start < list.length; start++) {
    let spelled = '';
    for (let end = start; end < list.length && spelled.length < letters.length; end++) {
      const word = list[end] as string;
      if (!loose.includes(word)) break;
      spelled += initials(word);
      if (spelled === letters) return { start, length: end - start + 1 };
      if (!letters.startsWith(spelled)) break;
    }
  }
  return undefined;
}

/** Subject pronouns and the auxiliaries a question puts before them ("what should I see" = "what I should see"). */
const SUBJECTS = new Set(['i', 'you', 'we', 'they', 'he', 'she']);
const AUXILIARIES = new Set([
  'should',
  'can',
  'could',
  'would',
  'will',
  'shall',
  'may',
  'might',
  'must',
  'was',
  'were',
  'have',
  'has',
  'had',
  'did',
]);

/** Whether `x` and `y` are a subject and an auxiliary, either way round: their order is a question's inversion. */
function inversion(x: readonly string[], y: readonly string[]): boolean {
  if (x.length !== 1 || y.length !== 1) return false;
  const [p, q] = [x[0] as string, y[0] as string];
  return (SUBJECTS.has(p) && AUXILIARIES.has(q)) || (SUBJECTS.has(q) && AUXILIARIES.has(p));
}

/** Words whose neighbours say who does what to whom: a block move may not carry one across the others. */
const RELATIONS = new Set([
  'to',
  'from',
  'for',
  'into',
  'onto',
  'than',
  'vs',
  'versus',
  'over',
  'under',
  'before',
  'after',
  'then',
  'by',
  'per',
  'via',
  'toward',
  'towards',
  'against',
  'instead',
  'rather',
  'except',
  'without',
  'between',
]);

/** Most words of a compound whose order the verifier holds ("guinea pig rabbit pellets"). */
const MAX_COMPOUND_WORDS = 4;

/** Whether `run` stands word after word somewhere in `tokens`. */
function contiguous(tokens: readonly string[], run: readonly string[]): boolean {
  for (let i = 0; i + run.length <= tokens.length; i++)
    if (run.every((token, k) => tokens[i + k] === token)) return true;
  return false;
}

/**
 * True when `b` is `a` with one contiguous block moved elsewhere, and either the block or what it
 * moved across holds no relation word. `rawA` and `rawB` are the prompts' tokens before function
 * words were dropped, to tell two neighbours swapped from words that only meet once those are gone.
 */
function isBlockMove(
  a: readonly string[],
  b: readonly string[],
  rawA: readonly string[],
  rawB: readonly string[],
): boolean {
  const n = a.length;
  if (n !== b.length) return false;
  let start = 0;
  while (start < n && a[start] === b[start]) start++;
  let end = n - 1;
  while (end >= start && a[end] === b[end]) end--;
  if (start > end) return true;
  const region = a.slice(start, end + 1);
  const target = b.slice(start, end + 1);
  // Within the differing region, `target` must be `region` rotated: a block from its front moved to its back, or back to front.
  for (let k = 1; k < region.length; k++) {
    const rotated = [...region.slice(k), ...region.slice(0, k)];
    if (rotated.every((token, i) => token === target[i])) {
      const moved = region.slice(0, k);
      const stayed = region.slice(k);
      // Neighbouring words swapped, up to a compound's length, reorder a name, a compound or a
      // command's arguments ("diff main feature", "rabbit guinea pig pellets" / "guinea pig rabbit
      // pellets"), not a phrase ("capital of France" = "France: its capital", "is it safe, eating
      // raw cookie dough" = "is eating raw cookie dough safe"); and code reads in order, so no symbol
      // moves across another (`*p++` / `++*p`; "in C++" may still move).
      const floating =
        (moved.length === 1 && floats(moved[0] as string)) ||
        (stayed.length === 1 && floats(stayed[0] as string)) ||
        inversion(moved, stayed);
      const compound =
        moved.length + stayed.length <= MAX_COMPOUND_WORDS &&
        contiguous(rawA, [...moved, ...stayed]) &&
        contiguous(rawB, [...stayed, ...moved]);
      if (!floating && compound) return false;
      if (moved.some(isSymbol) && stayed.some(isSymbol)) return false;
      const movable = (block: readonly string[]) => block.every((token) => !RELATIONS.has(token));
      // A phrase led by its one relation word may go from one end of the prompt to the other:
      // "under English law, what is the difference between murder and manslaughter" asks what
      // "... between murder and manslaughter under English law" does.
      const phrase = (block: readonly string[]) => RELATIONS.has(block[0] as string) && movable(block.slice(1));
      const endToEnd = start === 0 && end === n - 1 && (phrase(moved) || phrase(stayed));
      // A possessor that changes places changes whose thing is whose: "my neighbour's tree fell onto my fence" /
      // "my tree fell onto my neighbour's fence".
      const possessors = new Set([...possessedWords(rawA), ...possessedWords(rawB)]);
      if (!(start === 0 && end === n - 1) && region.some((word) => possessors.has(word))) return false;
      // Inside a prompt, a word that moves past a relation word and its object changes what the relation joins:
      // "exchange the iPhone 15 for the iPhone 15 Pro" is not "exchange the iPhone 15 Pro for the iPhone 15".
      const ledByRelation = (block: readonly string[]) => RELATIONS.has(block[0] as string);
      if (!(start === 0 && end === n - 1) && (ledByRelation(moved) || ledByRelation(stayed))) return false;
      return movable(moved) || movable(stayed) || endToEnd;
    }
  }
  return false;
}

/**
 * Most words one prompt may have that the other lacks (each way) before the
 * typo and acronym search runs: a variant differs in a handful (at most 5 in
 * the dev pair set), and the search is quadratic, which two long prompts
 * after a static first stage would pay in full.
 */
export const MAX_DIFFERING_WORDS = 16;

/**
 * A prompt's size as the verifier counts it: its content words. Two prompts
 * whose sizes differ by more than {@link MAX_DIFFERING_WORDS} never verify, so
 * the index skips such candidates without fetching them.
 */
export function promptSize(tokens: readonly string[]): number {
  return contentOf(tokens).length;
}

/** Words of `a` missing from `b`, counted as multisets. */
function missingCount(a: readonly string[], b: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const token of b) counts.set(token, (counts.get(token) ?? 0) + 1);
  let missing = 0;
  for (const token of a) {
    const n = counts.get(token) ?? 0;
    if (n > 0) counts.set(token, n - 1);
    else missing++;
  }
  return missing;
}

/** A word of prose as the canonical form writes it (not code, a quoted span or a symbol). */
const PROSE_WORD = /^[\p{L}\p{N}]+(?:[._'’-][\p{L}\p{N}]+)*$/u;

/** A prompt whose prose has no capital: its case says nothing, and it may not hold another's capitals against it. */
function caseBlind(tokens: readonly string[]): boolean {
  return tokens.every((token) => !PROSE_WORD.test(token) || token === token.toLowerCase());
}

/** English words of two letters: in capitals they are an acronym (`US`, `IT`, `OR`) that lower case does not spell. */
const TWO_LETTER_WORDS = new Set(
  'ad ah am an as at aw ax be by do eh go ha he hi if in is it la lo ma me my no of oh ok on or ow ox pa pi re so to uh um up us we ye yo'.split(
    ' ',
  ),
);

/**
 * Words whose capitals a prompt without any may ignore: a capitalized word
 * (`Paris`), an acronym of three letters or more (`DNA`) or of two that
 * spells no English word in lower case (`UK`, `TV`; not `US`, `IT`, nor a
 * letter doubled as in the date pattern `MM`), a brand in mixed
 * case of four letters or more (`WordPress`, `WiFi`), a model code (`S24`). Not one letter (`G` in
 * vim), not short units in mixed case (`kB`, `mW`, `MHz`, `Mm` for
 * megametres), not a capitonym of an English prompt.
 */
function foldable(token: string, english: boolean): boolean {
  const cased =
    /^\p{Lu}\p{Ll}{2,}$/u.test(token) ||
    /^\p{Lu}{3,}$/u.test(token) ||
    (/^\p{L}{4,}$/u.test(token) && /\p{Lu}/u.test(token)) ||
    (/^\p{Lu}{2}$/u.test(token) && token[0] !== token[1] && !TWO_LETTER_WORDS.has(token.toLowerCase())) ||
    MODEL_CODE.test(token);
  // The capitonyms are English words: in another language `amazon` is only the shop.
  return cased && !(english && CAPITONYMS.has(token.toLowerCase()));
}

/** A product or model code, a capital and digits (`S24`, `A4`, `M2`): a case-blind writer types it in lower case. */
const MODEL_CODE = /^\p{Lu}\p{N}+$/u;

/**
 * `tokens` with each foldable word that `blind` writes in lower case (or misspells so) written so
 * too; not a word right after a number, which is a unit whose case is its meaning (`200 Cal` is not `200 cal`).
 */
function inCaseOf(tokens: readonly string[], blind: readonly string[]): readonly string[] {
  const lower = new Set(blind);
  const english = promptLanguage(tokens) === 'en';
  // A name the case-blind prompt also misspells, or writes without its accents, is in its case too ("Fahrenheit" /
  // "farenheit", "São Paulo" / "sao paulo"): the typo and the accents are judged after.
  const written = (word: string) =>
    lower.has(word) ||
    lower.has(withoutAccents(word)) ||
    blind.some((other) => /^\p{Ll}+$/u.test(other) && !FUNCTION_WORDS.has(other) && isTypo(other, word));
  const out = tokens.map((token, i) =>
    foldable(token, english) && written(token.toLowerCase()) && !isUnit(tokens, i) ? token.toLowerCase() : token,
  );
  // A name of several words the case-blind prompt writes whole is the name, capitonyms and acronyms included:
  // `Elden Ring` = `elden ring`, `Ford Focus` = `ford focus`, `VW Golf` = `vw golf`.
  for (let i = 0; i < tokens.length;) {
    let end = i;
    while (end < tokens.length && NAME_WORD.test(tokens[end] as string)) end++;
    const name = tokens.slice(i, end).map((word) => word.toLowerCase());
    if (name.length >= 2 && contiguous(blind, name)) out.splice(i, name.length, ...name);
    i = Math.max(end, i + 1);
  }
  return out;
}

/** A word of a name: capitalized, or an acronym. */
const NAME_WORD = /^(?:\p{Lu}\p{Ll}+|\p{Lu}{2,})$/u;

/** Whether `tokens[i]` follows a quantity, as a unit whose case is its meaning (`200 Cal`); not a year (`2016 Ford`). */
function isUnit(tokens: readonly string[], i: number): boolean {
  const previous = tokens[i - 1] ?? '';
  return /^\p{N}/u.test(previous) && !/^(?:1[89]|20)\d\d$/u.test(previous);
}

/**
 * A word of four capitals or more written for emphasis, as `other` writes it: capitalized (`SPANISH` = `Spanish`), or, in
 * an English prompt, in lower case where it is an English word (`FREE` = `free`). An acronym such as `HTML` stays, so
 * its words can still spell it.
 */
function unshouted(tokens: readonly string[], other: readonly string[]): readonly string[] {
  if (!tokens.some((token) => /^\p{Lu}{4,}$/u.test(token))) return tokens;
  const capitalized = (token: string) => `${token[0]}${token.slice(1).toLowerCase()}`;
  const written = new Set(other);
  let english: boolean | undefined;
  return tokens.map((token) => {
    if (!/^\p{Lu}{4,}$/u.test(token)) return token;
    if (written.has(capitalized(token))) return capitalized(token);
    const lower = token.toLowerCase();
    return written.has(lower) && (english ??= promptLanguage(tokens) === 'en') && isEnglishWord(lower) ? lower : token;
  });
}

/**
 * `tokens` with the later words of a name lower-cased where `other` writes the
 * same name so: `Eiffel Tower` = `Eiffel tower`, `Roman Empire` = `Roman
 * empire` (the first word keeps its capital, and a name's later words are
 * where people differ).
 */
function namesInCaseOf(tokens: readonly string[], other: readonly string[]): readonly string[] {
  // Built on the first name met: most prompts have none, and a long one's bigrams are costly.
  let bigrams: Set<string> | undefined;
  let out: string[] | undefined;
  let english: boolean | undefined;
  for (let i = 1; i < tokens.length; i++) {
    const [previous, token] = [tokens[i - 1] as string, tokens[i] as string];
    if (!/^\p{Lu}/u.test(previous)) continue;
    english ??= promptLanguage(tokens) === 'en';
    if (!foldable(token, english)) continue;
    if (!bigrams) {
      bigrams = new Set<string>();
      for (let j = 1; j < other.length; j++) bigrams.add(`${other[j - 1]} ${other[j]}`);
    }
    const folded = token.toLowerCase();
    if (bigrams.has(`${previous} ${folded}`)) (out ??= [...tokens])[i] = folded;
  }
  return out ?? tokens;
}

/** A word of prose in a Latin alphabet, accents and all (`réinitialiser`, `taşıma`; not `ください`, whose marks are letters). */
const LATIN_WORD = /^[\p{Script=Latin}\p{M}]+(?:['’-][\p{Script=Latin}\p{M}]+)*$/u;

const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * Accented letters a keyboard of the language types with one key (`ñ` in Spanish, `é è à ç ù` on a French one):
 * writers who type these often skip those that need a dead key first (`cuantas` beside `niño`, `etre` beside
 * `remboursé`).
 */
const ONE_KEY_LETTERS: Partial<Record<PromptLanguage, string>> = {
  es: 'ñ',
  fr: 'éèàçù',
  it: 'àèéìòù',
  pt: 'ç',
  de: 'äöüß',
  sv: 'åäö',
};

/** Whether a prompt's writer typed an accent on a word of prose; with `oneKey`, one that takes a dead key on that keyboard. */
function accented(tokens: readonly string[], oneKey = ''): boolean {
  return tokens.some(
    (token) =>
      NOT_ASCII.test(token) &&
      LATIN_WORD.test(token) &&
      [...token].some((letter) => !oneKey.includes(letter.toLowerCase()) && withoutAccents(letter) !== letter),
  );
}

/** `token` without the accents that take a dead key on `oneKey`'s keyboard. */
function withoutDeadKeys(token: string, oneKey: string): string {
  if (!NOT_ASCII.test(token) || !LATIN_WORD.test(token)) return token;
  return [...token].map((letter) => (oneKey.includes(letter.toLowerCase()) ? letter : withoutAccents(letter))).join('');
}

/**
 * Two prompts of one language that both write accents, with those that take a dead key taken off the one whose
 * writer typed none of them.
 */
function deadKeysSettled(cached: readonly string[], next: readonly string[]): [readonly string[], readonly string[]] {
  const language = promptLanguage(next);
  const oneKey = ONE_KEY_LETTERS[language];
  if (oneKey === undefined || promptLanguage(cached) !== language) return [cached, next];
  const [deadCached, deadNext] = [accented(cached, oneKey), accented(next, oneKey)];
  if (deadCached && !deadNext) return [cached.map((token) => withoutDeadKeys(token, oneKey)), next];
  if (deadNext && !deadCached) return [cached, next.map((token) => withoutDeadKeys(token, oneKey))];
  return [cached, next];
}

/**
 * `tokens` without their accents, for comparison with a prompt that writes none: someone typing on a keyboard without
 * them asks the same (`reinitialiser`, `taşıma` / `tasima`). Two prompts that both write accents keep them, so `papá` and `papa`, `avô`
 * and `avó` stay apart wherever the writer could type them.
 */
function unaccented(tokens: readonly string[], plain: readonly string[]): string[] {
  const written = new Set(plain);
  return tokens.map((token) => {
    if (!LATIN_WORD.test(token)) return token;
    const bare = withoutAccents(token);
    if (written.has(bare)) return bare;
    // German typed without umlauts spells them out: `Bettwäsche` / `Bettwaesche`.
    const spelled = withoutAccents(token.replace(/[äöü]/gu, (letter) => `${letter.normalize('NFD')[0]}e`));
    return written.has(spelled) ? spelled : bare;
  });
}

/**
 * `tokens` with two neighbouring words joined where `other` writes them as one and `tokens` does not: a compound
 * split or hyphenated (`zomer vakantie` / `zomervakantie`, `wi-fi` / `wifi`, Korean `의료비 공제` / `의료비공제`).
 * Not two English words of an English prompt, which say something else apart (`every day` is not `everyday`,
 * `may be` not `maybe`).
 */
function joinedAsIn(tokens: readonly string[], other: readonly string[]): readonly string[] {
  // Built on the first pair of words that could be a compound: most prompts of two lengths have none.
  let byLower: Map<string, string> | undefined;
  const compound = (first: string, second: string) => {
    if (!(LATIN_WORD.test(first) && LATIN_WORD.test(second)) && !(HANGUL_WORD.test(first) && HANGUL_WORD.test(second)))
      return undefined;
    byLower ??= new Map(other.map((word) => [word.toLowerCase(), word]));
    const whole = byLower.get(`${first}${second}`.toLowerCase());
    if (whole === undefined || tokens.includes(whole)) return undefined;
    const english = promptLanguage(tokens) === 'en';
    return english && isEnglishWord(first.toLowerCase()) && isEnglishWord(second.toLowerCase()) ? undefined : whole;
  };
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const whole = i + 1 < tokens.length ? compound(tokens[i] as string, tokens[i + 1] as string) : undefined;
    out.push(whole ?? (tokens[i] as string));
    if (whole) i++;
  }
  return out.length === tokens.length ? tokens : out;
}

/** A word of Korean, whose spacing between the parts of a compound varies from writer to writer (`의료비 공제` / `의료비공제`). */
const HANGUL_WORD = /^\p{Script=Hangul}+$/u;

/**
 * `tokens` with a hyphenated word written as its parts where `other` writes them apart and not joined: `faut-il` /
 * `faut il` (English prompts have their hyphens taken out by the canonical form already).
 */
function splitAsIn(tokens: readonly string[], other: readonly string[]): readonly string[] {
  if (!tokens.some((token) => token.includes('-'))) return tokens;
  return tokens.flatMap((token) => {
    const parts = token.split('-');
    return parts.length > 1 && LATIN_WORD.test(token) && !other.includes(token) && contiguous(other, parts)
      ? parts
      : [token];
  });
}

/** Lower-case words a prompt writes with a possessive `'s` (`dog` in "my dog's ears"). */
function possessedWords(tokens: readonly string[]): ReadonlySet<string> {
  const out = new Set<string>();
  for (let i = 1; i < tokens.length; i++)
    if (tokens[i] === "'s" && /^\p{Ll}+$/u.test(tokens[i - 1] as string)) out.add(tokens[i - 1] as string);
  return out;
}

/** A quote of one word is the word where `other` writes it bare: `Was bedeutet „Staffelmiete“` = `Was bedeutet Staffelmiete`. */
function unquotedAsIn(tokens: readonly string[], other: readonly string[]): readonly string[] {
  if (!tokens.some((token) => ONE_WORD_QUOTE.test(token))) return tokens;
  return tokens.map((token) => {
    const inner = ONE_WORD_QUOTE.exec(token)?.[1];
    return inner !== undefined && isOneWordQuote(inner) && other.includes(inner) && !other.includes(token)
      ? inner
      : token;
  });
}

/** A quote token as the canonical form writes it, straight marks around one chunk. */
const ONE_WORD_QUOTE = /^["'](\S+)["']$/u;

/**
 * Whether two prompts of one language with a word list differ only by typos: in the same place, a word one slip
 * from the other's, one of the two no word of the language (`delcarar` / `declarar`; never `poisson` / `poison`).
 * In a language that writes compounds as one word, one of the two must also be a word of the list: two forms it
 * lacks may be two compounds.
 */
function typosOnly(cached: readonly string[], next: readonly string[]): boolean {
  const language = promptLanguage(next);
  if (!hasDictionary(language) || promptLanguage(cached) !== language || cached.length !== next.length) return false;
  let typos = 0;
  for (let i = 0; i < next.length; i++) {
    const [was, now] = [cached[i] as string, next[i] as string];
    if (was === now) continue;
    if (!LATIN_WORD.test(was) || !LATIN_WORD.test(now) || !closeEnough(was, now, language)) return false;
    const [wasWord, nowWord] = [isWordOf(language, was), isWordOf(language, now)];
    if (wasWord && nowWord) return false;
    if (!wasWord && !nowWord && COMPOUNDING.has(language)) return false;
    typos++;
  }
  return typos > 0;
}

/** Languages that write compounds as one word, which no list enumerates: German, Dutch, Swedish. */
const COMPOUNDING: ReadonlySet<PromptLanguage> = new Set(['de', 'nl', 'sv']);

function sameTokens(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((token, i) => token === b[i]);
}

/** Whether a cached prompt's answer answers `next`: both as canonical tokens. */
export function verifyCandidate(storedTokens: readonly string[], nextTokens: readonly string[]): Verdict {
  if (sameTokens(storedTokens, nextTokens)) return { ok: true };
  let cached = unshouted(unquotedAsIn(storedTokens, nextTokens), nextTokens);
  let next = unshouted(unquotedAsIn(nextTokens, storedTokens), storedTokens);
  const [blindCached, blindNext] = [caseBlind(cached), caseBlind(next)];
  if (blindNext && !blindCached) cached = inCaseOf(cached, next);
  else if (blindCached && !blindNext) next = inCaseOf(next, cached);
  [cached, next] = [namesInCaseOf(cached, next), namesInCaseOf(next, cached)];
  if (sameTokens(cached, next)) return { ok: true };
  const [accentedCached, accentedNext] = [accented(cached), accented(next)];
  if (accentedCached && !accentedNext) {
    cached = unaccented(cached, next);
  } else if (accentedNext && !accentedCached) {
    next = unaccented(next, cached);
  } else if (accentedCached && accentedNext) {
    [cached, next] = deadKeysSettled(cached, next);
  }
  if (cached.length !== next.length) {
    [cached, next] = [splitAsIn(cached, next), splitAsIn(next, cached)];
    [cached, next] = [joinedAsIn(cached, next), joinedAsIn(next, cached)];
  }
  // Spelled-out umlauts and joined compounds are other words to the model: it compares the cached prompt with itself.
  if (sameTokens(cached, next)) return { ok: true, corrected: [...storedTokens] };
  const a = contentOf(cached);
  const b = contentOf(next);
  const payloadA = a.filter(isPayload).sort();
  const payloadB = b.filter(isPayload).sort();
  const payloadDiffers = payloadA.length !== payloadB.length || payloadA.some((token, i) => token !== payloadB[i]);
  // Same verdict either way; the count first because it is cheap and refuses most candidates of long prompts.
  if (missingCount(a, b) > MAX_DIFFERING_WORDS || missingCount(b, a) > MAX_DIFFERING_WORDS)
    return { ok: false, reason: payloadDiffers ? 'payload' : 'content' };
  // The rules below are English; elsewhere case, whitespace, punctuation and, with a word list, typos were all that could differ.
  if (promptLanguage(cached) !== 'en' || promptLanguage(next) !== 'en') {
    // What is left after a typo is case and accents, settled above: the model compares the cached prompt with itself.
    if (typosOnly(cached, next)) return { ok: true, corrected: [...storedTokens] };
    return { ok: false, reason: payloadDiffers ? 'payload' : 'content' };
  }
  const { sequence, unexplained, replacements } = explain(b, a, { here: next, there: cached });
  if (unexplained.length > 0)
    return { ok: false, reason: unexplained.some(isPayload) || payloadDiffers ? 'payload' : 'content' };
  if (!isBlockMove(a, sequence, cached, next) && !adverbMoved(a, sequence, cached, next))
    return { ok: false, reason: 'order' };
  return replacements.length > 0 ? { ok: true, corrected: corrected(next, replacements) } : { ok: true };
}
