/**
 * Names that are also everyday words with another meaning: `Turkey` the
 * country and `turkey` the bird, `Go` the language and `go` the verb,
 * `Windows` the system and the `windows` of a house. A capital letter is the
 * only thing that tells them apart, so the canonical form keeps it where it
 * was written on purpose (see `prompt-canonical.ts`).
 *
 * Only names whose lower-case word is common enough to be meant as written:
 * not months (`in early march` means March), not names whose lower-case form
 * people use for the name itself (`python`, `java`, `mars`), so those keep
 * folding and their lower-case variants still hit.
 */
export const CAPITONYMS: ReadonlySet<string> = new Set([
  // Places
  'turkey', 'china', 'chile', 'jersey', 'guinea', 'chad', 'jordan', 'nice', 'bath', 'reading', 'split', 'mobile',
  'buffalo', 'phoenix', 'cork', 'hull', 'deal', 'wells', 'sandwich', 'derby', 'bologna', 'champagne', 'cologne',
  'lima', 'cayenne', 'panama', 'brazil', 'bordeaux', 'burgundy', 'cheddar', 'cognac', 'amazon', 'mercury',
  // Peoples and languages
  'polish', 'swede',
  // People's names
  'will', 'bill', 'mark', 'rose', 'grace', 'hope', 'faith', 'frank', 'jack', 'pat', 'sue', 'guy', 'art', 'dawn',
  'ivy', 'daisy', 'holly', 'amber', 'pearl', 'olive', 'rich', 'chase', 'gene', 'sky',
  // Software, languages and companies
  'go', 'rust', 'swift', 'ruby', 'dart', 'windows', 'word', 'office', 'excel', 'outlook', 'edge', 'teams', 'slack',
  'notion', 'chrome', 'safari', 'opera', 'zoom', 'signal', 'discord', 'square', 'stripe', 'apple', 'shell', 'target',
  'gap', 'subway', 'oracle', 'visa', 'delta', 'jaguar', 'puma', 'mustang', 'beetle', 'kindle', 'nest', 'ring', 'echo',
  'spring', 'express', 'react', 'flask', 'spark', 'hive', 'puppet', 'chef', 'salt', 'pandas', 'torch', 'jest', 'mocha',
]);
