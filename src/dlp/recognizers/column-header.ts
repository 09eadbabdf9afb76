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
  // The first line has no header above it; most prose is one line.
  if (lineStart === 0) return false;
  const table = tableOf(text, lineStart);
  if (table === undefined) return false;
  const cell = table.header[countOf(text, table.separator, lineStart, position)];
  if (cell === undefined) return false;
  for (const word of cell.toLowerCase().match(WORDS) ?? []) if (words.has(word)) return true;
  return false;
}

interface Table {
  separator: string;
  header: readonly string[];
}

/**
 * The line read last: every number of a row, and the recognizer's two
 * questions about each, ask about the same line, and reading its block of
 * rows costs more than the rest of a phone number's checks.
 */
let lastText: string | undefined;
let lastLineStart = -1;
let lastTable: Table | undefined;

function tableOf(text: string, lineStart: number): Table | undefined {
  if (text === lastText && lineStart === lastLineStart) return lastTable;
  lastText = text;
  lastLineStart = lineStart;
  lastTable = readTable(text, lineStart);
  return lastTable;
}

function readTable(text: string, lineStart: number): Table | undefined {
  let lineEnd = text.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = text.length;
  const separator = CELL_SEPARATORS.find((s) => {
    const at = text.indexOf(s, lineStart);
    return at >= 0 && at < lineEnd;
  });
  if (separator === undefined) return undefined;
  const cells = countOf(text, separator, lineStart, lineEnd);
  let header: string | undefined;
  let end = lineStart - 1;
  const floor = Math.max(0, lineStart - MAX_CHARS_UP);
  for (let rows = 0; rows < MAX_ROWS_UP && end > floor; rows++) {
    const start = text.lastIndexOf('\n', end - 1) + 1;
    // A row of another shape ends the block: the row below it was the header.
    if (countOf(text, separator, start, end) !== cells) break;
    const row = text.slice(start, end);
    if (!/^[\s|:+-]*$/.test(row)) header = row;
    end = start - 1;
    if (start === 0) break;
  }
  return header === undefined ? undefined : { separator, header: header.split(separator) };
}

function countOf(text: string, char: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf(char, from); i >= 0 && i < to; i = text.indexOf(char, i + 1)) n++;
  return n;
}
