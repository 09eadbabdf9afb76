import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { DEV_PARAGRAPHS, TEST_PARAGRAPHS } from './long-paragraphs.ts';
import {
  formatPairs,
  GENERATED_CATEGORIES,
  readPairSet,
  setPath,
  type Pair,
  type GeneratedSetName,
} from './pair-set.ts';

/**
 * The long-prompt pairs, built deterministically from long-paragraphs.ts.
 * `node --experimental-strip-types eval/semantic/generate-long.ts` replaces
 * the `nm_long` and `p_long` rows of dev.jsonl and test.jsonl and keeps every
 * hand-written row as it is.
 *
 * Long prompts are where a sentence embedding is weakest: one differing
 * sentence barely moves the mean of a few hundred tokens, and the model reads
 * at most 512 tokens, so the end of a 600-word report is not seen at all.
 *
 * - nm_long: a report of about 100, 300 or 600 words whose last sentence
 *   gives the outcome ("approved" vs "rejected"); and one document with two
 *   questions that need different answers.
 * - p_long: the same report or document with its request reworded only.
 */

interface Spec {
  paragraphs: readonly string[];
  /** Outcome sentences, one pair per report near miss. */
  outcomes: readonly (readonly [string, string])[];
  /** Requests put before a report, each with a paraphrase. */
  reportRequests: readonly (readonly [string, string])[];
  /** Questions on one document needing different answers. */
  questionNearMisses: readonly (readonly [string, string])[];
  /** Questions on one document, each with a paraphrase. */
  questionParaphrases: readonly (readonly [string, string])[];
}

const LENGTHS = [100, 300, 600] as const;

// Dev and test use different paragraphs, outcomes, requests and questions, so no prompt text is shared.
const SPECS: Record<GeneratedSetName, Spec> = {
  dev: {
    paragraphs: DEV_PARAGRAPHS,
    outcomes: [
      ['The committee voted and the proposal was approved.', 'The committee voted and the proposal was rejected.'],
      ['In the end, the council accepted the plan.', 'In the end, the council declined the plan.'],
    ],
    reportRequests: [
      [
        'Tell me what was decided in this report and what happens next.',
        'Could you tell me what was decided in this report and what happens next?',
      ],
    ],
    questionNearMisses: [
      ['What problem is this text trying to solve?', 'What evidence does this text give?'],
      ['Summarize this text in bullet points.', 'Suggest a title for this text.'],
      ['Who benefits most from the plan in this text?', 'Who is most likely to object to the plan in this text?'],
      ['What is still uncertain in this text?', 'What has already been decided in this text?'],
    ],
    questionParaphrases: [
      ['What problem is this text trying to solve?', 'what problem is this text trying to solve'],
      ['Summarize this text in bullet points.', 'Please summarize this text in bullet points.'],
      ['Who benefits most from the plan in this text?', 'Who benefits the most from the plan in this text?'],
    ],
  },
  test: {
    paragraphs: TEST_PARAGRAPHS,
    outcomes: [
      [
        "The board's final decision: the application is approved.",
        "The board's final decision: the application is rejected.",
      ],
      [
        'After a long debate, the panel accepted the proposal.',
        'After a long debate, the panel declined the proposal.',
      ],
      ['The funding request was granted at the last meeting.', 'The funding request was refused at the last meeting.'],
      ['The plan passed the final vote.', 'The plan failed the final vote.'],
    ],
    reportRequests: [
      [
        'Summarize this report for the board, including its outcome.',
        'Could you summarize this report for the board, including its outcome?',
      ],
      [
        'Read the report below and explain the decision it ends with.',
        'Read the report below and explain the decision it ends with',
      ],
    ],
    questionNearMisses: [
      ['What is the biggest risk mentioned in this text?', 'What is the biggest benefit mentioned in this text?'],
      ['Summarize this text in plain language.', 'Translate this text into French.'],
      ['Who raised concerns in this text, and what were they?', 'Which costs are mentioned in this text?'],
      ['Write a headline for this text.', 'Write a list of follow-up questions about this text.'],
      ['What does the text recommend doing next?', 'What does the text say went wrong?'],
      ['Is the tone of this text positive or negative?', 'Is this text written for experts or for the general public?'],
      ['Extract every number mentioned in this text.', 'Extract every group of people mentioned in this text.'],
      ['Rewrite this text for a young child.', 'Rewrite this text as a formal letter.'],
    ],
    questionParaphrases: [
      ['What is the biggest risk mentioned in this text?', "what's the biggest risk mentioned in this text"],
      ['Summarize this text in plain language.', 'Please summarize this text in plain language.'],
      ['Which costs are mentioned in this text?', 'Which costs does this text mention?'],
      ['Write a headline for this text.', 'Write a headline for this text'],
      ['What does the text recommend doing next?', 'What does the text recomend doing next?'],
      ['Who raised concerns in this text, and what were they?', 'Who raised concerns in this text and what were they?'],
      ['Is the tone of this text positive or negative?', 'Is the tone of this text positive or negative? Thanks.'],
      [
        'Extract every group of people mentioned in this text.',
        'Can you extract every group of people mentioned in this text?',
      ],
    ],
  },
};

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Whole sentences from paragraph `start` on (wrapping around), until at least `target` words. */
function passage(paragraphs: readonly string[], start: number, target: number): string {
  const sentences = [...paragraphs.slice(start), ...paragraphs.slice(0, start)].flatMap((p) => p.split(/(?<=\.)\s+/));
  const out: string[] = [];
  let count = 0;
  for (const sentence of sentences) {
    if (count >= target) break;
    out.push(sentence);
    count += words(sentence);
  }
  return out.join(' ');
}

/** The long pairs of one set, numbered per category. */
export function longPairs(set: GeneratedSetName): Pair[] {
  const spec = SPECS[set];
  const n = spec.paragraphs.length;
  const pairs: Pair[] = [];
  const counters: Record<string, number> = {};
  const add = (category: 'nm_long' | 'p_long', a: string, b: string, note: string) => {
    counters[category] = (counters[category] ?? 0) + 1;
    const id = `${set}-${category}-${String(counters[category]).padStart(2, '0')}`;
    pairs.push({ id, category, label: category === 'nm_long' ? 'near_miss' : 'paraphrase', a, b, note });
  };

  // Reports: every length with every outcome pair, each from its own starting paragraph.
  let variant = 0;
  for (const length of LENGTHS) {
    for (const [yes, no] of spec.outcomes) {
      const request = spec.reportRequests[variant % spec.reportRequests.length]?.[0] as string;
      const body = passage(spec.paragraphs, (variant * 2) % n, length);
      add(
        'nm_long',
        `${request}\n\n${body} ${yes}`,
        `${request}\n\n${body} ${no}`,
        `~${length}-word report, only the last sentence differs`,
      );
      variant += 1;
    }
  }
  // One document, two questions; the question comes after the document, or before it on odd pairs.
  spec.questionNearMisses.forEach(([qa, qb], i) => {
    const doc = passage(spec.paragraphs, (i * 3 + 1) % n, 220);
    const ask = (q: string) => (i % 2 === 0 ? `${doc}\n\nQuestion: ${q}` : `Question: ${q}\n\nText:\n${doc}`);
    add('nm_long', ask(qa), ask(qb), 'same ~220-word document, another question');
  });

  // Paraphrases: the same report or document, only the request reworded.
  spec.questionParaphrases.forEach(([qa, qb], i) => {
    const doc = passage(spec.paragraphs, (i * 2 + 2) % n, 260);
    add(
      'p_long',
      `${doc}\n\nQuestion: ${qa}`,
      `${doc}\n\nQuestion: ${qb}`,
      'same ~260-word document, question reworded',
    );
  });
  const reportParaphrases = set === 'test' ? 8 : 3;
  for (let i = 0; i < reportParaphrases; i++) {
    // Other lengths than the near misses', so no paraphrase repeats a near miss's text.
    const length = [150, 350, 550][i % 3] as number;
    const [ra, rb] = spec.reportRequests[i % spec.reportRequests.length] as readonly [string, string];
    const outcome = spec.outcomes[i % spec.outcomes.length]?.[i % 2] as string;
    const body = passage(spec.paragraphs, (i * 2 + 1) % n, length);
    add(
      'p_long',
      `${ra}\n\n${body} ${outcome}`,
      `${rb}\n\n${body} ${outcome}`,
      `~${length}-word report, request reworded`,
    );
  }
  return pairs;
}

/** Rewrites the generated rows of a set file, keeping the hand-written ones in place before them. */
export function writeLongPairs(set: GeneratedSetName): number {
  const kept = readPairSet(set).filter((p) => !GENERATED_CATEGORIES.includes(p.category));
  const generated = longPairs(set);
  writeFileSync(setPath(set), formatPairs([...kept, ...generated]));
  return generated.length;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const set of ['dev', 'test'] as const)
    process.stdout.write(`${set}.jsonl: ${writeLongPairs(set)} long pairs written\n`);
}
