/** How far up a table's header may be: rows, and characters read. */
const MAX_ROWS_UP = 200;
const MAX_CHARS_UP = 16_384;
const CELL_SEPARATORS = ['|', '\t', ';', ','] as const;
const WORDS = /\p{L}+/gu;

/**
 * Whether the value at `position` sits in a table column (Markdown pipes,
 * tabs, semicolons or commas) whose header cell holds one of `words`: a
 * mobile number in a "Phone" column fifty rows below the header has no
 * phone word within five words, but the header says what it is. The
 * header is the first row of the block of rows split like this one
 * (Markdown's `|---|` rule skipped); reads at most {@link MAX_CHARS_UP}
 * characters up, so its cost does not grow with the text.
 */
export function columnHeaderHas(text: string, position: number, words: ReadonlySet<string>): boolean {
  const lineStart = text.lastIndexOf('\n', position - 1) + 1;
  let lineEnd = text.indexOf('\n', position);
  if (lineEnd < 0) lineEnd = text.length;
  const line = text.slice(lineStart, lineEnd);
  const separator = CELL_SEPARATORS.find((s) => line.includes(s));
  if (separator === undefined) return false;
  const column = countOf(text, separator, lineStart, position);
  const cells = countOf(line, separator, 0, line.length);
  let header: string | undefined;
  let end = lineStart - 1;
  const floor = Math.max(0, lineStart - MAX_CHARS_UP);
  for (let rows = 0; rows < MAX_ROWS_UP && end > floor; rows++) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    const row = text.slice(start, end);
    // A row of another shape ends the block: the row below it was the header.
    if (countOf(row, separator, 0, row.length) !== cells) break;
    if (!/^[\s|:+-]*$/.test(row)) header = row;
    end = start - 1;
    if (start === 0) break;
  }
  if (header === undefined) return false;
  const cell = header.split(separator)[column];
  if (cell === undefined) return false;
  for (const word of cell.toLowerCase().match(WORDS) ?? []) if (words.has(word)) return true;
  return false;
}

function countOf(text: string, char: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf(char, from); i >= 0 && i < to; i = text.indexOf(char, i + 1)) n++;
  return n;
}
