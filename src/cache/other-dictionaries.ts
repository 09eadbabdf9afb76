import { bloomHas, OTHER_WORD_HASHES } from './dictionary/bloom.ts';
import * as dutch from './dictionary/dutch-words.ts';
import * as french from './dictionary/french-words.ts';
import * as german from './dictionary/german-words.ts';
import * as italian from './dictionary/italian-words.ts';
import * as polish from './dictionary/polish-words.ts';
import * as portuguese from './dictionary/portuguese-words.ts';
import * as spanish from './dictionary/spanish-words.ts';
import * as swedish from './dictionary/swedish-words.ts';
import type { PromptLanguage } from './prompt-language.ts';
import { withoutAccents } from './prompt-other-languages.ts';

/**
 * Whether a word is a word of French, Spanish, Italian, Portuguese, German, Dutch, Polish or Swedish, as the verifier needs it to
 * tell a typo from another word in those languages (`scripts/build-other-words.ts` says where the
 * lists come from). Looked up lower case and without accents, as stored.
 */

interface WordFilter {
  readonly WORD_BITS: number;
  readonly WORD_FILTER: string;
}

const FILTERS: Partial<Record<PromptLanguage, WordFilter>> = {
  fr: french,
  es: spanish,
  it: italian,
  pt: portuguese,
  de: german,
  nl: dutch,
  pl: polish,
  sv: swedish,
};

/** Each filter decoded on the first word looked up in its language: most gateways never see most of them. */
const decoded = new Map<PromptLanguage, Uint8Array>();

/** A word as the filters store it: lower case, without accents, ligatures written out (`sœur` as `soeur`). */
export function plainWord(word: string): string {
  return withoutAccents(word.toLowerCase()).replaceAll('œ', 'oe').replaceAll('æ', 'ae');
}

/** Whether `language` has a word list, and so typo rules. */
export function hasDictionary(language: PromptLanguage): boolean {
  return FILTERS[language] !== undefined;
}

function stored(language: PromptLanguage, word: string): boolean {
  const source = FILTERS[language];
  if (!source) return false;
  let bits = decoded.get(language);
  if (!bits) decoded.set(language, (bits = new Uint8Array(Buffer.from(source.WORD_FILTER, 'base64'))));
  return bloomHas(bits, source.WORD_BITS, OTHER_WORD_HASHES, word);
}

/**
 * Pronouns glued to the end of a Spanish or Italian verb, which the lists do not store with it: `dame` is `da` +
 * `me`, `jubilarse` `jubilar` + `se`, `dimmelo` `dim(mi)` + `lo`, `mangiarlo` `mangiar(e)` + `lo`.
 */
const ENCLITICS: Partial<Record<PromptLanguage, RegExp>> = {
  es: /^(.{2,}?)(?:me|te|se|nos|os)?(?:me|te|se|le|les|lo|los|la|las|nos|os)$/u,
  it: /^(.{2,}?)(?:mi|ti|ci|vi|si|me|te|ce|ve|se|glie)?(?:mi|ti|ci|vi|si|lo|la|li|le|gli|ne)$/u,
};

/**
 * Whether `word` (any case, accents or not) is a word of `language`: stored, or a verb with its pronouns glued on
 * (Spanish and Italian), or an Italian word ending in an accented vowel, which the Italian list writes without it
 * (`perch` for `perché`).
 */
export function isWordOf(language: PromptLanguage, word: string): boolean {
  const plain = plainWord(word);
  if (!/^\p{Ll}{2,}$/u.test(plain)) return false;
  if (stored(language, plain)) return true;
  if (language === 'it' && /[àèéìíòóù]$/u.test(word) && stored(language, plain.slice(0, -1))) return true;
  const stem = ENCLITICS[language]?.exec(plain)?.[1];
  if (stem === undefined) return false;
  // Italian infinitives lose their last vowel before a pronoun (`farlo`), imperatives double a consonant (`dimmi`).
  return (
    stored(language, stem) ||
    (language === 'it' &&
      (stored(language, `${stem}e`) || (/(.)\1$/u.test(stem) && stored(language, stem.slice(0, -1)))))
  );
}
