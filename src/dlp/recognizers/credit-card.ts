import { cardIssuer } from '../validators/card-issuers.ts';
import { luhnValid } from '../validators/luhn.ts';
import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * Payment card numbers: 13-19 digits, plain or in groups of 2-8 digits with
 * one kind of separator throughout (a space, two spaces, a dash, a dot,
 * ` - ` or a line break): 4-4-4-4, 4-6-5 as printed on Amex cards, 4-4-8 …
 *
 * Scores: Luhn-valid with a known network prefix and length 1.0; Luhn-valid
 * otherwise 0.5 (0.85 with context such as "card"); Luhn-invalid rejected.
 */

/**
 * Not inside a longer number or word: no word character or number separator
 * before the first digit (checked after it, so the engine only stops at
 * digits), none after the last.
 */
const NOTHING_GLUED_BEFORE = String.raw`(?<![\w.,+-]\d)`;
const AFTER = String.raw`(?![\w]|[.,-]\d)`;
const MIN_DIGITS = 13;
/**
 * Twelve more digits ahead, at most three separator characters apart: what any
 * card match holds. Most digit runs in a text (dates, amounts, phone numbers)
 * fail it at once, where a full match would be built, copied and rejected.
 */
const TWELVE_MORE_DIGITS = String.raw`(?=(?:[ .\r\n-]{0,3}\d){12})`;
/** Groups of digits the expression takes at most: two, then up to five more. */
const MAX_GROUPS = 7;

export function creditCardRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'credit-card',
    entity: 'CREDIT_CARD',
    patterns: [
      {
        // One pass for all layouts; the digit count and the checksum decide, not the grouping. The first digit is
        // matched before the rest: 13-19 digits, or a group of 2-8 and then more groups.
        name: 'card-layouts',
        regex: new RegExp(
          `\\d${NOTHING_GLUED_BEFORE}${TWELVE_MORE_DIGITS}(?:\\d{12,18}|\\d{1,7}( - | {1,2}|[.-]|\\r?\\n)\\d{2,8}(?:\\1\\d{1,8}){0,5})${AFTER}`,
          'g',
        ),
        score: 0.3,
      },
    ],
    validate(value) {
      // Most matches in a text full of numbers are dates and phone numbers: counted before anything is copied.
      const count = digitCount(value);
      if (count < MIN_DIGITS || count > 19) return 0;
      const digits = value.replace(/\D/g, '');
      if (digits.length < MIN_DIGITS || digits.length > 19 || !luhnValid(digits)) return 0;
      return cardIssuer(digits) ? 1 : 0.5;
    },
    normalize: (value) => value.replace(/\D/g, ''),
    resumeAfterRejected: (value) => (digitCount(value) < MIN_DIGITS ? lastGroupIfNoneBefore(value) : undefined),
    context: { positive: ['card*', 'credit', 'debit', 'visa', 'mastercard', 'amex', 'cc', 'pan', 'cardholder'] },
  });
}

function digitCount(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

/**
 * Where the last group of a match with too few digits starts, when no match
 * could start at an earlier one: from any group but the last, the same
 * separator follows, so the run ends where this match ended and holds fewer
 * digits still; the last group may be followed by another separator and
 * start a card. Undefined when the match stopped at the expression's
 * seventh group, since a later start could then run on past it.
 */
function lastGroupIfNoneBefore(value: string): number | undefined {
  let groups = 0;
  let lastStart = 0;
  for (let i = 0; i < value.length; i++) {
    if (isDigit(value.charCodeAt(i)) && (i === 0 || !isDigit(value.charCodeAt(i - 1)))) {
      groups++;
      lastStart = i;
    }
  }
  return groups < MAX_GROUPS ? lastStart : undefined;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
