import { startsWith } from './prompt-courtesy.ts';
import type { PromptLanguage } from './prompt-language.ts';
import { withBaseLetters } from './embedders/base-letters.ts';

/**
 * What the canonical form folds in prompts of languages other than English
 * (English has its own, richer rules in `prompt-courtesy.ts` and
 * `prompt-canonical.ts`): greetings where a prompt starts, thanks where it
 * starts or ends, "please" wherever it stands, the chat shorthand of the
 * language (`vc` = `você`, `bcp` = `beaucoup`) and the two spellings of the
 * Korean copula. Only these words, and only
 * for the languages listed: anything else, a request lead-in ("mi spieghi",
 * "können Sie mir sagen") included, stays, so two prompts that differ in it
 * are two prompts.
 *
 * Phrases are matched on tokens as the canonical form writes them (lower case
 * where case carries no meaning) with their accents taken off, so `merci` and
 * `s'il vous plait` (its elided `s'` a word of its own, as the canonical form
 * splits it) match however they were typed (not in Japanese, where the marks
 * that would come off are letters of their own).
 */

interface Courtesy {
  /** Taken out where the prompt starts. */
  readonly greetings: ReadonlyArray<readonly string[]>;
  /** Taken out where the prompt starts or ends. */
  readonly thanks: ReadonlyArray<readonly string[]>;
  /** Taken out wherever they stand. */
  readonly please: ReadonlyArray<readonly string[]>;
}

/** Phrases as they are matched: words without their accents. */
const words = (...phrases: string[]) => phrases.map((phrase) => withoutAccents(phrase).split(' '));

/** Phrases of a language written without spaces, as written: their marks are letters. */
const glued = (...phrases: string[]) => phrases.map((phrase) => [phrase]);

/** English chat courtesy that writers of other European languages type as often as their own. */
const LOANED_THANKS = ['thx', 'thanks', 'tks'];
const LOANED_PLEASE = ['pls', 'plz'];

const COURTESY: Partial<Record<PromptLanguage, Courtesy>> = {
  fr: {
    greetings: words('bonjour', 'bonsoir', 'salut', 'slt', 'coucou', 'allo'),
    thanks: words(
      'merci beaucoup',
      'merci d avance',
      'merci par avance',
      'merci bien',
      'merci',
      'mrc',
      'cordialement',
      ...LOANED_THANKS,
    ),
    please: words('s il vous plait', 's il te plait', 'svp', 'stp', ...LOANED_PLEASE),
  },
  de: {
    greetings: words('guten morgen', 'guten tag', 'guten abend', 'hallo', 'hi', 'moin', 'servus', 'gruss gott'),
    thanks: words(
      'vielen dank im voraus',
      'danke im voraus',
      'vielen dank',
      'herzlichen dank',
      'danke schon',
      'danke sehr',
      'danke dir',
      'dankeschon',
      'danke',
      'lg',
      'mfg',
      ...LOANED_THANKS,
    ),
    please: words('bitte', ...LOANED_PLEASE),
  },
  es: {
    greetings: words('buenos dias', 'buenas tardes', 'buenas noches', 'buenas', 'hola'),
    thanks: words(
      'muchas gracias',
      'mil gracias',
      'gracias de antemano',
      'gracias',
      'grax',
      'saludos',
      ...LOANED_THANKS,
    ),
    please: words('por favor', 'porfa', 'porfis', ...LOANED_PLEASE),
  },
  pt: {
    greetings: words('bom dia', 'boa tarde', 'boa noite', 'ola', 'oi'),
    thanks: words(
      'muito obrigado',
      'muito obrigada',
      'obrigado',
      'obrigada',
      'obg',
      'obgd',
      'obgda',
      'valeu',
      'vlw',
      ...LOANED_THANKS,
    ),
    please: words('por favor', 'por gentileza', 'pfv', ...LOANED_PLEASE),
  },
  it: {
    greetings: words('buongiorno', 'buonasera', 'salve', 'ciao'),
    thanks: words('grazie mille', 'grazie in anticipo', 'grazie', 'grz', ...LOANED_THANKS),
    please: words('per favore', 'per piacere', 'per cortesia', ...LOANED_PLEASE),
  },
  nl: {
    greetings: words('goedemorgen', 'goedemiddag', 'goedenavond', 'hallo', 'hoi', 'hey'),
    thanks: words(
      'alvast bedankt',
      'bedankt alvast',
      'dank je wel',
      'dank u wel',
      'dank je',
      'dank u',
      'bedankt',
      'thnx',
      ...LOANED_THANKS,
    ),
    please: words('alsjeblieft', 'alstublieft', 'aub', 'graag', 'ajb', ...LOANED_PLEASE),
  },
  pl: {
    greetings: words('dzien dobry', 'czesc', 'witam', 'hej'),
    thanks: words(
      'z gory dziekuje',
      'dzieki z gory',
      'dziekuje bardzo',
      'dziekuje',
      'dzieki',
      'dzieks',
      'dzk',
      ...LOANED_THANKS,
    ),
    please: words('prosze', 'prosz', 'plis', ...LOANED_PLEASE),
  },
  tr: {
    greetings: words('merhaba', 'mrb', 'selam', 'slm', 'iyi gunler'),
    thanks: words('simdiden tesekkurler', 'tesekkur ederim', 'tesekkurler', 'tsk', 'tskler', 'sagol', 'sagolun'),
    please: words('lutfen'),
  },
  sv: {
    greetings: words('god morgon', 'god kväll', 'god dag', 'hejsan', 'hej', 'hallå', 'tjena'),
    thanks: words('tack på förhand', 'tack så mycket', 'tusen tack', 'tackar', 'tack', ...LOANED_THANKS),
    please: words('snälla', ...LOANED_PLEASE),
  },
  ru: {
    greetings: words('здравствуйте', 'добрый день', 'добрый вечер', 'доброе утро', 'привет'),
    thanks: words('заранее спасибо', 'спасибо заранее', 'большое спасибо', 'спасибо большое', 'спасибо'),
    please: words('пожалуйста'),
  },
  // Japanese, Chinese and Korean write no spaces: their phrases are also taken off the edge of a token.
  ja: {
    greetings: glued('こんにちは', 'すみません', 'すいません'),
    thanks: glued('ありがとうございます', 'よろしくお願いします', 'お願いします'),
    please: [],
  },
  zh: {
    greetings: glued('你好', '您好', '请问'),
    thanks: glued('谢谢你', '谢谢您', '谢谢啦', '谢谢', '多谢', '谢啦'),
    // "May I ask", before a question wherever it starts (`我是老师，请问怎么…`).
    please: glued('请问'),
  },
  ko: {
    greetings: glued('안녕하세요'),
    thanks: glued('감사합니다', '고맙습니다', '감사해요', '고마워요', 'ㄳㄳ', 'ㄳ', 'ㄱㅅ'),
    please: [],
  },
};

/**
 * Chat shorthand that is no other word of its language (one word, or two of an elision split at its
 * apostrophe: `m'n`), and what it stands for.
 */
const shorthand = (entries: Record<string, string>): ReadonlyMap<string, string> => new Map(Object.entries(entries));

const SHORTHAND: Partial<Record<PromptLanguage, ReadonlyMap<string, string>>> = {
  fr: shorthand({
    bcp: 'beaucoup',
    pk: 'pourquoi',
    pq: 'pourquoi',
    qd: 'quand',
    tjrs: 'toujours',
    qqn: 'quelqu un',
    qqch: 'quelque chose',
    // Spoken `t'as`, `t'es` (the elided word a word of its own). `t'` is also `te` (`je t'aime`), but `te` is never
    // written whole before a vowel, so reading it as `tu` joins no two prompts that differ.
    t: 'tu',
    c: 'c est',
    cest: 'c est',
    diff: 'différence',
  }),
  de: shorthand({ gibts: 'gibt es', wg: 'wegen', evtl: 'eventuell', vllt: 'vielleicht' }),
  es: shorthand({ q: 'que', xq: 'porque', pq: 'porque', tb: 'también', tmb: 'también', xfa: 'por favor' }),
  pt: shorthand({
    vc: 'você',
    vcs: 'vocês',
    pra: 'para',
    pro: 'para o',
    tb: 'também',
    tbm: 'também',
    q: 'que',
    pq: 'porque',
    hj: 'hoje',
  }),
  // `x` for `per` is also the times sign, which Italian reads `per` as well (`3 x 4` = `3 per 4`).
  it: shorthand({ cmq: 'comunque', xké: 'perché', xche: 'perché', nn: 'non', qlc: 'qualche', gg: 'giorni', x: 'per' }),
  ru: shorthand({ спс: 'спасибо', пж: 'пожалуйста', пжл: 'пожалуйста', плз: 'пожалуйста' }),
  nl: shorthand({
    ff: 'even',
    wss: 'waarschijnlijk',
    idd: 'inderdaad',
    t: 'het',
    'm n': 'mijn',
    'z n': 'zijn',
    mn: 'mijn',
    zn: 'zijn',
  }),
};

/** Korean chat emoticons written in jamo at a prompt's end: `ㅠㅠ`, `ㅜㅜ`, `ㅋㅋㅋ`, `ㅎㅎ`. */
const KOREAN_EMOTICON = /(?<=.)[ㅠㅜㅋㅎ]{2,}$/u;

/**
 * The Korean copula after a vowel, `예요`, which writers often type as `에요` (`뭐에요` for `뭐예요`, `책이예요` for
 * `책이에요`): one ending in two spellings, read as one.
 */
const KOREAN_COPULA = /예요$/u;

/**
 * The Turkish present tense as it is spoken and typed in chat, without its `r`: `kusuyo` for `kusuyor`, `biliyom` for
 * `biliyorum`, `gidiyoz` for `gidiyoruz` (after the tense's vowel, so `radyo` and `stüdyo` stay).
 */
const TURKISH_SPOKEN_PRESENT = /(?<=\p{L}{2}[ıiuü])yo([mz]?)$/u;
const spokenPresent = (_: string, person: string) => (person === 'm' ? 'yorum' : person === 'z' ? 'yoruz' : 'yor');

/** One ending written two ways, read as one: the Korean copula, the Turkish present of chat. */
const SPELLINGS: Partial<Record<PromptLanguage, [RegExp, (match: string, person: string) => string]>> = {
  ko: [KOREAN_COPULA, () => '에요'],
  tr: [TURKISH_SPOKEN_PRESENT, spokenPresent],
};

/** Japanese "…てください" is "…て" asked politely: the polite ending comes off the verb. */
const JAPANESE_POLITE_ENDING = /(?<=[てで])ください$/u;

/** Letters without their accents (`ß` as `ss`), as the phrases are written. */
export function withoutAccents(token: string): string {
  // Most tokens are ASCII, and the decomposition is the costly part.
  if (!/[^\x00-\x7f]/.test(token)) return token;
  return withBaseLetters(token.normalize('NFD').replace(/\p{M}/gu, '')).replaceAll('ß', 'ss');
}

/** Reads the shorthand of `language` in a stretch of prose tokens and removes its politeness; unchanged for a language without lists. */
export function foldOtherLanguage(
  language: PromptLanguage,
  tokens: readonly string[],
  promptStart: boolean,
  promptEnd: boolean,
): string[] {
  const courtesy = COURTESY[language];
  if (!courtesy || tokens.length === 0) return [...tokens];
  const shorthand = SHORTHAND[language];
  const read = shorthand ? readShorthand(tokens, shorthand) : tokens;
  const joined = language === 'ja' || language === 'zh' || language === 'ko';
  const out = joined ? unglued(read, courtesy, promptStart, promptEnd) : [...read];
  const spelling = SPELLINGS[language];
  if (spelling) for (let i = 0; i < out.length; i++) out[i] = (out[i] as string).replace(...spelling);
  // Lower case too: German writes the nouns of its phrases with capitals (`Danke im Voraus`).
  const plain = joined ? out : out.map((word) => withoutAccents(word).toLowerCase());
  // A greeting or thanks typed with its last letter held (`Holaa`, `merciii`) is the word.
  const held = joined ? plain : plain.map((word) => word.replace(/(\p{L})\1+$/u, '$1'));
  let start = 0;
  let end = out.length;
  const at = (phrases: ReadonlyArray<readonly string[]>, i: number) =>
    phrases.find((p) => startsWith(plain, i, p) || startsWith(held, i, p));
  for (let found = promptStart; found && start < end;) {
    const phrase = at(courtesy.greetings, start) ?? at(courtesy.thanks, start) ?? at(courtesy.please, start);
    if (phrase) start += phrase.length;
    found = phrase !== undefined;
  }
  for (let found = promptEnd; found && end > start;) {
    const phrase = [...courtesy.thanks, ...courtesy.please].find(
      (p) => end - p.length >= start && (startsWith(plain, end - p.length, p) || startsWith(held, end - p.length, p)),
    );
    if (phrase) end -= phrase.length;
    found = phrase !== undefined;
  }
  const kept: string[] = [];
  for (let i = start; i < end;) {
    const phrase = at(courtesy.please, i);
    if (phrase) i += phrase.length;
    else kept.push(out[i++] as string);
  }
  return kept;
}

/**
 * `tokens` with each shorthand word, or pair of words, written out: with its accents where the writer types accents
 * elsewhere (`tb` = `também`), else without (`vc` = `voce`), as they would have written it.
 */
function readShorthand(tokens: readonly string[], shorthand: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  // Looked at only once some shorthand is met: most prompts have none.
  let accents: boolean | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const pair = i + 1 < tokens.length ? shorthand.get(`${tokens[i]} ${tokens[i + 1]}`) : undefined;
    if (pair) i++;
    const written = pair ?? shorthand.get(tokens[i] as string);
    accents ??= written === undefined ? undefined : tokens.some((token) => withoutAccents(token) !== token);
    const long = (written === undefined ? (tokens[i] as string) : accents ? written : withoutAccents(written)).split(
      ' ',
    );
    // Shorthand that is the first word of what it stands for (`c` = `c'est`) is not read where that follows it already.
    if (
      !pair &&
      long.length > 1 &&
      long[0] === tokens[i] &&
      long.slice(1).every((word, k) => tokens[i + 1 + k] === word)
    )
      out.push(tokens[i] as string);
    else out.push(...long);
  }
  return out;
}

/** Tokens of a language written without spaces, with a greeting glued to the first and thanks or a polite ending to the last taken off. */
function unglued(tokens: readonly string[], courtesy: Courtesy, promptStart: boolean, promptEnd: boolean): string[] {
  const out = [...tokens];
  // The first token that is more than a greeting (`你好，请问猫…`: the second greeting is glued to the question).
  let at = 0;
  while (promptStart && at + 1 < out.length && courtesy.greetings.some(([g]) => out[at] === g)) at++;
  const first = out[at] as string;
  const greeting = promptStart
    ? courtesy.greetings.find(([g]) => first.startsWith(g as string) && first !== g)
    : undefined;
  if (greeting) out[at] = first.slice((greeting[0] as string).length);
  // "Please" glued to the start of a clause.
  for (let i = 0; i < out.length; i++) {
    const please = courtesy.please.find(([p]) => (out[i] as string).startsWith(p as string) && out[i] !== p);
    if (please) out[i] = (out[i] as string).slice((please[0] as string).length);
  }
  if (promptEnd) {
    // Korean crying or laughing in letters (`ㅠㅠ`, `ㅋㅋ`) is tone, as an emoji is.
    out[out.length - 1] = (out.at(-1) as string).replace(KOREAN_EMOTICON, '');
    const last = out.at(-1) as string;
    const thanks = courtesy.thanks.find(([t]) => last.endsWith(t as string) && last !== t);
    const polite = last.replace(JAPANESE_POLITE_ENDING, '');
    out[out.length - 1] = thanks ? last.slice(0, -(thanks[0] as string).length) : polite;
  }
  return out;
}
