import type { PromptLanguage } from './prompt-language.ts';

/**
 * Whether two spellings of one length differ by slips of the finger: a neighbouring key, a vowel
 * for a vowel, or two neighbouring letters swapped. The keyboard is the one the prompt's language
 * is usually typed on: AZERTY for French, QWERTZ for German, Swedish QWERTY with `å ö ä`, QWERTY for the others
 * with typo rules.
 */

type Layout = ReadonlyMap<string, readonly [row: number, column: number]>;

/** Where each letter sits: row, and column as the rows are staggered. */
function layout(rows: readonly string[]): Layout {
  return new Map(rows.flatMap((row, r) => [...row].map((key, i) => [key, [r, i]] as const)));
}

const QWERTY = layout(['qwertyuiop', 'asdfghjkl', 'zxcvbnm']);
const LAYOUTS: Partial<Record<PromptLanguage, Layout>> = {
  fr: layout(['azertyuiop', 'qsdfghjklm', 'wxcvbn']),
  de: layout(['qwertzuiopü', 'asdfghjklöä', 'yxcvbnm']),
  sv: layout(['qwertyuiopå', 'asdfghjklöä', 'zxcvbnm']),
};

const VOWELS = /^[aeiouy]{2}$/;

/**
 * Whether one letter typed for another is a slip: a neighbouring key, or a vowel for a vowel
 * (`seperate`, `sentance`). A letter replaced by a far one is another word the dictionary does not
 * know (`lipase` / `ligase`), not a typo.
 */
function slip(x: string, y: string, keys: Layout): boolean {
  if (VOWELS.test(x + y)) return true;
  const [p, q] = [keys.get(x.toLowerCase()), keys.get(y.toLowerCase())];
  if (!p || !q) return true;
  const [dr, dc] = [q[0] - p[0], q[1] - p[1]];
  return (
    (dr === 0 && Math.abs(dc) === 1) || (dr === 1 && (dc === 0 || dc === -1)) || (dr === -1 && (dc === 0 || dc === 1))
  );
}

/** Whether the letters `a` and `b` (of one length) write differently are slips or swapped neighbours; other edits pass. */
export function slipsOfTheFinger(a: string, b: string, language: PromptLanguage = 'en'): boolean {
  if (a.length !== b.length) return true;
  const keys = LAYOUTS[language] ?? QWERTY;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (a[i] === b[i + 1] && a[i + 1] === b[i]) {
      i++;
      continue;
    }
    if (!slip(a[i] as string, b[i] as string, keys)) return false;
  }
  return true;
}
