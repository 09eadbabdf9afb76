import { writeFileSync } from 'node:fs';
import { allLocales } from '@faker-js/faker';

/**
 * `node --experimental-strip-types scripts/build-person-names.ts`: writes the
 * name dictionaries of the PERSON recognizer (src/dlp/data/first-names.txt,
 * last-names.txt) from the person-name lists of every @faker-js/faker locale
 * (MIT licence), Latin-script names only (the recognizer reads capitalised
 * words). One name a line, sorted; re-run after upgrading the package.
 */
type Tree = string | readonly Tree[] | { readonly [key: string]: Tree } | { value: Tree } | undefined;

function collect(node: Tree, into: Set<string>): void {
  if (node === undefined) return;
  if (typeof node === 'string') {
    for (const part of node.split(/\s+/)) if (/^\p{Lu}[\p{Script=Latin}\p{M}'’-]{1,30}$/u.test(part)) into.add(part);
  } else if (Array.isArray(node)) node.forEach((item) => collect(item, into));
  else Object.values(node).forEach((item) => collect(item as Tree, into));
}

const first = new Set<string>();
const last = new Set<string>();
for (const locale of Object.values(allLocales)) {
  const person = (locale as { person?: { first_name?: Tree; last_name?: Tree } }).person;
  collect(person?.first_name, first);
  collect(person?.last_name, last);
}
const out = (set: Set<string>) => `${[...set].sort().join('\n')}\n`;
writeFileSync(new URL('../src/dlp/data/first-names.txt', import.meta.url), out(first));
writeFileSync(new URL('../src/dlp/data/last-names.txt', import.meta.url), out(last));
process.stdout.write(`first names: ${first.size}, last names: ${last.size}\n`);
