import {
  isOneWordQuote,
  isShouting,
  QUOTED_STRING,
  quoteAsWritten,
  quoteInner,
  unquotedPrompt,
} from './prompt-quotes.ts';

/**
 * Guards against the known false hits of a semantic cache. Sentence
 * embeddings barely move when a number, a quoted literal or a negation
 * changes ("convert 5 km to miles" vs "convert 50 km to miles", "a prime" vs
 * "not a prime"), yet the right answer does. So a semantic match is accepted
 * only when the two prompts carry the same:
 *
 * - numbers, in order (digits, with `1,000` = `1000` and `2.50` = `2.5`; number
 *   words zero to twenty and the tens count as their digits);
 * - quoted strings and inline code, in order (the quotes of `prompt-quotes.ts`; a prompt that is
 *   one quote as a whole is its text), compared as written; but a quote in capitals in a prompt in
 *   capitals in lower case, and no quote of one word, which the verifier compares as a word;
 * - count of negations (not, no, never, none, nothing, nobody, neither, nor,
 *   nowhere, cannot, without, `w/o`, and every "n't", also written without
 *   its apostrophe: `doesnt`).
 *
 * The guards of a prompt fold into one signature string; signatures are
 * compared for equality, and only the signature is stored, not the prompt.
 */

/** A Map, not an object: a prompt's word may be `constructor`. */
export const NUMBER_WORDS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    zero: '0',
    one: '1',
    two: '2',
    three: '3',
    four: '4',
    five: '5',
    six: '6',
    seven: '7',
    eight: '8',
    nine: '9',
    ten: '10',
    eleven: '11',
    twelve: '12',
    thirteen: '13',
    fourteen: '14',
    fifteen: '15',
    sixteen: '16',
    seventeen: '17',
    eighteen: '18',
    nineteen: '19',
    twenty: '20',
    thirty: '30',
    forty: '40',
    fifty: '50',
    sixty: '60',
    seventy: '70',
    eighty: '80',
    ninety: '90',
    hundred: '100',
    thousand: '1000',
    million: '1000000',
    billion: '1000000000',
  }),
);

const NEGATIONS = new Set([
  'not',
  'no',
  'never',
  'none',
  'nothing',
  'nobody',
  'neither',
  'nor',
  'nowhere',
  'cannot',
  'without',
]);

/** "n't" typed without its apostrophe (`dont`, `doesnt`, `cant`, `wont`, `shouldnt`). */
export const APOSTROPHELESS_NOT = /^(?:do|does|did|is|are|was|were|have|has|had|would|should|could|ca|wo|must|need)nt$/;

// Quotes open after a start, a space or an opening bracket, so the apostrophes of "don't" or "Paris' river" never pair up.
const QUOTED = new RegExp(`\`([^\`\\n]+)\`|${QUOTED_STRING.source}`, 'gu');
const NUMBER = /\d[\d,]*(?:\.\d+)?/g;
const WORD = /[\p{L}’']+/gu;

function canonicalNumber(raw: string): string {
  let digits = raw.replace(/,(?=\d{3}(?:\D|$))/g, '');
  if (digits.includes(',')) digits = digits.replaceAll(',', '.');
  let [whole = '', fraction = ''] = digits.split('.');
  whole = whole.replace(/^0+(?=\d)/, '');
  fraction = fraction.replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** The guard facts of one prompt. */
export interface PromptGuards {
  numbers: string[];
  quotes: string[];
  negations: number;
}

export function promptGuardsOf(raw: string): PromptGuards {
  const text = unquotedPrompt(raw);
  const quotes: string[] = [];
  const shouted = isShouting(text.replace(QUOTED, ' '));
  for (const match of text.matchAll(QUOTED)) {
    const inner = quoteInner(match).trim();
    // One word in quotes is the word, marked: the verifier compares it with the other prompt's word.
    // Not a value (`enabled: "no"`), where the quotes make a string of what would be a boolean.
    const value = /[:=]\s*$/u.test(text.slice(Math.max(0, (match.index ?? 0) - 3), match.index));
    if (inner !== '' && !(match[0][0] !== '`' && isOneWordQuote(inner) && !value))
      quotes.push(match[0][0] === '`' ? inner : quoteAsWritten(inner, shouted));
  }
  // Numbers and words, in the order they appear.
  const numbers: { at: number; value: string }[] = [];
  for (const match of text.matchAll(NUMBER)) numbers.push({ at: match.index, value: canonicalNumber(match[0]) });
  let negations = 0;
  for (const match of text.matchAll(WORD)) {
    const word = match[0].toLowerCase().replaceAll('’', "'");
    // "which one's expected" is "which one is expected".
    const asNumber = NUMBER_WORDS.get(word.endsWith("'s") ? word.slice(0, -2) : word);
    if (asNumber !== undefined) numbers.push({ at: match.index, value: asNumber });
    if (NEGATIONS.has(word) || word.endsWith("n't") || APOSTROPHELESS_NOT.test(word)) negations += 1;
  }
  // "w/o" is "without"; its letters are no words of their own.
  negations += text.match(/(?<![\p{L}/])w\/o(?![\p{L}/])/giu)?.length ?? 0;
  numbers.sort((a, b) => a.at - b.at);
  return { numbers: numbers.map((n) => n.value), quotes, negations };
}

/** The guards folded into the string that must be equal for a semantic match. */
export function guardSignatureOf(text: string): string {
  const guards = promptGuardsOf(text);
  return JSON.stringify([guards.numbers, guards.quotes, guards.negations]);
}
