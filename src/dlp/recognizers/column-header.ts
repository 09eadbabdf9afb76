/** How far up a table's header may be: rows, and characters read. */
const MAX_ROWS_UP = 200;
const MAX_CHARS_UP = 16_384;
const CELL_SEPARATORS = ['|', '\t', ';', ','] as const;
const WORDS = /\p{L}+/gu;
/** Markdown's `|---|` rule, and empty rows. */
const RULE_ROW = /^[\s|:+-]*$/;

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
  const lineStart = lineStartOf(text, position);
  // The first line has no header above it; most prose is one line.
  if (lineStart === 0) return false;
  const table = tableOf(text, lineStart);
  if (table === undefined) return false;
  const column = countOf(text, table.separator, lineStart, position);
  if (column >= table.header.length) return false;
  if (table.words !== words) {
    table.words = words;
    table.announces = table.header.map((cell) => (cell.toLowerCase().match(WORDS) ?? []).some((w) => words.has(w)));
  }
  return table.announces[column]!;
}

/**
 * The line of the position asked last, and where the next line break after
 * it is: a recognizer asks about positions in increasing order, so the text
 * between two numbers of one line is not searched again for a line break.
 */
let lineText: string | undefined;
let linePosition = 0;
let lineStartAt = 0;
let nextBreak = 0;

/** Where the line holding `position` starts (what `text.lastIndexOf('\n', position - 1) + 1` says). */
function lineStartOf(text: string, position: number): number {
  if (text === lineText && position >= linePosition && position <= nextBreak) return lineStartAt;
  lineText = text;
  linePosition = position;
  lineStartAt = text.lastIndexOf('\n', position - 1) + 1;
  const next = text.indexOf('\n', position);
  nextBreak = next === -1 ? text.length : next;
  return lineStartAt;
}

interface Table {
  separator: string;
  header: readonly string[];
  /** The words asked about last, and whether each header cell holds one of them. */
  words: ReadonlySet<string> | undefined;
  announces: boolean[];
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

/** The table built last, kept for the next row of its block: the same header, asked about the same words. */
let builtText: string | undefined;
let builtHeaderStart = -1;
let builtHeaderEnd = -1;
let builtTable: Table | undefined;

function readTable(text: string, lineStart: number): Table | undefined {
  let lineEnd = text.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = text.length;
  // Searched within the line only: a separator that the text lacks would otherwise be looked for to its end.
  const line = text.slice(lineStart, lineEnd);
  const separator = CELL_SEPARATORS.find((s) => line.includes(s));
  if (separator === undefined) return undefined;
  const cells = countOf(text, separator, lineStart, lineEnd);
  const walk = walkOn(text, lineStart, lineEnd, separator, cells) ?? walkUp(text, lineStart, lineEnd, separator, cells);
  lastWalk = walk;
  const { headerStart, headerEnd } = walk;
  if (headerStart < 0) return undefined;
  if (
    text !== builtText ||
    headerStart !== builtHeaderStart ||
    headerEnd !== builtHeaderEnd ||
    builtTable?.separator !== separator
  ) {
    builtText = text;
    builtHeaderStart = headerStart;
    builtHeaderEnd = headerEnd;
    builtTable = {
      separator,
      header: text.slice(headerStart, headerEnd).split(separator),
      words: undefined,
      announces: [],
    };
  }
  return builtTable;
}

/** A row of a table and what walking up its block found: the rows read, the end of the topmost, the header. */
interface Walk {
  text: string;
  lineStart: number;
  lineEnd: number;
  separator: string;
  cells: number;
  rows: number;
  topEnd: number;
  headerStart: number;
  headerEnd: number;
}

/** The walk of the row read last, which the row right below it continues: each row of a block would otherwise walk up the whole block again. */
let lastWalk: Walk | undefined;

/** Walks up from the line `text[lineStart, lineEnd)` to the first row of its block (or a limit): the header is the topmost row that is not a rule. */
function walkUp(text: string, lineStart: number, lineEnd: number, separator: string, cells: number): Walk {
  let headerStart = -1;
  let headerEnd = -1;
  let end = lineStart - 1;
  let topEnd = end;
  let rows = 0;
  const floor = Math.max(0, lineStart - MAX_CHARS_UP);
  for (; rows < MAX_ROWS_UP && end > floor; rows++) {
    topEnd = end;
    const start = text.lastIndexOf('\n', end - 1) + 1;
    // A row of another shape ends the block: the row below it was the header.
    if (countOf(text, separator, start, end) !== cells) {
      rows++;
      break;
    }
    if (!RULE_ROW.test(text.slice(start, end))) {
      headerStart = start;
      headerEnd = end;
    }
    end = start - 1;
    if (start === 0) {
      rows++;
      break;
    }
  }
  return { text, lineStart, lineEnd, separator, cells, rows, topEnd, headerStart, headerEnd };
}

/**
 * What {@link walkUp} would find from the row right below the one walked
 * last, without reading the block again: the same rows with the last one on
 * top, provided the same limits still let {@link walkUp} reach them all.
 */
function walkOn(text: string, lineStart: number, lineEnd: number, separator: string, cells: number): Walk | undefined {
  const above = lastWalk;
  if (
    above === undefined ||
    above.text !== text ||
    above.lineEnd !== lineStart - 1 ||
    above.separator !== separator ||
    above.cells !== cells ||
    above.rows >= MAX_ROWS_UP ||
    (above.rows > 0 && above.topEnd <= lineStart - MAX_CHARS_UP)
  )
    return undefined;
  const aboveIsHeader = above.headerStart < 0 && !RULE_ROW.test(text.slice(above.lineStart, above.lineEnd));
  return {
    text,
    lineStart,
    lineEnd,
    separator,
    cells,
    rows: above.rows + 1,
    topEnd: above.rows > 0 ? above.topEnd : above.lineEnd,
    headerStart: aboveIsHeader ? above.lineStart : above.headerStart,
    headerEnd: aboveIsHeader ? above.lineEnd : above.headerEnd,
  };
}

function countOf(text: string, char: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf(char, from); i >= 0 && i < to; i = text.indexOf(char, i + 1)) n++;
  return n;
}
