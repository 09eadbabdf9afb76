import { CAPITONYMS } from './capitonyms.ts';

/**
 * The canonical form of a prompt: what cannot change the answer is taken out,
 * so trivial variants share an exact-cache key and embed alike, and the
 * semantic verifier compares what is left token by token.
 *
 * Taken out: whitespace, sentence punctuation, letter case where it carries no
 * meaning (a capitalized word, a prompt written all in capitals or in Title
 * Case), except a name that is also a common word (`Turkey`, `Go`) written
 * with its capital inside a sentence,
 * contractions (`what's` = `what is`, `won't` = `will not`), greetings and
 * politeness (`please`, `thanks`, `can you tell me`), and `how do I` = `how
 * to`. Kept exactly as written: code (fenced and inline), quoted strings,
 * symbols (`=`, `==`, `-R`), and every word whose case may mean something
 * (`CO`, `mW`, `iPhone`, a single capital letter).
 */

export interface CanonicalPrompt {
  /** The tokens joined by single spaces: what the exact key hashes and the embedder reads. */
  text: string;
  /** Words (case-folded where case carries no meaning), opaque spans and symbols, in order. */
  tokens: string[];
}

/** Fenced code, inline code and quoted strings, kept verbatim (the quote rules of `prompt-guards.ts`). */
const OPAQUE = /```[\s\S]*?```|`[^`\n]+`|"[^"\n]+"|“[^”\n]+”|«[^»\n]+»|‘[^’\n]+’|(?<=^|[\s([{:=])'[^'\n]+'(?=$|[\s.,;:!?)\]}])/gu;

/** Words (letters and digits, joined by . _ ' ’ -), or single symbols. */
const TOKEN = /[\p{L}\p{N}]+(?:[._'’-][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu;

/** Sentence punctuation: it never changes what is asked. */
const PUNCTUATION = new Set(['.', ',', '!', '?', ';', ':', '…', '¿', '¡', '"', '“', '”', "'", '’']);

const CONTRACTIONS: Readonly<Record<string, string[]>> = {
  "won't": ['will', 'not'],
  "can't": ['can', 'not'],
  "shan't": ['shall', 'not'],
  cannot: ['can', 'not'],
  "let's": ['let', 'us'],
};

/** Words whose `'s` is `is`, not a possessive. */
const IS_CONTRACTED = new Set(['what', 'that', 'it', 'there', 'here', 'who', 'where', 'how', 'when', 'why', 'he', 'she']);

const SUFFIXES: ReadonlyArray<[string, string]> = [
  ["n't", 'not'],
  ["'m", 'am'],
  ["'re", 'are'],
  ["'ve", 'have'],
  ["'ll", 'will'],
  ["'d", 'would'],
];

/** Phrases that add politeness, never content; removed wherever they stand (lower-case token sequences). */
const FILLERS: ReadonlyArray<readonly string[]> = [
  ['thank', 'you', 'very', 'much'],
  ['thank', 'you'],
  ['thanks', 'a', 'lot'],
  ['thanks'],
  ['thx'],
  ['please'],
  ['pls'],
  ['kindly'],
  ['i', 'would', 'like', 'to', 'know'],
  ['i', 'want', 'to', 'know'],
  ['do', 'you', 'know'],
  ['for', 'me'],
];

/** Greetings, taken out only where a prompt starts ("translate hi to French" keeps its hi). */
const GREETINGS = new Set(['hello', 'hi', 'hey', 'greetings']);

/** `can you` and the like are politeness only in front of a request verb ("can you eat raw fish?" is a question). */
const COURTESY_VERBS = new Set([
  'tell', 'give', 'list', 'explain', 'write', 'show', 'help', 'describe', 'summarize', 'summarise', 'suggest',
  'recommend', 'provide', 'make', 'create', 'translate', 'find', 'name', 'share', 'define', 'compare', 'draft',
]);
const COURTESY_MODALS = new Set(['can', 'could', 'would', 'will']);

/** "tell me how ...", "tell me what ...": the question is the same without the courtesy. */
const WH_WORDS = new Set(['how', 'what', 'why', 'when', 'where', 'who', 'which', 'whether', 'if']);

/** `how do I` / `how can I` / `how should we` ... = `how to`. */
const HOW_MODALS = new Set(['do', 'can', 'could', 'should', 'would', 'does']);
const HOW_SUBJECTS = new Set(['i', 'we', 'you', 'one']);

/** A word written in capitals from start to end (with at least 8 letters in all) is shouting, not acronyms. */
function isShouting(text: string): boolean {
  let upper = 0;
  let lower = 0;
  for (const char of text) {
    if (char >= 'A' && char <= 'Z') upper++;
    else if (char >= 'a' && char <= 'z') lower++;
  }
  return upper >= 8 && upper > 4 * lower;
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
 * A capitalized word (`Roughly`, `Everest`, `Inflation` in a title) folds:
 * people capitalize as they please. Capitals elsewhere keep their case, since
 * they may be the meaning: `CO` is not `Co`, `mW` not `MW`, `-R` not `-r`, a
 * single letter is a name (`x` and `X`), and so is a code literal. Where
 * `keepNames` (inside a sentence, in a prompt not all in capitals or Title
 * Case), a capitonym keeps its capital: `Turkey` is not `turkey`.
 */
function foldCase(word: string, keepNames: boolean): string {
  if (word === 'I' || word.startsWith("I'") || word.startsWith('I’')) return word.toLowerCase();
  if (!/^\p{Lu}[\p{Ll}'’]+$/u.test(word) || CASED_LITERALS.has(word)) return word;
  return keepNames && CAPITONYMS.has(word.toLowerCase().replace(/['’]s$/, '')) ? word : word.toLowerCase();
}

function expand(token: string, keepNames: boolean): string[] {
  const word = foldCase(token, keepNames);
  const lower = word.toLowerCase().replaceAll('’', "'");
  // A possessive stays a word of its own, so `the UK's` and `the United Kingdom's` differ only in the name.
  if (/^\p{Lu}/u.test(word) && /['’]s$/.test(word)) return [word.slice(0, -2), "'s"];
  if (lower !== word.replaceAll('’', "'")) return [word];
  const whole = CONTRACTIONS[lower];
  if (whole) return whole;
  if (lower.endsWith("'s")) return IS_CONTRACTED.has(lower.slice(0, -2)) ? [lower.slice(0, -2), 'is'] : [lower.slice(0, -2), "'s"];
  for (const [suffix, full] of SUFFIXES) if (lower.endsWith(suffix) && lower.length > suffix.length) return [lower.slice(0, -suffix.length), full];
  return [lower];
}

function startsWith(tokens: readonly string[], at: number, phrase: readonly string[]): boolean {
  for (let i = 0; i < phrase.length; i++) if (tokens[at + i] !== phrase[i]) return false;
  return true;
}

/** Removes politeness (greetings only at the prompt's start) and rewrites `how do I` as `how to`. */
function dropCourtesy(tokens: readonly string[], promptStart: boolean): string[] {
  const out: string[] = [];
  let i = 0;
  while (promptStart && GREETINGS.has(tokens[i] ?? '')) i++;
  while (i < tokens.length) {
    const filler = FILLERS.find((phrase) => startsWith(tokens, i, phrase));
    if (filler) {
      i += filler.length;
      continue;
    }
    const word = tokens[i] as string;
    if (COURTESY_MODALS.has(word) && tokens[i + 1] === 'you' && COURTESY_VERBS.has(tokens[i + 2] ?? '')) {
      i += 2;
      continue;
    }
    if (word === 'tell' && tokens[i + 1] === 'me' && WH_WORDS.has(tokens[i + 2] ?? '')) {
      i += 2;
      continue;
    }
    if (word === 'how' && HOW_MODALS.has(tokens[i + 1] ?? '') && HOW_SUBJECTS.has(tokens[i + 2] ?? '')) {
      out.push('how', 'to');
      i += 3;
      continue;
    }
    out.push(word);
    i++;
  }
  return out;
}

/** Punctuation after which a capital letter starts a sentence rather than a name. */
const SENTENCE_END = /^[.!?…:]$/;

/**
 * The tokens of a stretch of prose. `mayKeepNames`: the prompt is neither all
 * capitals nor Title Case; `promptStart`: the stretch opens the prompt, so its
 * first word starts a sentence.
 */
function proseTokens(prose: string, shouting: boolean, mayKeepNames: boolean, promptStart: boolean): string[] {
  const text = shouting ? prose.toLowerCase() : prose;
  const tokens: string[] = [];
  let sentenceStart = promptStart;
  let previousEnd = 0;
  for (const match of text.matchAll(TOKEN)) {
    const token = match[0];
    if (text.slice(previousEnd, match.index).includes('\n')) sentenceStart = true;
    previousEnd = match.index + token.length;
    if (PUNCTUATION.has(token)) {
      if (SENTENCE_END.test(token)) sentenceStart = true;
      continue;
    }
    tokens.push(...expand(token, mayKeepNames && !sentenceStart));
    sentenceStart = false;
  }
  return tokens;
}

/** A prompt that is one quoted string as a whole is that string. */
const WHOLLY_QUOTED = /^\s*(?:"([^"]+)"|“([^”]+)”)\s*$/u;

/** The canonical form of one prompt text. */
export function canonicalPrompt(raw: string): CanonicalPrompt {
  const quoted = WHOLLY_QUOTED.exec(raw);
  const text = quoted ? ((quoted[1] ?? quoted[2]) as string) : raw;
  const plain = text.replace(OPAQUE, ' ');
  const shouting = isShouting(plain);
  const mayKeepNames = !shouting && !isTitleCase(plain);
  const tokens: string[] = [];
  let cursor = 0;
  let prose: string[] = [];
  const flushProse = (until: number) => {
    prose.push(...proseTokens(text.slice(cursor, until), shouting, mayKeepNames, cursor === 0));
  };
  for (const match of text.matchAll(OPAQUE)) {
    flushProse(match.index);
    tokens.push(...dropCourtesy(prose, tokens.length === 0));
    prose = [];
    tokens.push(match[0]);
    cursor = match.index + match[0].length;
  }
  flushProse(text.length);
  tokens.push(...dropCourtesy(prose, tokens.length === 0));
  return { text: tokens.join(' '), tokens };
}
