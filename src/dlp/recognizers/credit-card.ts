import { cardIssuer } from '../validators/card-issuers.ts';
import { luhnValid } from '../validators/luhn.ts';
import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * Payment card numbers: 13-19 digits, plain or grouped with one kind of
 * separator (4-4-4-4, 4-6-5 as printed on Amex cards, 4-4-4-4-3).
 *
 * Scores: Luhn-valid with a known network prefix and length 1.0; Luhn-valid
 * otherwise 0.5 (0.85 with context such as "card"); Luhn-invalid rejected.
 */

// Not inside a longer number or word: no word character or number separator before, none after.
const BEFORE = String.raw`(?<![\w.,+-])`;
const AFTER = String.raw`(?![\w]|[.,-]\d)`;

export function creditCardRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'credit-card',
    entity: 'CREDIT_CARD',
    patterns: [
      {
        // One pass for all layouts: plain, 4-4-4-4(-3) and 4-6-5, one kind of separator per number.
        name: 'card-layouts',
        regex: new RegExp(`${BEFORE}(?:\\d{13,19}|\\d{4}(?:([ -])\\d{4}\\1\\d{4}\\1\\d{1,4}(?:\\1\\d{3})?|([ -])\\d{6}\\2\\d{4,5}))${AFTER}`, 'g'),
        score: 0.3,
      },
    ],
    validate(value) {
      const digits = value.replace(/\D/g, '');
      if (digits.length < 13 || digits.length > 19 || !luhnValid(digits)) return 0;
      return cardIssuer(digits) ? 1 : 0.5;
    },
    normalize: (value) => value.replace(/\D/g, ''),
    context: { positive: ['card*', 'credit', 'debit', 'visa', 'mastercard', 'amex', 'cc', 'pan', 'cardholder'] },
  });
}
