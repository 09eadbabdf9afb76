/**
 * Issuer identification (IIN ranges and lengths) of the major card networks.
 * A Luhn-valid number outside these ranges is still reported, with a lower
 * score: one random digit string in ten passes Luhn, far fewer also start
 * like a real card and have its network's length.
 */
interface Issuer {
  name: string;
  /** Inclusive prefix ranges, compared on the first `digits` digits. */
  ranges: ReadonlyArray<readonly [low: number, high: number]>;
  lengths: readonly number[];
}

const ISSUERS: readonly Issuer[] = [
  { name: 'visa', ranges: [[4, 4]], lengths: [13, 16, 19] },
  {
    name: 'mastercard',
    ranges: [
      [51, 55],
      [2221, 2720],
    ],
    lengths: [16],
  },
  {
    name: 'amex',
    ranges: [
      [34, 34],
      [37, 37],
    ],
    lengths: [15],
  },
  {
    name: 'discover',
    ranges: [
      [6011, 6011],
      [644, 649],
      [65, 65],
      [622126, 622925],
    ],
    lengths: [16, 17, 18, 19],
  },
  { name: 'jcb', ranges: [[3528, 3589]], lengths: [16, 17, 18, 19] },
  {
    name: 'diners',
    ranges: [
      [300, 305],
      [36, 36],
      [38, 39],
    ],
    lengths: [14, 15, 16, 17, 18, 19],
  },
  { name: 'unionpay', ranges: [[62, 62]], lengths: [16, 17, 18, 19] },
  {
    name: 'maestro',
    ranges: [
      [5018, 5018],
      [5020, 5020],
      [5038, 5038],
      [5893, 5893],
      [6304, 6304],
      [6759, 6759],
      [6761, 6763],
    ],
    lengths: [13, 14, 15, 16, 17, 18, 19],
  },
  { name: 'mir', ranges: [[2200, 2204]], lengths: [16, 17, 18, 19] },
];

/** The card network a number belongs to by prefix and length, if any. */
export function cardIssuer(digits: string): string | undefined {
  for (const issuer of ISSUERS) {
    if (!issuer.lengths.includes(digits.length)) continue;
    for (const [low, high] of issuer.ranges) {
      const width = String(low).length;
      const prefix = Number(digits.slice(0, width));
      if (prefix >= low && prefix <= high) return issuer.name;
    }
  }
  return undefined;
}
