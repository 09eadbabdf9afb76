const NON_ASCII = /[^\x00-\x7f]/g;

/**
 * Whether `text[from, to)` is plain ASCII, for the many windows one scan asks
 * about. The text is searched forwards only as far as its next non-ASCII
 * character, and that stretch is remembered: in a text that is plain ASCII
 * (most are) the first question searches it to its end and every later one
 * is answered without reading it, where testing each window read it again
 * and cost a slice.
 */
export class AsciiStretch {
  private text: string | undefined;
  /** `text[start, end)` is plain ASCII; `end` is the text's length or a non-ASCII character. */
  private start = 0;
  private end = 0;

  between(text: string, from: number, to: number): boolean {
    if (text !== this.text || from < this.start || from > this.end) {
      this.text = text;
      this.start = from;
      NON_ASCII.lastIndex = from;
      this.end = NON_ASCII.exec(text)?.index ?? text.length;
    }
    return to <= this.end;
  }
}
