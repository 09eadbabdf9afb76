/**
 * Endings stripped to find a lemma, with what replaces them and the part of speech the lemma must
 * have (`v:` verb, `a:` adjective, '' any): `morphy`'s rules, and doubled consonants.
 */
const ENDINGS: ReadonlyArray<readonly [suffix: string, replacement: string, tag: string]> = [
  ['s', '', ''],
  ['es', '', ''],
  ['ies', 'y', ''],
  ['ses', 's', ''],
  ['xes', 'x', ''],
  ['zes', 'z', ''],
  ['ches', 'ch', ''],
  ['shes', 'sh', ''],
  ['men', 'man', ''],
  ['ed', '', 'v:'],
  ['ed', 'e', 'v:'],
  ['ied', 'y', 'v:'],
  ['ing', '', 'v:'],
  ['ing', 'e', 'v:'],
  ['er', '', 'a:'],
  ['er', 'e', 'a:'],
  ['ier', 'y', 'a:'],
  ['est', '', 'a:'],
  ['est', 'e', 'a:'],
  ['iest', 'y', 'a:'],
];

/**
 * Whether `lower` is an entry of `has`, or a regular inflection of one (the endings above, tagged by
 * part of speech): the lookup of `isEnglishWord` (`../english-dictionary.ts`), and how the list's generator leaves out the
 * inflected forms it need not store.
 */
export function isWordOrInflection(lower: string, has: (entry: string) => boolean): boolean {
  if (has(lower)) return true;
  for (const [suffix, replacement, tag] of ENDINGS) {
    if (lower.length <= suffix.length + 1 || !lower.endsWith(suffix)) continue;
    const stem = lower.slice(0, -suffix.length);
    if (has(tag + stem + replacement)) return true;
    // A doubled final consonant after a one-syllable stem: `stopped`, `running`, `bigger` (not "gardenning").
    const single = stem.slice(0, -1);
    if (
      replacement === '' &&
      stem.length > 2 &&
      stem.at(-1) === stem.at(-2) &&
      (single.match(/[aeiouy]+/g) ?? []).length === 1 &&
      has(tag + single)
    )
      return true;
  }
  return false;
}
