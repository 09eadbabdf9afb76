import { isEnglishWord } from './english-dictionary.ts';

/**
 * The language of a prompt, as far as the semantic cache's rules need it: the
 * folding of typos, contractions, courtesy, synonyms and function words is
 * written for English (its word lists are English), so it applies only to a
 * prompt detected as English. Any other prompt may differ from a cached one
 * in case, whitespace and punctuation only.
 *
 * Dependency-free and small: the function words of seven languages counted
 * over the prompt's words. English when its own outnumber every other
 * language's, or when no word carries a letter English does not write and
 * they tie with another language's, or there are none and at
 * least four in five of the words of three letters or more are English words
 * (`english-dictionary.ts`): "Isn't Pluto classed as a dwarf planet now?"
 * counts Portuguese `as` against no English function word.
 */

export type PromptLanguage = 'en' | 'other';

/** Function words of each language; a word in several lists (`is`, `in`, `de`) counts for each. */
const FUNCTION_WORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  en: new Set(
    'the are of and to for with what how why when where which who does did can could should would will you your my it this that from at by about we they there not or if be been were has have am get much many its our their them me i is in an on do so than just some any all more most very into out up off doesn don isn aren wasn weren didn hasn haven couldn wouldn shouldn won ll ve re'.split(
      ' ',
    ),
  ),
  fr: new Set(
    'le la les des du une est et que qui pour dans sur pas ce cette mon ma mes je tu il elle nous vous comment pourquoi quelle quel quels avec sont au aux en peut faire ne se'.split(
      ' ',
    ),
  ),
  de: new Set(
    'der die das und ist nicht ein eine einen mit wie warum was wo ich du er sie wir ihr mein meine meinen zu von für auf auch sind im dem den des kann viel welche'.split(
      ' ',
    ),
  ),
  es: new Set(
    'el los las es y que de del un una por para con cómo qué cuál cuánto cuanto mi mis yo tu su se al lo hay son está todos algunos'.split(
      ' ',
    ),
  ),
  pt: new Set(
    'o os as e é que de do da dos das um uma para com como qual quanto meu minha eu você em no na não são por'.split(
      ' ',
    ),
  ),
  it: new Set(
    'il lo la gli le è e che di del della un una per con come perché qual quanto mio mia io tu si non sono in'.split(
      ' ',
    ),
  ),
  nl: new Set(
    'de het een en is van hoe wat waarom ik jij mijn zijn niet met voor op te om er naar welke moet ook'.split(' '),
  ),
};

/** A letter outside English's alphabet (an accent, another script). */
const NON_ENGLISH_LETTER = /[^a-z]/;

/** Languages whose list holds each function word: one lookup per word instead of one per language. */
const LANGUAGES_OF: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const [language, list] of Object.entries(FUNCTION_WORDS))
    for (const word of list) (out.get(word) ?? out.set(word, []).get(word))?.push(language);
  return out;
})();

/** Verdicts of word lists seen recently: the verifier asks again for each candidate of one lookup. */
const verdicts = new WeakMap<readonly string[], PromptLanguage>();

/** The language of a prompt given its words (any case, any script). */
export function promptLanguage(words: readonly string[]): PromptLanguage {
  let verdict = verdicts.get(words);
  if (verdict === undefined) {
    verdict = languageOf(words);
    verdicts.set(words, verdict);
  }
  return verdict;
}

function languageOf(words: readonly string[]): PromptLanguage {
  const lower = words.map((word) => word.toLowerCase()).filter((word) => /^\p{L}+$/u.test(word));
  if (lower.length === 0) return 'other';
  const counts: Record<string, number> = Object.fromEntries(
    Object.keys(FUNCTION_WORDS).map((language) => [language, 0]),
  );
  for (const word of lower)
    for (const language of LANGUAGES_OF.get(word) ?? []) counts[language] = (counts[language] as number) + 1;
  const english = counts.en as number;
  const other = Math.max(
    ...Object.entries(counts)
      .filter(([language]) => language !== 'en')
      .map(([, n]) => n),
  );
  // An accented name in an English sentence ("Pokémon", "Perú") leaves it English.
  if (english > other) return 'en';
  if (other > english || lower.some((word) => NON_ENGLISH_LETTER.test(word))) return 'other';
  // A tie without accents ("match ^[a-z]+$ in JavaScript": `in` is Italian too) is English.
  if (english > 0 && english === other) return 'en';
  const long = lower.filter((word) => word.length >= 3);
  return long.length > 0 && long.filter(isEnglishWord).length >= 0.8 * long.length ? 'en' : 'other';
}
