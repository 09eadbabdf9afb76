import { foldOtherLanguage } from './prompt-other-languages.ts';
import { dropCourtesy } from './prompt-courtesy.ts';
import { isEnglishWord } from './english-dictionary.ts';
import { APOSTROPHELESS_NOT } from './prompt-guards.ts';
import { promptLanguage, type PromptLanguage } from './prompt-language.ts';
import { isShouting, QUOTED_STRING, quoteAsWritten, straightQuote, unquotedPrompt } from './prompt-quotes.ts';

/**
 * The canonical form of a prompt: what cannot change the answer is taken out,
 * so trivial variants share an exact-cache key and embed alike, and the
 * semantic verifier compares what is left token by token.
 *
 * Taken out: whitespace, sentence punctuation, dashes, emoji and emoticons,
 * brackets around prose, the hyphen of a lower-case compound, the capital of
 * a word that starts a sentence (every capital of a prompt written all in
 * capitals, in Title Case or in alternating case), contractions (`what's` =
 * `what is`, `won't` = `will not`, also without the apostrophe), chat
 * shorthand (`u`, `w/o`), greetings and politeness (`prompt-courtesy.ts`). Kept exactly as written: code (fenced and inline),
 * quoted strings, code chunks (`-R`, `./build`, `i++`), symbols, and every
 * capital inside a sentence (`Turkey`, `CO`, `mW`, `iPhone`, `X`).
 *
 * Contractions, shorthand, `&`, possessives and English courtesy are English
 * rules (their word lists are English): a prompt not detected as English
 * (`prompt-language.ts`) keeps every word but the greetings, thanks,
 * "please" and chat shorthand of its own language
 * (`prompt-other-languages.ts`), so only those, its case, whitespace and
 * punctuation fold.
 */

export interface CanonicalPrompt {
  /** The tokens joined by single spaces: what the exact key hashes and the embedder reads. */
  text: string;
  /** Words (case-folded where case carries no meaning), opaque spans and symbols, in order. */
  tokens: string[];
  /** The language the folding was chosen for: English rules only for `en`. */
  language: PromptLanguage;
}

/** Fenced code, inline code and quoted strings, kept verbatim (the quotes of `prompt-quotes.ts`). */
const OPAQUE = new RegExp(`\`\`\`[\\s\\S]*?\`\`\`|\`[^\`\\n]+\`|${QUOTED_STRING.source}`, 'gu');

/** Words (letters and digits, joined by . _ ' ’ -), or single symbols. */
const TOKEN = /[\p{L}\p{N}]+(?:[._'’-][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu;

/** Sentence punctuation and dashes: they never change what is asked. */
const PUNCTUATION = new Set([
  ...['.', ',', '!', '?', ';', ':', '…', '¿', '¡', '"', '“', '”', "'", '’', '—', '–'],
  // The full-width forms of East Asian text.
  ...['。', '、', '，', '？', '！', '：', '；', '．', '｡'],
]);

/** A chunk that is only a dash (` - `, `--`) or emoji: prose punctuation and tone, not content. */
// Joiners and skin-tone modifiers are listed one by one on purpose: the run may hold them in any order.
// eslint-disable-next-line no-misleading-character-class
const DASH_OR_EMOJI = /^(?:[-–—]+|[\p{Extended_Pictographic}\u{FE0F}\u{200D}\u{1F3FB}-\u{1F3FF}]+)$/u;

/** An emoticon typed in ASCII (`:)`, `;-)`, `:D`, `<3`): tone, like an emoji. */
const EMOTICON = /^(?:[:;=][-'^]?[()[\]DPpOo3*|\\/]+|<3+)$/u;

/** Brackets around words of prose, "(in Python)": an aside, not a grouping like `(8 - 3) * 2`. */
function withoutProseBrackets(chunk: string): string {
  return chunk.replace(/^\((?=\p{L})/u, '').replace(/(?<=\p{L})\)(?=[.,;:!?…"”’']*$)/u, '');
}

/** Symbols that make a word code, a path, a formula or an identifier (`./build`, `i++`, `a=>b`, `std::vector`, `50%`). */
const CODE_SYMBOL = /[/\\=<>+*&|^%$#@~{}[\]]|[^\s:]:[^\s:]|::/u;

/**
 * A whitespace-separated chunk that is code rather than prose: it holds a
 * code symbol, starts like a flag, a hidden file or a selector (`-I`,
 * `--force`, `.env`, `.Header`, `./run`), or calls something (`printf(`).
 * Such a chunk is one token, kept exactly as written: `-i` is not `-I`, and
 * `./build` not `/build`.
 */
function isCodeChunk(chunk: string): boolean {
  if (chunk.length < 2) return false;
  return CODE_SYMBOL.test(chunk) || /^[-.][\p{L}\p{N}/._-]/u.test(chunk) || /[\p{L}\p{N}_]\(/u.test(chunk);
}

/** Sentence punctuation after a chunk, and an unmatched closing or opening bracket around it. */
function chunkCore(chunk: string): string {
  let core = chunk.replace(/[.,;:!?…"”’']+$/u, '');
  if (core.endsWith(')') && !core.includes('(')) core = core.slice(0, -1);
  if (core.startsWith('(') && !core.includes(')')) core = core.slice(1);
  return core;
}

const CONTRACTIONS: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    "won't": ['will', 'not'],
    "can't": ['can', 'not'],
    "shan't": ['shall', 'not'],
    cannot: ['can', 'not'],
    "let's": ['let', 'us'],
  }),
);

/**
 * Contractions typed without the apostrophe, and chat shorthand: only forms
 * that are no other English word (not `its`, `ill`, `were`, `id`, `well`).
 * The "n't" forms are read by {@link APOSTROPHELESS_NOT}.
 */
const SHORTHAND: ReadonlyMap<string, readonly string[]> = new Map(
  Object.entries({
    whats: ['what', 'is'],
    thats: ['that', 'is'],
    wheres: ['where', 'is'],
    whos: ['who', 'is'],
    im: ['i', 'am'],
    ive: ['i', 'have'],
    youre: ['you', 'are'],
    youve: ['you', 'have'],
    theyre: ['they', 'are'],
    theyve: ['they', 'have'],
    u: ['you'],
    ur: ['your'],
    shud: ['should'],
    shld: ['should'],
    wud: ['would'],
    wld: ['would'],
    approx: ['approximately'],
    max: ['maximum'],
    info: ['information'],
    veg: ['vegetables'],
    thru: ['through'],
    tho: ['though'],
    ppl: ['people'],
    abt: ['about'],
    vs: ['versus'],
  }),
);

/**
 * Short words that are mistyped with two letters swapped (`teh`, `adn`, `waht`): too short for the verifier's typo
 * rule, and mostly words it leaves out of the comparison, so the slip is undone here, where the swapped form is no
 * English word.
 */
const SWAPPABLE: ReadonlyMap<string, string> = (() => {
  const out = new Map<string, string>();
  for (const word of 'the and you how what that with this your are for from there does when where which why who have'.split(
    ' ',
  ))
    for (let i = 0; i + 1 < word.length; i++)
      out.set(`${word.slice(0, i)}${word[i + 1]}${word[i]}${word.slice(i + 2)}`, word);
  return out;
})();

/** The word `lower` mistypes by two neighbouring letters swapped, if it is one of {@link SWAPPABLE}'s and no word itself. */
function unswapped(lower: string): string | undefined {
  const word = SWAPPABLE.get(lower);
  return word === undefined || isEnglishWord(lower) ? undefined : word;
}

/** Chunks of chat shorthand that hold a slash, which would make them code. */
const SLASHED: ReadonlyMap<string, string> = new Map([
  ['w/', 'with'],
  ['w/o', 'without'],
  ['b/c', 'because'],
]);

/** Words whose `'s` is `is`, not a possessive. */
const IS_CONTRACTED = new Set([
  'what',
  'that',
  'it',
  'there',
  'here',
  'who',
  'where',
  'how',
  'when',
  'why',
  'he',
  'she',
]);

const SUFFIXES: ReadonlyArray<[string, string]> = [
  ["n't", 'not'],
  ["'m", 'am'],
  ["'re", 'are'],
  ["'ve", 'have'],
  ["'ll", 'will'],
  ["'d", 'would'],
];

/**
 * A sentence or line of prose written in capitals (`SUMMARISE WEEKS 1 TO 4 FOR ME.`) inside a
 * prompt that is not, as a request typed in capitals under a pasted document: in lower case, as a
 * shouted prompt is. At least four words, and no code chunk, whose case may be its meaning.
 */
function withoutShoutedSentences(prose: string): string {
  if (!/\p{Lu}{2}/u.test(prose)) return prose;
  return prose.replace(/[^.!?…\n]+/gu, (sentence) => {
    if (/\p{Ll}/u.test(sentence) || !isShouting(sentence)) return sentence;
    const chunks = sentence.match(/\S+/gu) ?? [];
    return chunks.length >= 4 && !chunks.some((chunk) => isCodeChunk(chunkCore(chunk)))
      ? sentence.toLowerCase()
      : sentence;
  });
}

/** A prompt in alternating case (`wHaT iS tHe DeNsItY`): most of its words switch from lower to upper case inside. */
function isAlternatingCase(text: string): boolean {
  const words = text.match(/\p{L}{2,}/gu) ?? [];
  const alternating = words.filter((word) => /\p{Ll}\p{Lu}/u.test(word)).length;
  return alternating >= 3 && alternating >= 0.6 * words.length;
}

/** A prompt in Title Case (`Give Me Tips For Running`): its capitals say nothing about names. */
function isTitleCase(text: string): boolean {
  const words = text.match(/\p{L}+/gu) ?? [];
  const capitalized = words.filter((word) => /^\p{Lu}/u.test(word)).length;
  return words.length >= 3 && capitalized >= 0.75 * words.length;
}

/** Capitalized words whose case is their meaning in code (`True` in Python, `true` in JSON). */
const CASED_LITERALS = new Set(['True', 'False', 'None', 'Null', 'NaN', 'Nil', 'Infinity']);

/**
 * A capitalized word that starts a sentence, or any word of a prompt written
 * all in capitals or in Title Case, folds: its capital is the writer's habit.
 * Inside a sentence of a prompt that uses case (`keepNames`), a capital is
 * kept, since it may be the meaning: `Turkey` is not `turkey`, `Hello` in
 * "hash the string Hello" is not `hello`, `Int` is not `int`. Capitals
 * elsewhere in a word always stay (`CO` is not `Co`, `mW` not `MW`), and so
 * does a single letter (`x` and `X`) and a code literal. A prompt written
 * without capitals says nothing by its case; the verifier lets it match one
 * that has them (see `prompt-verifier.ts`).
 */
function foldCase(word: string, keepNames: boolean): string {
  if (word === 'I' || word.startsWith("I'") || word.startsWith('I’')) return word.toLowerCase();
  // The article of a Title Case or shouted prompt ("How To Write A Letter").
  if (word === 'A' && !keepNames) return 'a';
  if (!/^\p{Lu}[\p{Ll}'’]+(?:-\p{L}[\p{Ll}'’]*)*$/u.test(word) || CASED_LITERALS.has(word)) return word;
  return keepNames ? word : word.toLowerCase();
}

function expand(token: string, keepNames: boolean, english: boolean): string[] {
  const word = foldCase(token, keepNames);
  const lower = word.toLowerCase().replaceAll('’', "'");
  // Outside English only case folds, `ß` is `ss` (as Swiss German writes it), `ё` is `е` (as Russian mostly writes it)
  // and an elided word is a word of its own (`l'anno` = `l anno`, `qual'è` = `qual è`): `Bär` and `est-il` stay as
  // written (case aside).
  if (!english)
    return (lower === word.replaceAll('’', "'") ? lower : word)
      .replaceAll('ß', 'ss')
      .replaceAll('ё', 'е')
      .split(/['’]/u)
      .filter((part) => part !== '');
  // `OK` is the word `ok` in any case.
  if (lower === 'ok') return ['ok'];
  // A possessive stays a word of its own, so `the UK's` and `the United Kingdom's` differ only in the name.
  if (/^\p{Lu}/u.test(word) && /['’]s$/.test(word)) return [word.slice(0, -2), "'s"];
  if (lower !== word.replaceAll('’', "'")) return [word];
  // A compound written with a hyphen is its words: `non-stick` = `non stick`, `first-time` = `first time`, `30-minute` = `30 minute`.
  if (/^[\p{Ll}\p{N}]+(?:-\p{Ll}{2,})+$/u.test(word) && /^(?:\p{Ll}{2}|\p{N})/u.test(word)) return word.split('-');
  const whole = CONTRACTIONS.get(lower) ?? SHORTHAND.get(lower);
  if (whole) return [...whole];
  const swapped = unswapped(lower);
  if (swapped) return [swapped];
  // Typed without its apostrophe, "n't" reads as with it: `dont` = `don't`, `wont` = `won't`.
  if (APOSTROPHELESS_NOT.test(lower)) return expand(`${lower.slice(0, -2)}n't`, keepNames, english);
  if (lower.endsWith("'s"))
    return IS_CONTRACTED.has(lower.slice(0, -2)) ? [lower.slice(0, -2), 'is'] : [lower.slice(0, -2), "'s"];
  for (const [suffix, full] of SUFFIXES)
    if (lower.endsWith(suffix) && lower.length > suffix.length) return [lower.slice(0, -suffix.length), full];
  return [lower];
}

/** Punctuation after which a capital letter starts a sentence rather than a name. */
const SENTENCE_END = /^[.!?…:。？！]$/;

/**
 * The tokens of a stretch of prose, chunk by chunk: a code chunk is one token,
 * the rest is words and symbols. `mayKeepNames`: the prompt is neither all
 * capitals nor Title Case; `promptStart`: the stretch opens the prompt, so its
 * first word starts a sentence.
 */
function proseTokens(
  prose: string,
  shouting: boolean,
  mayKeepNames: boolean,
  promptStart: boolean,
  english: boolean,
): string[] {
  const tokens: string[] = [];
  let sentenceStart = promptStart;
  let previousEnd = 0;
  for (const chunkMatch of prose.matchAll(/\S+/gu)) {
    const chunk = chunkMatch[0];
    // A line break starts a sentence after punctuation or a blank line, or before a field's label
    // ("Task: ... / Ingredients: ..."); inside a sentence it is only wrapping.
    const gap = prose.slice(previousEnd, chunkMatch.index);
    if (
      gap.includes('\n') &&
      (/\n\s*\n/.test(gap) || /[.!?…:]/.test(prose[previousEnd - 1] ?? '') || chunk.endsWith(':'))
    )
      sentenceStart = true;
    previousEnd = chunkMatch.index + chunk.length;
    // Most chunks are a bare word: no code, bracket, dot or punctuation to look for.
    if (/^\p{L}+$/u.test(chunk)) {
      tokens.push(...expand(shouting ? chunk.toLowerCase() : chunk, mayKeepNames && !sentenceStart, english));
      sentenceStart = false;
      continue;
    }
    if (EMOTICON.test(chunk)) {
      sentenceStart = true;
      continue;
    }
    const core = chunkCore(chunk);
    // What follows a dash or an emoji opens a clause of its own, as after a colon ("translate into French - The meeting").
    if (DASH_OR_EMOJI.test(core)) {
      sentenceStart = true;
      continue;
    }
    // A lone ampersand joins words as `and` does ("salt & pepper").
    if (core === '&' && english) {
      tokens.push('and');
      sentenceStart = false;
      continue;
    }
    const slashed = english ? SLASHED.get(core.toLowerCase()) : undefined;
    if (slashed) {
      tokens.push(slashed);
      sentenceStart = false;
      continue;
    }
    if (isCodeChunk(core)) {
      tokens.push(core);
      sentenceStart = SENTENCE_END.test(chunk.at(-1) as string) && core.length < chunk.length;
      continue;
    }
    // Initials written with dots are the same letters without them: `a.m.` = `am`, `U.S.` = `US`.
    const words = withoutProseBrackets(/^(?:\p{L}\.){2,}$/u.test(chunk) ? chunk.replaceAll('.', '') : chunk);
    const text = shouting ? words.toLowerCase() : words;
    for (const match of text.matchAll(TOKEN)) {
      const token = match[0];
      if (PUNCTUATION.has(token)) {
        if (SENTENCE_END.test(token)) sentenceStart = true;
        continue;
      }
      tokens.push(...expand(token, mayKeepNames && !sentenceStart, english));
      sentenceStart = false;
    }
  }
  return tokens;
}

/** A quoted string whose last word ends a sentence (`"... on time."`). */
const QUOTE_ENDING_SENTENCE = /^["'“‘„«].*[.!?…]["'”’“»]$/su;

/** A number with a unit glued on (`50ml`, `2.5kg`, `24h`); not an ordinal (`1st`, `2nd`, `3e`, `2de`). */
const GLUED_UNIT = /^(\p{N}+(?:[.,]\p{N}+)?)(\p{L}{1,4})$/u;
const ORDINAL_ENDINGS = new Set([
  'st',
  'nd',
  'rd',
  'th',
  'e',
  'er',
  're',
  'ere',
  'ème',
  'eme',
  'de',
  'ste',
  'te',
  'o',
  'a',
]);

/** The litre and its multiples, which SI writes with `l` or `L` alike (`50 mL` = `50 ml`). */
const LITRES = /^[mcdhkµu]?L$/u;

/** A number with its per cent sign (`80%`). */
const PER_CENT = /^(\p{N}+(?:[.,]\p{N}+)?)%$/u;

/**
 * Writes units alike, in place: `50ml` = `50 ml` (a unit glued to its number is a word of its own), `mL` = `ml`,
 * `80%` = `80 %`, and in English `80 percent` and `80 per cent` = `80 %`.
 */
function unitsSpelledAlike(tokens: string[], english: boolean): void {
  for (let i = 0; i < tokens.length; i++) {
    const glued = GLUED_UNIT.exec(tokens[i] as string) ?? PER_CENT.exec(tokens[i] as string);
    if (glued && !ORDINAL_ENDINGS.has((glued[2] ?? '%').toLowerCase()))
      tokens.splice(i, 1, glued[1] as string, glued[2] ?? '%');
    if (english && /^\p{N}/u.test(tokens[i] as string)) {
      if (tokens[i + 1] === 'percent') tokens[i + 1] = '%';
      else if (tokens[i + 1] === 'per' && tokens[i + 2] === 'cent') tokens.splice(i + 1, 2, '%');
    }
    if (LITRES.test(tokens[i + 1] ?? '') && /^\p{N}/u.test(tokens[i] as string))
      tokens[i + 1] = (tokens[i + 1] as string).toLowerCase();
  }
}

/** The canonical form of one prompt text. */
export function canonicalPrompt(raw: string): CanonicalPrompt {
  const text = unquotedPrompt(raw);
  const plain = text.replace(OPAQUE, ' ');
  // A prompt in alternating case says no more by its capitals than a shouted one.
  const shouting = isShouting(plain) || isAlternatingCase(plain);
  // A sentence in capitals says nothing about Title Case elsewhere.
  const folded = shouting ? plain : withoutShoutedSentences(plain);
  const mayKeepNames = !shouting && !isTitleCase(folded);
  const language = promptLanguage(plain.match(/\p{L}+/gu) ?? []);
  const english = language === 'en';
  const courtesy = (prose: string[], start: boolean, end: boolean) =>
    english ? dropCourtesy(prose, start, end) : foldOtherLanguage(language, prose, start, end);
  const tokens: string[] = [];
  let cursor = 0;
  let prose: string[] = [];
  // A quote that ends its sentence inside (`"... on time." Thank you!`) lets the next word open one.
  let quoteEndsSentence = false;
  const flushProse = (until: number) => {
    const stretch = text.slice(cursor, until);
    // Without code or quotes the one stretch is the whole prompt, folded above already.
    const unshouted = shouting ? stretch : stretch === plain ? folded : withoutShoutedSentences(stretch);
    prose.push(...proseTokens(unshouted, shouting, mayKeepNames, cursor === 0 || quoteEndsSentence, english));
  };
  for (const match of text.matchAll(OPAQUE)) {
    flushProse(match.index);
    tokens.push(...courtesy(prose, tokens.length === 0, false));
    prose = [];
    tokens.push(match[0].startsWith('`') ? match[0] : quoteAsWritten(straightQuote(match[0]), shouting));
    cursor = match.index + match[0].length;
    quoteEndsSentence = QUOTE_ENDING_SENTENCE.test(match[0]);
  }
  flushProse(text.length);
  tokens.push(...courtesy(prose, tokens.length === 0, true));
  unitsSpelledAlike(tokens, english);
  // "'s been" and "is been" (from "it's been") are "has been".
  if (english)
    for (let i = 0; i + 1 < tokens.length; i++)
      if ((tokens[i] === "'s" || tokens[i] === 'is') && tokens[i + 1] === 'been') tokens[i] = 'has';
  return { text: tokens.join(' '), tokens, language };
}
