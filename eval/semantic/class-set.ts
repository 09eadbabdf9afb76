import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { Label, Pair } from './pair-set.ts';

/**
 * The second-round pair sets (README.md beside this file, "Second round"):
 * near-miss classes the first-round sets did not have, trivial variants and
 * true rewordings written by hand (`classes-*`), and pairs taken from public
 * paraphrase corpora (`public-*`). Each comes as a tuning part (`-dev`) and a
 * held-out part (`-holdout`) that is run once, to report; `classes-holdout2`
 * to `classes-holdout11` are more held-out parts of the same classes, each
 * written blind.
 */

export const CLASS_SET_NAMES = [
  'classes-dev',
  'classes-holdout',
  'classes-holdout2',
  'classes-holdout3',
  'classes-holdout4',
  'classes-holdout5',
  'classes-holdout6',
  'classes-holdout7',
  'classes-holdout8',
  'classes-holdout9',
  'classes-holdout10',
  'classes-holdout11',
  'public-dev',
  'public-holdout',
] as const;
export type ClassSetName = (typeof CLASS_SET_NAMES)[number];

/** Every category of these sets and its label. */
export const CLASS_CATEGORIES: Readonly<Record<string, Label>> = {
  nm_real_word: 'near_miss',
  nm_pronoun_role: 'near_miss',
  nm_noun_role: 'near_miss',
  nm_for_direction: 'near_miss',
  nm_to_direction: 'near_miss',
  nm_quantifier: 'near_miss',
  nm_multilingual: 'near_miss',
  p_trivial: 'paraphrase',
  p_trivial_multilingual: 'paraphrase',
  p_rewording: 'paraphrase',
  // Public corpora: the corpus's own label, "paraphrase" or "duplicate" as a paraphrase, else a near miss.
  pub_mrpc_paraphrase: 'paraphrase',
  pub_mrpc_different: 'near_miss',
  pub_ko_duplicate: 'paraphrase',
  pub_ko_different: 'near_miss',
};

const classPairSchema = z
  .object({
    id: z.string().regex(/^(classes-(dev|holdout(?:[2-9]|1[01])?)|public-(dev|holdout))-[a-z_]+-\d{2,3}$/),
    category: z.string().refine((c) => c in CLASS_CATEGORIES, 'unknown category'),
    label: z.enum(['paraphrase', 'near_miss']),
    a: z.string().min(1),
    b: z.string().min(1),
    note: z.string().min(1).optional(),
  })
  .strict()
  .refine((p) => CLASS_CATEGORIES[p.category] === p.label, 'label does not match the category')
  .refine((p) => p.a !== p.b, 'a and b are the same text');

export function classSetPath(set: ClassSetName): string {
  return join(import.meta.dirname, `${set}.jsonl`);
}

/** Parses one of these sets; throws naming the first bad line. */
export function readClassSet(set: ClassSetName): Pair[] {
  const path = classSetPath(set);
  const pairs: Pair[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const result = classPairSchema.safeParse(JSON.parse(line));
      if (!result.success)
        throw new Error(`${path}:${i + 1}: ${result.error.issues.map((issue) => issue.message).join('; ')}`);
      pairs.push(result.data);
    });
  return pairs;
}
