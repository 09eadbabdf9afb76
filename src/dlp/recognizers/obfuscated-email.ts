import type { Candidate, ContextRule, Recognizer } from '../recognizer.ts';

/**
 * E-mail addresses written to dodge scrapers: `john dot doe at example dot
 * com`, `john[at]example[dot]com`, `john (at) example.com`. The scan jumps
 * from one "at" token to the next, reads the domain forwards (at least one
 * "dot", a final label of 2-6 letters) and the local part backwards.
 *
 * Scores: with a bracketed `[at]`/`(at)` 0.85 (prose never writes that); with
 * a bare " at " 0.6, lifted by mail words ("email", "write", "contact"),
 * since "meet at noon dot com" is rare but "at" is everywhere.
 */
const AT = /\s*(?:\[at\]|\(at\)|\{at\}|<at>)\s*|\s+at\s+/giu;
const SEP_DOT = String.raw`(?:\s*(?:\[dot\]|\(dot\)|\{dot\}|<dot>)\s*|\s+dot\s+|\.)`;
const LABEL = String.raw`[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?`;
const DOMAIN = new RegExp(`${LABEL}(?:${SEP_DOT}${LABEL})*?${SEP_DOT}(\\p{L}{2,6})(?![\\p{L}\\p{N}])`, 'iuy');
const LOCAL = new RegExp(`(?<![\\p{L}\\p{N}._%+-])[\\p{L}\\p{N}_%+-]+(?:${SEP_DOT}[\\p{L}\\p{N}_%+-]+)*$`, 'iu');
const DOT_WORD = /\s*(?:\[dot\]|\(dot\)|\{dot\}|<dot>)\s*|\s+dot\s+/giu;

const BRACKETED_SCORE = 0.85;
const SPELLED_SCORE = 0.6;

export class ObfuscatedEmailRecognizer implements Recognizer {
  readonly name = 'obfuscated-email';
  readonly entities = ['EMAIL_ADDRESS'] as const;
  readonly context: ContextRule = {
    positive: [
      'email*',
      'e',
      'mail*',
      'write',
      'writing',
      'contact*',
      'reach',
      'correo',
      'escribe*',
      'schreib*',
      'courriel',
      'écrivez',
      'adresse',
      'address',
    ],
  };

  analyze(text: string, out: Candidate[]): void {
    if (!/at/i.test(text)) return;
    AT.lastIndex = 0;
    let at: RegExpExecArray | null;
    while ((at = AT.exec(text)) !== null) {
      DOMAIN.lastIndex = at.index + at[0].length;
      const domain = DOMAIN.exec(text);
      const local = domain ? LOCAL.exec(text.slice(Math.max(0, at.index - 80), at.index)) : null;
      if (!domain || !local || !/\p{L}/u.test(local[0])) continue;
      const start = at.index - local[0].length;
      const end = DOMAIN.lastIndex;
      const bracketed = /[[({<]/.test(at[0]);
      const key = `${undot(local[0])}@${undot(domain[0])}`.toLowerCase();
      out.push({
        entity: 'EMAIL_ADDRESS',
        start,
        end,
        score: bracketed ? BRACKETED_SCORE : SPELLED_SCORE,
        key,
        recognizer: this.name,
      });
      AT.lastIndex = end;
    }
  }
}

function undot(value: string): string {
  return value.replace(DOT_WORD, '.');
}
