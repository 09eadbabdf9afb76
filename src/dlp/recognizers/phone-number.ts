import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode, type PhoneNumber } from 'libphonenumber-js/max';
import type { Candidate, ContextRule, Recognizer } from '../recognizer.ts';

/** Options of {@link PhoneNumberRecognizer}. */
export interface PhoneNumberRecognizerOptions {
  /**
   * Regions (ISO 3166 alpha-2) tried, in order, for numbers written without
   * a `+` country code. Numbers with `+` are validated for every country.
   * Each region costs one parse per national-format candidate. Default (also
   * when empty) US, GB, DE, FR.
   */
  regions?: readonly string[];
}

/** North American Numbering Plan regions: their numbers never start with a trunk 0. */
const NANP = new Set(['US', 'CA', 'AG', 'AI', 'AS', 'BB', 'BM', 'BS', 'DM', 'DO', 'GD', 'GU', 'JM', 'KN', 'KY', 'LC', 'MP', 'MS', 'PR', 'SX', 'TC', 'TT', 'VC', 'VG', 'VI']);

export const DEFAULT_PHONE_REGIONS: readonly string[] = ['US', 'GB', 'DE', 'FR'];

interface PhonePattern {
  name: string;
  regex: RegExp;
  /** Whether trailing digit groups may be dropped when the whole match does not parse ("+1 415 555 2671 2023"). */
  trim: boolean;
}

const AFTER = String.raw`(?![\w]|[.-]\d)`;
// Not the tail of an international number whose whole did not parse ("+1 123 456 7890"),
// nor a group inside a longer digit run ("6569-0605-6418-3506", "4111 0605 …").
const NOT_INSIDE = String.raw`(?<!\+\d{1,3}[ .-]?)(?<![\w+(.,/-])(?<![\d)] )`;
const PATTERNS: readonly PhonePattern[] = [
  { name: 'international', regex: new RegExp(`(?<![\\w+])\\+[1-9]\\d{0,2}(?:[ .-]?(?:\\(\\d{1,4}\\)|\\d{1,5})){1,6}${AFTER}`, 'g'), trim: true },
  { name: 'nanp', regex: new RegExp(`${NOT_INSIDE}(?:1[ .-])?(?:\\(\\d{3}\\) ?|\\d{3}[ .-])\\d{3}[ .-]\\d{4}${AFTER}`, 'g'), trim: false },
  { name: 'trunk-prefix', regex: new RegExp(`${NOT_INSIDE}(?:\\(0\\d{1,4}\\)|0\\d{1,4})(?:[ .-]?\\d{2,4}){2,4}${AFTER}`, 'g'), trim: true },
  { name: 'bare', regex: new RegExp(`${NOT_INSIDE}[1-9]\\d{9,10}(?![\\w]|[.,-]\\d)`, 'g'), trim: false },
];

const SSN_SHAPE = /^\d{3}([- ])\d{2}\1\d{4}$/;
const ZIP4_SHAPE = /^\d{5}-\d{4}$/;
const FORMATTED_SCORE = 0.85;
const BARE_SCORE = 0.5;
const MAX_TRIMS = 2;

/**
 * Phone numbers. Cheap patterns find candidates (international `+…`, North
 * American `(415) 555-2671`, national numbers with a trunk 0 such as
 * `020 7946 0958`, bare 10-11 digit runs); each candidate is then parsed and
 * validated with libphonenumber's metadata (libphonenumber-js, "max" set:
 * valid number ranges per country, not just lengths).
 *
 * Scores: a valid number written as a phone number (with `+`, separators or
 * parentheses) 0.85; a valid bare digit run 0.5, since order and account
 * numbers look the same, lifted to 0.85 by words such as "phone" or "call";
 * words such as "order" or "invoice" take 0.35 off. Invalid numbers are rejected.
 */
export class PhoneNumberRecognizer implements Recognizer {
  readonly name = 'phone-number';
  readonly entities = ['PHONE_NUMBER'] as const;
  readonly context: ContextRule = {
    positive: ['phone*', 'tel', 'telephone', 'mobile', 'cell*', 'call*', 'fax', 'whatsapp', 'sms', 'text*', 'contact*', 'reach', 'dial*', 'ph', 'mob', 'landline'],
    negative: ['order*', 'invoice*', 'ref', 'reference', 'tracking', 'account*', 'acct', 'id', 'isbn', 'sku', 'serial', 'case', 'ticket*', 'po', 'transaction*', 'confirmation', 'booking'],
  };
  private readonly regions: readonly CountryCode[];

  constructor(options: PhoneNumberRecognizerOptions = {}) {
    const regions = (options.regions && options.regions.length > 0 ? options.regions : DEFAULT_PHONE_REGIONS).map((r) => r.toUpperCase());
    const unsupported = regions.filter((r) => !isSupportedCountry(r));
    if (unsupported.length > 0) throw new RangeError(`phone regions not known to libphonenumber: ${unsupported.join(', ')}`);
    this.regions = regions as CountryCode[];
  }

  analyze(text: string, out: Candidate[]): void {
    for (const pattern of PATTERNS) {
      const regex = pattern.regex;
      regex.lastIndex = 0;
      let match: RegExpExecArray | null;
      while ((match = regex.exec(text)) !== null) {
        const found = this.validate(match[0], pattern);
        if (found) {
          const start = match.index;
          const end = start + found.length;
          const score = /[+()\s.-]/.test(found.value) ? FORMATTED_SCORE : BARE_SCORE;
          out.push({ entity: 'PHONE_NUMBER', start, end, score, key: found.e164, recognizer: this.name });
          if (end < match.index + match[0].length) regex.lastIndex = end;
        } else {
          regex.lastIndex = match.index + 1;
        }
      }
    }
  }

  /** The valid number at the start of `value` (trimming trailing groups if allowed), or undefined. */
  private validate(value: string, pattern: PhonePattern): { value: string; length: number; e164: string } | undefined {
    let candidate = value;
    for (let trims = 0; trims <= (pattern.trim ? MAX_TRIMS : 0); trims++) {
      const phone = this.parse(candidate);
      if (phone) return { value: candidate, length: candidate.length, e164: phone.number };
      const cut = Math.max(candidate.lastIndexOf(' '), candidate.lastIndexOf('-'), candidate.lastIndexOf('.'));
      if (cut <= 0) return undefined;
      candidate = candidate.slice(0, cut);
    }
    return undefined;
  }

  private parse(value: string): PhoneNumber | undefined {
    const digits = value.replace(/\D/g, '').length;
    if (digits < 7 || digits > 15) return undefined;
    // 3-2-4 (dashes or spaces) and 5-4 are how SSNs and ZIP+4 codes are written;
    // German numbering, with its variable lengths, would accept many of them.
    if (SSN_SHAPE.test(value) || ZIP4_SHAPE.test(value)) return undefined;
    // A bare national number needs a full length to be told from an ID ("041363567").
    if (digits < 10 && /^\d+$/.test(value)) return undefined;
    if (value.startsWith('+')) {
      const phone = parsePhoneNumberFromString(value);
      return phone?.isValid() ? phone : undefined;
    }
    // Without "+", a number is read in the national format of the configured
    // regions: with the trunk 0 outside North America ("020 7946 0958"),
    // without it inside ("(415) 555-2671"). Parsing "(123) 456-7890" as a
    // British number that forgot its 0 is how look-alikes become findings.
    const trunk = /^\(?0/.test(value);
    for (const region of this.regions) {
      if (trunk === NANP.has(region)) continue;
      const phone = parsePhoneNumberFromString(value, region);
      if (phone?.isValid()) return phone;
    }
    return undefined;
  }
}
