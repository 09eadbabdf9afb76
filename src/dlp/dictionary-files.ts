import { readFileSync } from 'node:fs';

/** Where the name and place dictionaries are; scripts/build-person-names.ts and scripts/build-place-names.ts write them. */
const DATA = new URL('./data/', import.meta.url);

/** The entries of a dictionary in `src/dlp/data/`, one a line, without empty lines and the licence comment. */
export function readDictionary(file: string): string[] {
  return readFileSync(new URL(file, DATA), 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'));
}
