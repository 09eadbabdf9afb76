import { ssnValid } from '../validators/us-ssn.ts';
import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * US Social Security numbers. There is no checksum, so the format carries
 * the confidence: 3-2-4 with dashes is the way SSNs are written (0.85), with
 * spaces less so (0.6), nine bare digits could be anything (0.45). Context
 * such as "SSN" adds 0.35; words such as "order" or "part" take it away.
 * Numbers that break the SSA's rules (area 000/666/9xx, group 00, serial
 * 0000, known samples) are rejected.
 */

const BEFORE = String.raw`(?<![\w.,+-])`;
const AFTER = String.raw`(?![\w]|[.,-]\d)`;
const DASHED = 0.85;
const SPACED = 0.6;
const BARE = 0.45;

export function usSsnRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'us-ssn',
    entity: 'US_SSN',
    patterns: [
      { name: 'ssn-layouts', regex: new RegExp(`${BEFORE}\\d{3}([- ]?)\\d{2}\\1\\d{4}${AFTER}`, 'g'), score: DASHED },
    ],
    validate(value) {
      if (!ssnValid(value.replace(/\D/g, ''))) return 0;
      return value.includes('-') ? DASHED : value.includes(' ') ? SPACED : BARE;
    },
    normalize: (value) => value.replace(/\D/g, ''),
    context: {
      positive: ['ssn*', 'social', 'ss', 'tin', 'taxpayer'],
      negative: [
        'order*',
        'invoice*',
        'part',
        'sku',
        'serial',
        'tracking',
        'ticket*',
        'ref*',
        'isbn',
        'model',
        'zip*',
        'routing',
        'aba',
        'account*',
        'acct',
      ],
    },
  });
}
