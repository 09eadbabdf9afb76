/**
 * Words one or two letters apart that mean opposite things, which the
 * verifier's typo rule (`prompt-verifier.ts`) must never take for a
 * misspelling of each other.
 */

/** Prefixes that turn a word into its opposite: `safe` / `unsafe`. */
const NEGATING_PREFIXES = ['un', 'in', 'im', 'il', 'ir', 'dis', 'non', 'de', 'anti', 'mis'];

/** Whether one word is the other with a negating prefix. */
export function negates(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return NEGATING_PREFIXES.some((prefix) => long === prefix + short);
}

/**
 * Parts of a word that, swapped for each other, turn it into its opposite
 * (`employer` / `employee`, `maximize` / `minimize`) or change its degree
 * (`strongest` / `stronger`). `$` marks a word ending.
 */
const OPPOSITE_PARTS: ReadonlyArray<readonly [string, string]> = [
  ['max', 'min'],
  ['micro', 'macro'],
  ['hyper', 'hypo'],
  ['inter', 'intra'],
  ['endo', 'exo'],
  ['er$', 'ee$'],
  ['or$', 'ee$'],
  ['est$', 'er$'],
];

/** Whether `b` is `a` with one part of an opposite pair replaced by the other. */
export function opposes(a: string, b: string): boolean {
  for (const [x, y] of OPPOSITE_PARTS) {
    for (const [from, to] of [
      [x, y],
      [y, x],
    ] as const) {
      const atEnd = from.endsWith('$');
      const part = from.replace('$', '');
      const other = to.replace('$', '');
      if (atEnd) {
        if (a.endsWith(part) && a.slice(0, -part.length) + other === b) return true;
        continue;
      }
      for (let i = a.indexOf(part); i !== -1; i = a.indexOf(part, i + 1))
        if (a.slice(0, i) + other + a.slice(i + part.length) === b) return true;
    }
  }
  return false;
}
