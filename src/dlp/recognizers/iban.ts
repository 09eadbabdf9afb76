import type { Candidate, Recognizer } from '../recognizer.ts';
import { IBAN_LENGTHS, ibanChecksumValid } from '../validators/iban.ts';

/**
 * International bank account numbers, compact (`DE89370400440532013000`) or
 * printed in groups of four. A candidate may run on into the next word
 * ("… 0130 00 OK"), so the country's registered length decides where the
 * IBAN ends, provided it ends at a group boundary.
 *
 * Score 1.0 for a known country, the right length and mod-97 = 1; anything
 * else is rejected.
 */

const CANDIDATE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}/g;

export class IbanRecognizer implements Recognizer {
  readonly name = 'iban';
  readonly entities = ['IBAN_CODE'] as const;
  readonly context = { positive: ['iban', 'bank', 'account', 'acct', 'transfer', 'wire', 'sepa', 'bic', 'swift'] };

  analyze(text: string, out: Candidate[]): void {
    CANDIDATE.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = CANDIDATE.exec(text)) !== null) {
      const raw = match[0];
      const length = IBAN_LENGTHS[raw.slice(0, 2)];
      const end = length === undefined ? -1 : endOfIban(raw, length);
      if (end === -1) {
        CANDIDATE.lastIndex = match.index + 1;
        continue;
      }
      const value = raw.slice(0, end);
      const compact = value.replaceAll(' ', '');
      const next = text.charCodeAt(match.index + end);
      const atBoundary = Number.isNaN(next) || !isAlnum(next);
      if (atBoundary && ibanChecksumValid(compact)) {
        out.push({ entity: 'IBAN_CODE', start: match.index, end: match.index + end, score: 1, key: compact, recognizer: this.name });
        CANDIDATE.lastIndex = match.index + end;
      } else {
        CANDIDATE.lastIndex = match.index + 1;
      }
    }
  }
}

/** Index in `raw` just after its `length`-th alphanumeric character, or -1 if it has fewer. */
function endOfIban(raw: string, length: number): number {
  let count = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw.charCodeAt(i) !== 32) count++;
    if (count === length) return i + 1;
  }
  return -1;
}

function isAlnum(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
