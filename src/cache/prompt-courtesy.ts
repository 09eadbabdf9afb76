/**
 * Politeness in a prompt's canonical tokens (see `prompt-canonical.ts`):
 * greetings, thanks, `please`, and the lead-ins that wrap a request ("could
 * you", "would you mind telling me", "I'd appreciate it if you could") say
 * nothing about what is asked, so they are taken out; `how do I` becomes
 * `how to`. Tokens arrive in lower case where case carries no meaning.
 */

/** Phrases that add politeness, never content; removed wherever they stand. */
const FILLERS: ReadonlyArray<readonly string[]> = [
  ['please', 'and', 'thank', 'you'],
  ['thank', 'you', 'very', 'much'],
  ['thank', 'you', 'so', 'much'],
  ['thank', 'you', 'in', 'advance'],
  ['thanking', 'you', 'in', 'advance'],
  ['thanking', 'you'],
  ['thank', 'you', 'for', 'your', 'help'],
  ['thank', 'you'],
  ['thanks', 'in', 'advance'],
  ['thanks', 'so', 'much', 'in', 'advance'],
  ['thanks', 'so', 'much'],
  ['thanks', 'for', 'your', 'help'],
  ['thanks', 'for', 'the', 'help'],
  ['thanks', 'a', 'lot'],
  ['thanks'],
  ['many', 'thanks'],
  ['i', 'appreciate', 'your', 'help'],
  ['when', 'you', 'get', 'a', 'chance'],
  ['if', 'it', 'is', 'not', 'too', 'much', 'trouble'],
  ['quick', 'question'],
  ['quick', 'favour'],
  ['quick', 'favor'],
  ['thx', 'in', 'advance'],
  ['thx'],
  ['much', 'appreciated'],
  ['please'],
  ['pls'],
  ['plz'],
  ['kindly'],
  ['i', 'would', 'like', 'to', 'know'],
  ['i', 'want', 'to', 'know'],
  ['do', 'you', 'know'],
  ['for', 'me'],
  ['i', 'was', 'wondering'],
  ['i', 'am', 'wondering'],
  ['sorry', 'to', 'bother', 'you', 'but'],
  ['sorry', 'to', 'ask', 'but'],
  ['sorry', 'to', 'ask'],
  ...['dumb', 'stupid', 'silly', 'basic'].flatMap((adjective) => [
    ['apologies', 'for', 'the', adjective, 'question', 'but'],
    ['sorry', 'for', 'the', adjective, 'question', 'but'],
    ['sorry', 'if', 'this', 'is', 'a', adjective, 'question', 'but'],
    ['sorry', 'if', 'this', 'is', 'a', adjective, 'question'],
    ['this', 'might', 'be', 'a', adjective, 'question', 'but'],
    ['this', 'may', 'be', 'a', adjective, 'question', 'but'],
    ['probably', 'a', adjective, 'question', 'but'],
    [adjective, 'question', 'but'],
  ]),
  ['sorry', 'to', 'bother', 'you'],
];

/** Sign-offs, taken out only where a prompt ends ("what does cheers mean" keeps its cheers). */
const SIGN_OFFS: ReadonlyArray<readonly string[]> = [
  ['please', 'help'],
  ['pls', 'help'],
  ['thanks', 'again'],
  ['best', 'regards'],
  ['kind', 'regards'],
  ['regards'],
  ['cheers'],
  ['ta'],
];

/** Greetings, taken out only where a prompt starts ("translate hi to French" keeps its hi, "a good morning routine" its good morning). */
const GREETINGS: ReadonlyArray<readonly string[]> = [
  ['dear', 'assistant'],
  ['dear', 'sir', 'or', 'madam'],
  ['dear', 'sir'],
  ['dear', 'madam'],
  ['good', 'morning'],
  ['good', 'afternoon'],
  ['good', 'evening'],
  ['hello', 'there'],
  ['hi', 'there'],
  ['hey', 'there'],
  ['hello'],
  ['hiya'],
  ['hi'],
  ['hey'],
  ['greetings'],
];

/**
 * Verbs of a request: "can you explain X" asks for what "explain X" does.
 * Not verbs that also make a question of ability ("can you eat raw fish?",
 * "can you build muscle without protein?", "can you predict earthquakes?").
 */
const COURTESY_VERBS = new Set([
  'tell',
  'give',
  'list',
  'explain',
  'write',
  'show',
  'help',
  'describe',
  'summarize',
  'summarise',
  'suggest',
  'recommend',
  'provide',
  'make',
  'create',
  'translate',
  'find',
  'name',
  'share',
  'define',
  'compare',
  'draft',
  'extract',
  'rewrite',
  'rephrase',
  'reword',
  'paraphrase',
  'generate',
  'calculate',
  'compute',
  'review',
  'proofread',
  'edit',
  'outline',
  'analyze',
  'analyse',
  'classify',
  'simplify',
  'shorten',
  'improve',
  'correct',
  'debug',
  'refactor',
  'optimize',
  'optimise',
  'implement',
  'solve',
  'evaluate',
  'assess',
  'critique',
  'compose',
  'prepare',
  'clarify',
  'elaborate',
  'brainstorm',
  'recap',
  'format',
  'sort',
  'check',
  'walk',
  'convert',
]);

/** The -ing form of each request verb ("would you mind explaining"), to its base. */
const COURTESY_GERUNDS: ReadonlyMap<string, string> = new Map(
  [...COURTESY_VERBS].map((verb) => [
    verb.endsWith('e') && !verb.endsWith('ee') ? `${verb.slice(0, -1)}ing` : `${verb}ing`,
    verb,
  ]),
);

/** Lead-ins that wrap a request verb: "could you", "would you be able to", "I'd appreciate it if you could". */
const REQUEST_LEAD_INS: ReadonlyArray<readonly string[]> = [
  ['i', 'would', 'really', 'appreciate', 'it', 'if', 'you', 'could'],
  ['i', 'would', 'appreciate', 'it', 'if', 'you', 'could'],
  ['i', 'would', 'be', 'grateful', 'if', 'you', 'could'],
  ['it', 'would', 'be', 'great', 'if', 'you', 'could'],
  ['i', 'would', 'love', 'it', 'if', 'you', 'could'],
  ['would', 'you', 'be', 'so', 'kind', 'as', 'to'],
  ['is', 'there', 'any', 'way', 'you', 'could'],
  ['do', 'you', 'think', 'you', 'could'],
  ['can', 'i', 'ask', 'you', 'to'],
  ['would', 'you', 'be', 'able', 'to'],
  ['could', 'you', 'be', 'able', 'to'],
  ['are', 'you', 'able', 'to'],
  ['is', 'it', 'possible', 'for', 'you', 'to'],
  ['i', 'would', 'like', 'you', 'to'],
  ['i', 'need', 'you', 'to'],
  ['i', 'want', 'you', 'to'],
  ['if', 'you', 'could'],
  ['if', 'you', 'can'],
  ['can', 'you'],
  ['could', 'you'],
  ['would', 'you'],
  ['will', 'you'],
];

/** Lead-ins before the -ing form of a request verb: "would you mind telling me". */
const GERUND_LEAD_INS: ReadonlyArray<readonly string[]> = [
  ['would', 'you', 'mind'],
  ['do', 'you', 'mind'],
  // Only where the request starts ("mind explaining X"; "never mind" stays).
  ['mind'],
];

/** "tell me how ...", "explain what ...": the question is the same without the courtesy. */
const WH_WORDS = new Set(['how', 'what', 'why', 'when', 'where', 'who', 'which', 'whether', 'if']);

/** `how do I` / `how can I` / `how should we` ... = `how to`. */
const HOW_MODALS = new Set(['do', 'can', 'could', 'should', 'would', 'does']);
const HOW_SUBJECTS = new Set(['i', 'we', 'you', 'one']);

/** Phrases by their first word: the canonical form runs on every request, so each token looks up only its own. */
function byFirstWord(phrases: ReadonlyArray<readonly string[]>): ReadonlyMap<string, ReadonlyArray<readonly string[]>> {
  const map = new Map<string, Array<readonly string[]>>();
  for (const phrase of phrases) map.set(phrase[0] as string, [...(map.get(phrase[0] as string) ?? []), phrase]);
  return map;
}
const FILLERS_BY_FIRST = byFirstWord(FILLERS);
const REQUEST_LEAD_INS_BY_FIRST = byFirstWord(REQUEST_LEAD_INS);

/** Whether `phrase` stands in `tokens` from `at`. */
export function startsWith(tokens: readonly string[], at: number, phrase: readonly string[]): boolean {
  for (let i = 0; i < phrase.length; i++) if (tokens[at + i] !== phrase[i]) return false;
  return true;
}

/** Removes each occurrence of the fillers, the greetings where `promptStart` and the sign-offs where `promptEnd`. */
function withoutFillers(tokens: readonly string[], promptStart: boolean, promptEnd: boolean): string[] {
  let i = 0;
  for (let greeting = promptStart; greeting;) {
    const found = GREETINGS.find((phrase) => startsWith(tokens, i, phrase));
    if (found) i += found.length;
    greeting = found !== undefined;
  }
  let end = tokens.length;
  for (let signOff = promptEnd; signOff;) {
    const found = SIGN_OFFS.find(
      (phrase) => end - phrase.length >= i && startsWith(tokens, end - phrase.length, phrase),
    );
    if (found) end -= found.length;
    signOff = found !== undefined;
  }
  const out: string[] = [];
  while (i < end) {
    const filler = FILLERS_BY_FIRST.get(tokens[i] as string)?.find((phrase) => startsWith(tokens, i, phrase));
    if (filler) i += filler.length;
    else out.push(tokens[i++] as string);
  }
  return out;
}

/** Removes politeness (greetings only at the prompt's start, sign-offs only at its end) and rewrites `how do I` as `how to`. */
export function dropCourtesy(tokens: readonly string[], promptStart: boolean, promptEnd: boolean): string[] {
  const words = withoutFillers(tokens, promptStart, promptEnd);
  const out: string[] = [];
  let gerunds = false;
  let i = 0;
  while (i < words.length) {
    const leadIn = REQUEST_LEAD_INS_BY_FIRST.get(words[i] as string)?.find(
      (phrase) => startsWith(words, i, phrase) && COURTESY_VERBS.has(words[i + phrase.length] ?? ''),
    );
    if (leadIn) {
      i += leadIn.length;
      continue;
    }
    const gerundLeadIn = GERUND_LEAD_INS.find(
      (phrase) =>
        (phrase.length > 1 || out.length === 0) &&
        startsWith(words, i, phrase) &&
        COURTESY_GERUNDS.has(words[i + phrase.length] ?? ''),
    );
    if (gerundLeadIn) {
      gerunds = true;
      i += gerundLeadIn.length;
      // "would you mind telling me how" reads on as "tell me how".
      words[i] = COURTESY_GERUNDS.get(words[i] as string) as string;
      continue;
    }
    const word = words[i] as string;
    if (word === 'tell' && words[i + 1] === 'me' && WH_WORDS.has(words[i + 2] ?? '')) {
      i += 2;
      continue;
    }
    // "help me understand what X is" asks "what is X".
    if (word === 'help' && words[i + 1] === 'me' && words[i + 2] === 'understand' && WH_WORDS.has(words[i + 3] ?? '')) {
      i += 3;
      continue;
    }
    // "would you mind checking X and telling me Y": the second request verb reads as the first did.
    if (gerunds && word === 'and' && COURTESY_GERUNDS.has(words[i + 1] ?? '')) {
      words[i + 1] = COURTESY_GERUNDS.get(words[i + 1] as string) as string;
    }
    // "tell me the capital of Kenya" asks "what is the capital of Kenya"; only before "the": "tell me a joke" is no question.
    if (word === 'tell' && words[i + 1] === 'me' && words[i + 2] === 'the') {
      out.push('what', 'is');
      i += 2;
      continue;
    }
    // "explain what X is" asks "what is X"; only where the request starts, so "I can explain why" keeps its verb.
    if (word === 'explain' && out.length === 0 && WH_WORDS.has(words[i + 1] ?? '')) {
      i += 1;
      continue;
    }
    if (word === 'how' && HOW_MODALS.has(words[i + 1] ?? '') && HOW_SUBJECTS.has(words[i + 2] ?? '')) {
      out.push('how', 'to');
      i += 3;
      continue;
    }
    out.push(word);
    i++;
  }
  return out;
}
