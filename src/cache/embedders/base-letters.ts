/**
 * Letters that Unicode decomposition leaves whole (`ı`, `ł`, `ø`, `đ`), with the base letter their
 * writers type on a keyboard without them: stripping accents by `NFD` does not reach them.
 */
const BASE_LETTERS: Readonly<Record<string, string>> = { ı: 'i', ł: 'l', ø: 'o', đ: 'd' };

/** `text` (accents already stripped) with those letters as their base letters: `kışa` → `kisa`, `długo` → `dlugo`. */
export function withBaseLetters(text: string): string {
  return text.replace(/[ıłøđ]/gu, (letter) => BASE_LETTERS[letter] as string);
}
