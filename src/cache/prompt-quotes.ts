/**
 * Quoted strings as the semantic cache reads them, shared by the canonical form
 * (`prompt-canonical.ts`) and the guards (`prompt-guards.ts`) so both see the
 * same quotes: a quote is a payload, compared as written, whatever marks its
 * writer's keyboard or language puts around it (`"…"`, `“…”`, `„…“`, `«…»`,
 * `‹…›`, `'…'`, `‘…’`).
 */

/** Double quotation marks of any typography, and single ones where they cannot be an apostrophe. */
export const QUOTED_STRING =
  /"([^"\n]+)"|“([^”\n]+)”|„([^“”\n]+)[“”]|«([^»\n]+)»|‹([^›\n]+)›|‘([^’\n]+)’|(?<=^|[\s([{:=])'([^'\n]+)'(?=$|[\s.,;:!?)\]}])/gu;

/** The text inside a match of {@link QUOTED_STRING}. */
export function quoteInner(match: RegExpMatchArray): string {
  return match.slice(1).find((group) => group !== undefined) ?? '';
}

/** A quote written with straight marks, so that `«Siamo spiacenti»` and `"Siamo spiacenti"` are one token. */
export function straightQuote(quote: string): string {
  const match = QUOTED_ONE.exec(quote);
  if (!match) return quote;
  return /^['‘]/u.test(quote) ? `'${quoteInner(match)}'` : `"${quoteInner(match)}"`;
}

const QUOTED_ONE = new RegExp(`^(?:${QUOTED_STRING.source})$`, 'u');

/** A word written in capitals from start to end (with at least 8 letters in all) is shouting, not acronyms. */
export function isShouting(text: string): boolean {
  let upper = 0;
  let lower = 0;
  for (const char of text) {
    if (char >= 'A' && char <= 'Z') upper++;
    else if (char >= 'a' && char <= 'z') lower++;
  }
  return upper >= 8 && upper > 4 * lower;
}

/**
 * A quote as it is compared, in a prompt whose prose is `shouted` or not: in lower case when it is
 * in capitals inside a prompt in capitals (`WHAT DOES 'UNDER OFFER' MEAN`: it is in them for the same
 * reason as the rest).
 */
export function quoteAsWritten(inner: string, shouted: boolean): string {
  return shouted && !/\p{Ll}/u.test(inner) ? inner.toLowerCase() : inner;
}

/**
 * A quote of one word of four letters or more (`„Staffelmiete“`): marks the word, as it would be
 * without them. A shorter one is more often a value whose quotes make it a string (`"no"`, `'on'`).
 */
export function isOneWordQuote(inner: string): boolean {
  return /^\p{L}{4,}(?:-\p{L}+)*$/u.test(inner);
}

/** A prompt that is one quoted string as a whole. */
const WHOLLY_QUOTED = /^\s*(?:"([^"]+)"|“([^”]+)”|„([^“”]+)[“”]|«([^»]+)»)\s*$/u;

/** A prompt that is one quoted string as a whole is that string (`"How many bees live in a hive?"`). */
export function unquotedPrompt(text: string): string {
  const quoted = WHOLLY_QUOTED.exec(text);
  return quoted ? quoteInner(quoted) : text;
}
