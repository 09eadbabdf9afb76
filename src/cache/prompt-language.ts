import { isEnglishWord } from './english-dictionary.ts';

/**
 * The language of a prompt, as far as the semantic cache's rules need it: the
 * folding of typos, contractions, courtesy, synonyms and function words is
 * written for English (its word lists are English), so it applies only to a
 * prompt detected as English. A prompt detected as one of the other languages
 * with a courtesy list (`prompt-other-languages.ts`) loses its greetings,
 * thanks and "please"; any other difference from a cached prompt in another
 * language may be case, whitespace, punctuation and the accents one of the
 * two did not type (`prompt-verifier.ts`).
 *
 * Dependency-free and small: the function words of eleven languages counted
 * over the prompt's words. English when its own outnumber every other
 * language's, or when no word carries a letter English does not write and
 * they tie with another language's, or there are none and at
 * least four in five of the words of three letters or more are English words
 * (`english-dictionary.ts`): "Isn't Pluto classed as a dwarf planet now?"
 * counts Portuguese `as` against no English function word. Otherwise the
 * language whose function words alone outnumber the others', else the script:
 * kana is Japanese, hangul Korean, Han characters alone Chinese.
 */

export type PromptLanguage =
  'en' | 'fr' | 'de' | 'es' | 'pt' | 'it' | 'nl' | 'pl' | 'tr' | 'sv' | 'ru' | 'ja' | 'ko' | 'zh' | 'other';

/** Function words of each language; a word in several lists (`is`, `in`, `de`) counts for each. */
const FUNCTION_WORDS: Readonly<Record<string, ReadonlySet<string>>> = {
  en: new Set(
    'the are of and to for with what how why when where which who does did can could should would will you your my it this that from at by about we they there not or if be been were has have am get much many its our their them me i is in an on do so than just some any all more most very into out up off doesn don isn aren wasn weren didn hasn haven couldn wouldn shouldn won ll ve re'.split(
      ' ',
    ),
  ),
  fr: new Set(
    'le la les des du une est et que qui pour dans sur pas ce cette mon ma mes je tu il elle nous vous comment pourquoi quelle quel quels avec sont au aux en peut faire ne se de un à y quand où mais ou très plus faut son sa ses leur quoi combien bonjour merci'.split(
      ' ',
    ),
  ),
  de: new Set(
    'der die das und ist nicht ein eine einen mit wie warum was wo ich du er sie wir ihr mein meine meinen zu von für auf auch sind im dem den des kann viel welche sich muss wann wer wieviel oder aber bei nach gibt mir mich dich dass habe hat danke bitte'.split(
      ' ',
    ),
  ),
  es: new Set(
    'el los las es y que de del en un una por para con sin sobre hasta desde más cómo qué cuál cuánto cuanto mi mis yo tu su se al lo hay son está todos algunos la ya muy pero cuando dónde donde esta este puedo debo cuántos cuántas también hola gracias'.split(
      ' ',
    ),
  ),
  pt: new Set(
    'o os as e é que de do da dos das um uma para com como qual quanto meu minha eu você em no na não são por vc pra tem mais muito quando onde isso esse essa ao pelo pela obrigado obrigada olá'.split(
      ' ',
    ),
  ),
  it: new Set(
    'il lo la gli le è e che di del della un una per con come perché qual quanto mio mia io tu si non sono in ci al alla dei delle nel nella quando dove cosa quanti quante ho hai anche più molto questo questa mi ti uno degli sul sulla tra fra già ogni tutti tutto ciao grazie'.split(
      ' ',
    ),
  ),
  nl: new Set(
    'de het een en is van hoe wat waarom ik jij mijn zijn niet met voor op te om er naar welke moet ook hoeveel mag kan wordt heb hebben bij als maar nog uit dat deze wanneer waar je bedankt'.split(
      ' ',
    ),
  ),
  pl: new Set(
    'jak jest nie się sie na do co czy to ile dla mój moj moja mnie od po przez gdzie kiedy dlaczego który ktory która ktora jaki jaka są sa cześć czesc dziękuję dziekuje proszę prosze'.split(
      ' ',
    ),
  ),
  tr: new Set(
    've bir bu ne nasıl nasil için icin mi mı mu mü de da ile nerede nerde nereden neden niçin kaç kac çok cok gibi ama benim ben sen en daha merhaba selam lütfen lutfen teşekkürler tesekkurler'.split(
      ' ',
    ),
  ),
  sv: new Set(
    'och att det som är ett på för med hur vad varför jag du han hon vi ni mitt mina inte av till har kan ska vilken vilket när så också eller finns hej tack'.split(
      ' ',
    ),
  ),
  ru: new Set(
    'и в не на я что как с по это для у к о из мой моя можно ли почему где когда сколько какой какая какие есть нужно ты вы он она мы они мне меня здравствуйте привет спасибо пожалуйста'.split(
      ' ',
    ),
  ),
};

/**
 * Each list with its words also as typed without their accents (`cuantas`, `perche`, `nao`), which is how many
 * write them; not where that spells a letter alone or an English function word (`à` / `a`, `för` / `for`).
 */
const FUNCTION_WORDS_AS_TYPED: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
  Object.entries(FUNCTION_WORDS).map(([language, list]) => {
    const plain = [...list].map((word) => word.normalize('NFD').replace(/\p{M}/gu, ''));
    const typed = plain.filter((word) => word.length > 1 && !FUNCTION_WORDS.en?.has(word));
    return [language, new Set([...list, ...typed])];
  }),
);

/** A letter outside English's alphabet (an accent, another script). */
const NON_ENGLISH_LETTER = /[^a-z]/;

/** Languages whose list holds each function word: one lookup per word instead of one per language. */
const LANGUAGES_OF: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const [language, list] of Object.entries(FUNCTION_WORDS_AS_TYPED))
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
  const counts = new Map<string, number>(Object.keys(FUNCTION_WORDS).map((language) => [language, 0]));
  for (const word of lower)
    for (const language of LANGUAGES_OF.get(word) ?? []) counts.set(language, (counts.get(language) as number) + 1);
  const english = counts.get('en') as number;
  counts.delete('en');
  const other = Math.max(...counts.values());
  // An accented name in an English sentence ("Pokémon", "Perú") leaves it English.
  if (english > other) return 'en';
  const script = scriptLanguage(lower);
  if (script) return script;
  const leaders = [...counts].filter(([, n]) => n === other);
  if (other > english) return leaders.length === 1 ? (leaders[0] as [PromptLanguage, number])[0] : 'other';
  if (lower.some((word) => NON_ENGLISH_LETTER.test(word))) return 'other';
  // A tie without accents ("match ^[a-z]+$ in JavaScript": `in` is Italian too) is English.
  if (english > 0 && english === other) return 'en';
  const long = lower.filter((word) => word.length >= 3);
  return long.length > 0 && long.filter(isEnglishWord).length >= 0.8 * long.length ? 'en' : 'other';
}

/** Japanese, Korean or Chinese by the script of the prompt's words, when it writes any of theirs. */
function scriptLanguage(words: readonly string[]): PromptLanguage | undefined {
  const text = words.join(' ');
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return 'ja';
  if (/\p{Script=Hangul}/u.test(text)) return 'ko';
  if (/\p{Script=Han}/u.test(text)) return 'zh';
  return undefined;
}
