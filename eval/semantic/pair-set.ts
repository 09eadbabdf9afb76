import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/**
 * The labelled pair sets of the semantic-cache evaluation (README.md beside
 * this file): the schema of one line, the categories with the label each one
 * carries, and a reader that rejects a malformed file with the line number.
 */

export type Label = 'paraphrase' | 'near_miss';
/** holdout7 is held out; dev, test and holdout2 to holdout6 are for tuning (README.md beside this file). */
export const SET_NAMES = [
  'dev',
  'test',
  'holdout2',
  'holdout3',
  'holdout4',
  'holdout5',
  'holdout6',
  'holdout7',
] as const;
export type SetName = (typeof SET_NAMES)[number];
/** The sets whose long rows generate-long.ts writes; the long rows of holdout2 to holdout7 are written by hand. */
export type GeneratedSetName = 'dev' | 'test';

/** Every category and its label: a near miss needs another answer, a paraphrase the same one. */
export const CATEGORIES: Readonly<Record<string, Label>> = {
  nm_direction: 'near_miss',
  nm_case: 'near_miss',
  nm_time: 'near_miss',
  nm_antonym: 'near_miss',
  nm_tone_length: 'near_miss',
  nm_order: 'near_miss',
  nm_number: 'near_miss',
  nm_date: 'near_miss',
  nm_negation: 'near_miss',
  nm_entity: 'near_miss',
  nm_format: 'near_miss',
  nm_long: 'near_miss',
  nm_code: 'near_miss',
  p_typo: 'paraphrase',
  p_synonym: 'paraphrase',
  p_punctuation: 'paraphrase',
  p_case: 'paraphrase',
  p_whitespace: 'paraphrase',
  p_word_order: 'paraphrase',
  p_politeness: 'paraphrase',
  p_contraction: 'paraphrase',
  p_abbreviation: 'paraphrase',
  p_reformulation: 'paraphrase',
  p_long: 'paraphrase',
};

/** Categories whose rows generate-long.ts writes; every other row is written by hand. */
export const GENERATED_CATEGORIES: readonly string[] = ['nm_long', 'p_long'];

export const pairSchema = z
  .object({
    id: z.string().regex(/^(dev|test|holdout[2-7])-[a-z_]+-\d{2,3}$/),
    category: z.string().refine((c) => c in CATEGORIES, 'unknown category'),
    label: z.enum(['paraphrase', 'near_miss']),
    a: z.string().min(1),
    b: z.string().min(1),
    note: z.string().min(1).optional(),
  })
  .strict()
  .refine((p) => CATEGORIES[p.category] === p.label, 'label does not match the category')
  .refine((p) => p.a !== p.b, 'a and b are the same text');

export type Pair = z.infer<typeof pairSchema>;

export const SET_DIR = import.meta.dirname;

export function setPath(set: SetName): string {
  return join(SET_DIR, `${set}.jsonl`);
}

/** Parses JSON Lines text; throws naming the first bad line. */
export function parsePairs(text: string, source: string): Pair[] {
  const pairs: Pair[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const result = pairSchema.safeParse(JSON.parse(line));
    if (!result.success)
      throw new Error(`${source}:${i + 1}: ${result.error.issues.map((issue) => issue.message).join('; ')}`);
    pairs.push(result.data);
  });
  return pairs;
}

export function readPairSet(set: SetName): Pair[] {
  const path = setPath(set);
  return parsePairs(readFileSync(path, 'utf8'), path);
}

/** One line per pair, keys in schema order, so diffs of the data files stay readable. */
export function formatPairs(pairs: readonly Pair[]): string {
  return pairs
    .map((p) =>
      JSON.stringify({
        id: p.id,
        category: p.category,
        label: p.label,
        a: p.a,
        b: p.b,
        ...(p.note ? { note: p.note } : {}),
      }),
    )
    .join('\n')
    .concat('\n');
}
