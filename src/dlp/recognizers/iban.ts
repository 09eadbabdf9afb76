import type { Candidate, Recognizer } from '../recognizer.ts';
import { IBAN_LENGTHS, ibanChecksumValid } from '../validators/iban.ts';

/**
 * International bank account numbers, however they are printed: compact
 * (`DE89370400440532013000`), in groups of four, in lower case, with dots,
 * dashes, double spaces or line breaks between groups, or with the country
 * code apart (`DE 89 3704…`). A candidate may run on into the next word
 * ("… 0130 00 OK"), so the country's registered length decides where the
 * IBAN ends, provided it ends at a group boundary.
 *
 * Score 1.0 for a known country, the right length, mod-97 = 1, letters of one
 * case and a BBAN that is at least 40% digits (prose that happens to pass
 * mod 97 is mostly letters, in mixed case); anything else is rejected.
 */

const CANDIDATE = /(?<![A-Za-z0-9])[A-Za-z]{2} ?\d{2}(?:(?: {0,2}|-| - |\.|\r?\n)[A-Za-z0-9]){11,30}/g;
const MIN_DIGIT_SHARE = 0.4;

export class IbanRecognizer implements Recognizer {
  readonly name = 'iban';
  readonly entities = ['IBAN_CODE'] as const;
  readonly context = {
    positive: [
      'iban',
      'bank',
      'account',
      'acct',
      'transfer',
      'wire',
      'sepa',
      'bic',
      'swift',
      'konto',
      'bankverbindung',
      'compte',
      'cuenta',
      'conto',
    ],
  };

  analyze(text: string, out: Candidate[]): void {
    CANDIDATE.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = CANDIDATE.exec(text)) !== null) {
      const raw = match[0];
      const country = raw.slice(0, 2);
      const length = IBAN_LENGTHS[country.toUpperCase()];
      const end = length === undefined ? -1 : endOfIban(raw, length);
      if (end === -1) {
        CANDIDATE.lastIndex = match.index + 1;
        continue;
      }
      const written = raw.slice(0, end).replace(/[^A-Za-z0-9]/g, '');
      const compact = written.toUpperCase();
      const next = text.charCodeAt(match.index + end);
      const atBoundary = Number.isNaN(next) || !isAlnum(next);
      const bbanDigits = compact.slice(4).replace(/\D/g, '').length;
      // One case throughout: "is 5442-1589-1118-1411. Answer in" is a sentence, not an IBAN.
      if (
        atBoundary &&
        sameCase(written) &&
        bbanDigits >= MIN_DIGIT_SHARE * (compact.length - 4) &&
        ibanChecksumValid(compact)
      ) {
        out.push({
          entity: 'IBAN_CODE',
          start: match.index,
          end: match.index + end,
          score: 1,
          key: compact,
          recognizer: this.name,
        });
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
    if (isAlnum(raw.charCodeAt(i))) count++;
    if (count === length) return i + 1;
  }
  return -1;
}

function sameCase(value: string): boolean {
  return value === value.toUpperCase() || value === value.toLowerCase();
}

function isAlnum(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
