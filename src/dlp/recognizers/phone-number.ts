import { ContextScorer } from '../context-scoring.ts';
import { CONTEXT_BOOST, type Candidate, type ContextRule, type Recognizer } from '../recognizer.ts';
import { internationalE164, nationalE164, phonePlan, type PhonePlan } from '../validators/phone-plans.ts';
import { columnHeaderHas } from './column-header.ts';
import { PHONE_CONTEXT } from './phone-context.ts';

/** Options of {@link PhoneNumberRecognizer}. */
export interface PhoneNumberRecognizerOptions {
  /**
   * Regions (ISO 3166 alpha-2) whose national formats are tried for numbers
   * written without a `+`/`00` country code; numbers with one are validated
   * for every country; an empty list means the default too.
   * @defaultValue {@link DEFAULT_PHONE_REGIONS}
   */
  regions?: readonly string[];
}

/** North American Numbering Plan regions: their numbers never start with a trunk 0. */
const NANP = new Set([
  'US',
  'CA',
  'AG',
  'AI',
  'AS',
  'BB',
  'BM',
  'BS',
  'DM',
  'DO',
  'GD',
  'GU',
  'JM',
  'KN',
  'KY',
  'LC',
  'MP',
  'MS',
  'PR',
  'SX',
  'TC',
  'TT',
  'VC',
  'VG',
  'VI',
]);

/** The 20 most populous countries, the EU members, the United Kingdom and Canada (which shares the US layout). */
export const DEFAULT_PHONE_REGIONS: readonly string[] = [
  'US',
  'IN',
  'CN',
  'ID',
  'PK',
  'NG',
  'BR',
  'BD',
  'RU',
  'ET',
  'MX',
  'JP',
  'EG',
  'PH',
  'CD',
  'VN',
  'IR',
  'TR',
  'DE',
  'TH',
  'GB',
  'FR',
  'IT',
  'ES',
  'PL',
  'RO',
  'NL',
  'BE',
  'CZ',
  'GR',
  'PT',
  'SE',
  'HU',
  'AT',
  'BG',
  'DK',
  'FI',
  'SK',
  'IE',
  'HR',
  'LT',
  'SI',
  'LV',
  'EE',
  'CY',
  'LU',
  'MT',
  'CA',
];

/**
 * A run of digits with the separators people type between groups (space, dot,
 * dash, slash, parentheses), optionally after `+`. Bounded, so a scan is
 * linear; which part of it is a number is decided by parsing. What may come
 * before it is checked in code ({@link startsNumber}): lookbehinds here would
 * cost a check at every character of the text.
 */
const CHUNK = /[+(\d][\d ()./-]{4,24}\d\)?/g;
const LEADING_RUN = /^[+(]?\d+/;
const EXTENSION = /[ ,]*(?:x|ext\.?|extension|durchwahl|poste|#) ?\d{1,6}(?![\w])/iy;
const AFTER_OK = /(?![\w]|[.,-]\d)/y;
const NANP_SHAPE = /^(?:\+?1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;

/** Layouts of other numbers that a region's numbering plan could accept. */
const NOT_PHONES = [
  /^\d{3}([- ])\d{2}\1\d{4}$/, // US SSN
  /^\d{5}-\d{4}$/, // ZIP+4
  /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$/, // ISO date
  /^\d{1,2}[-./]\d{1,2}[-./](?:\d{2}|\d{4})$/, // day-month-year
  /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/, // IPv4
  /^\d{1,3}(?:[.,]\d{3})+$/, // 1.234.567 amounts
  /^\d{4}\.\d{2}\.\d{3}$/, // build numbers
  /^\d+[.,]\d{1,2}$/, // decimals
  /^\d(?: \d{3})+$/, // 1 234 567 amounts
  /^756\.\d{4}\.\d{4}\.\d{2}$/, // Swiss social security (AHV/AVS) numbers
];
/** Card layouts: a number printed like a card is not a phone number, nor is any prefix of it. */
const CARD_LAYOUT = /^\d{4}([ .-])(?:\d{4}\1\d{4}\1\d{1,4}|\d{6}\1\d{4,5})$/;

const FORMATTED_SCORE = 0.85;
const NATIONAL_SCORE = 0.6;
const BARE_SCORE = 0.5;
/** Digits without `+` that form a valid international number (`447911123456`): as likely a phone as a national number without its trunk 0. */
const BARE_INTERNATIONAL_SCORE = 0.6;
const MAX_TRIMS = 3;
const MEMO_SIZE = 4096;

/**
 * Phone numbers. One bounded pattern finds digit runs with separators; each
 * is parsed and validated with libphonenumber's metadata (libphonenumber-js,
 * "max" set: valid ranges per country, not just lengths), trimming trailing
 * groups that do not belong to it; an extension (`x123`, `ext. 12`) is part
 * of the span.
 *
 * Scores: a valid international number (`+…`, `00…`), a North American
 * layout, or a national number with its trunk prefix (`0…`) 0.85; a national
 * number without one (`612 34 56 78`) 0.6, and only with a phone word nearby
 * (the context then lifts it), since such layouts match many other numbers;
 * a bare 10-11 digit run 0.5. Dates, amounts, SSN and ZIP+4 layouts are never numbers.
 */
export class PhoneNumberRecognizer implements Recognizer {
  readonly name = 'phone-number';
  readonly entities = ['PHONE_NUMBER'] as const;
  readonly context: ContextRule = PHONE_CONTEXT;
  private readonly plans: readonly PhonePlan[];
  private readonly scorer = new ContextScorer(PHONE_CONTEXT);
  private readonly phoneWords: ReadonlySet<string>;
  /**
   * Digit runs already read, and what they were: a conversation re-sends its
   * earlier turns with every request, so most runs were read a moment ago.
   * Bounded, and emptied when full; in memory only, like the request itself.
   */
  private readonly memo = new Map<string, string | null>();

  constructor(options: PhoneNumberRecognizerOptions = {}) {
    const regions = (options.regions && options.regions.length > 0 ? options.regions : DEFAULT_PHONE_REGIONS).map((r) =>
      r.toUpperCase(),
    );
    const unsupported = regions.filter((r) => !phonePlan(r));
    if (unsupported.length > 0)
      throw new RangeError(`phone regions not known to libphonenumber: ${unsupported.join(', ')}`);
    this.plans = regions.map((r) => phonePlan(r)!);
    this.phoneWords = new Set(PHONE_HEADER_WORDS);
  }

  analyze(text: string, out: Candidate[]): void {
    CHUNK.lastIndex = 0;
    let match: RegExpExecArray | null;
    while ((match = CHUNK.exec(text)) !== null) {
      const start = match.index;
      if (!startsNumber(text, start, match[0])) {
        CHUNK.lastIndex = start + Math.max(1, LEADING_RUN.exec(match[0])?.[0].length ?? 1);
        continue;
      }
      const found = this.longestValid(text, start, match[0]);
      if (!found) {
        const nextGroup = match[0].search(/[ ./-]\(?\d/);
        CHUNK.lastIndex = start + (nextGroup > 0 ? nextGroup + 1 : match[0].length);
        continue;
      }
      let end = start + found.length;
      EXTENSION.lastIndex = end;
      const ext = EXTENSION.exec(text);
      if (ext) end += ext[0].length;
      // A column header is context the engine's word window cannot see: it counts like a phone word.
      const score =
        found.score < FORMATTED_SCORE && columnHeaderHas(text, start, this.phoneWords)
          ? found.score + CONTEXT_BOOST
          : found.score;
      out.push({ entity: 'PHONE_NUMBER', start, end, score, key: found.e164, recognizer: this.name });
      CHUNK.lastIndex = end;
    }
  }

  /** The longest prefix of `chunk` (dropping up to {@link MAX_TRIMS} trailing groups) that is a valid number. */
  private longestValid(
    text: string,
    start: number,
    chunk: string,
  ): { length: number; score: number; e164: string } | undefined {
    let value = trimSeparators(chunk);
    while (value.endsWith(')') && count(value, '(') < count(value, ')')) value = value.slice(0, -1);
    let context: boolean | undefined;
    // Reading the words around costs more than the rest; asked at most once per chunk. A table's column header counts as a word nearby.
    const phoneWordNearby = () =>
      (context ??=
        this.scorer.adjust(text, start, start + chunk.length, NATIONAL_SCORE) > NATIONAL_SCORE ||
        columnHeaderHas(text, start, this.phoneWords));
    // No prefix of a card, a date or an address is a phone number either; an extension right after proves a phone.
    EXTENSION.lastIndex = start + value.length;
    const extended = EXTENSION.test(text);
    if (CARD_LAYOUT.test(value) || (!extended && NOT_PHONES.some((shape) => shape.test(value)))) return undefined;
    for (let trims = 0; trims <= MAX_TRIMS; trims++) {
      AFTER_OK.lastIndex = start + value.length;
      // An extension glued on (`415-555-2671x123`) ends the number as well as a space does.
      EXTENSION.lastIndex = start + value.length;
      if (AFTER_OK.test(text) || trims > 0 || EXTENSION.test(text)) {
        // The whole chunk's layout was checked above; a shorter prefix is checked again unless an extension proves it.
        const found = this.validate(value, trims === 0 || extended, phoneWordNearby);
        if (found) return { length: value.length, ...found };
      }
      const cut = Math.max(
        value.lastIndexOf(' '),
        value.lastIndexOf('-'),
        value.lastIndexOf('.'),
        value.lastIndexOf('/'),
      );
      if (cut <= 0) return undefined;
      value = trimSeparators(value.slice(0, cut));
    }
    return undefined;
  }

  private validate(
    value: string,
    layoutChecked: boolean,
    phoneWordNearby: () => boolean,
  ): { score: number; e164: string } | undefined {
    const digits = digitsOf(value);
    if (digits.length < 7 || digits.length > 17) return undefined;
    if (count(value, '(') !== count(value, ')')) return undefined;
    if (!layoutChecked && NOT_PHONES.some((shape) => shape.test(value))) return undefined;
    if (value.startsWith('+') || value.startsWith('00')) {
      const e164 = this.international(digits.slice(value.startsWith('+') ? 0 : 2));
      return e164 ? { score: FORMATTED_SCORE, e164 } : undefined;
    }
    const bare = digits.length === value.length;
    if (bare) {
      // A bare national number needs a full length to be told from an ID ("041363567").
      if (digits.length < 10 || digits.length > 15) return undefined;
      const national =
        digits.length <= 11 ? this.national(digits, digits.startsWith('0') ? 'trunk' : 'any') : undefined;
      if (national) return { score: BARE_SCORE, e164: national };
      // Typed without its `+` (`447911123456`): valid for the region its calling code names.
      const international = digits.length >= 11 && !digits.startsWith('0') ? this.international(digits) : undefined;
      return international ? { score: BARE_INTERNATIONAL_SCORE, e164: international } : undefined;
    }
    if (NANP_SHAPE.test(value)) {
      const e164 = this.national(digits, 'nanp');
      return e164 ? { score: FORMATTED_SCORE, e164 } : undefined;
    }
    if (/^\(?0/.test(value)) {
      const e164 = this.national(digits, 'trunk');
      return e164 ? { score: FORMATTED_SCORE, e164 } : undefined;
    }
    // Without a phone word nearby the score could not reach a threshold anyway.
    if (!phoneWordNearby()) return undefined;
    const e164 = this.national(digits, 'any');
    if (e164) return { score: NATIONAL_SCORE, e164 };
    const international = digits.length >= 11 ? this.international(digits) : undefined;
    return international ? { score: BARE_INTERNATIONAL_SCORE, e164: international } : undefined;
  }

  /**
   * E.164 of the digits read in the national format of the configured
   * regions: with a trunk prefix outside North America ("020 7946 0958"), in
   * a North American layout only there. Reading "(123) 456-7890" as a
   * British number that forgot its 0 is how look-alikes become findings.
   */
  private national(digits: string, kind: 'trunk' | 'nanp' | 'any'): string | undefined {
    return this.remember(`${kind}${digits}`, () => this.readNational(digits, kind));
  }

  private international(digits: string): string | undefined {
    return this.remember(`+${digits}`, () => internationalE164(digits));
  }

  private remember(key: string, read: () => string | undefined): string | undefined {
    const known = this.memo.get(key);
    if (known !== undefined) return known ?? undefined;
    const found = read();
    if (this.memo.size >= MEMO_SIZE) this.memo.clear();
    this.memo.set(key, found ?? null);
    return found;
  }

  private readNational(digits: string, kind: 'trunk' | 'nanp' | 'any'): string | undefined {
    for (const plan of this.plans) {
      const nanp = NANP.has(plan.region);
      if (kind === 'trunk' && nanp) continue;
      if (kind === 'nanp' && !nanp) continue;
      // Read as written, or (`8 (912) 345-67-89`) with a trunk prefix other than 0.
      const e164 =
        nationalE164(plan, digits, kind === 'trunk') ??
        (kind === 'any' && plan.trunk !== undefined && digits.startsWith(plan.trunk)
          ? nationalE164(plan, digits, true)
          : undefined);
      if (e164) return e164;
    }
    return undefined;
  }
}

/** Column headers that announce phone numbers in a table (`| Phone |`, `mobile,`), compared as lower-cased words. */
const PHONE_HEADER_WORDS = [
  'phone',
  'phones',
  'tel',
  'telephone',
  'mobile',
  'cell',
  'fax',
  'telefon',
  'telefono',
  'teléfono',
  'téléphone',
  'telefone',
  'handy',
  'mobil',
  'portable',
  'celular',
  'contact',
  'whatsapp',
  'number',
  'nummer',
  'numéro',
  'número',
];

/**
 * Whether a number may start at `start`: not inside a word or a longer number
 * (`v2.14`, `+1 123…` whose start did not parse), nor a group after digits
 * and a separator (`4111 0605 …`, `1,234`) unless it carries its own `+`.
 */
function startsNumber(text: string, start: number, chunk: string): boolean {
  if (chunk[0] === '(' && !/\d/.test(chunk[1] ?? '')) return false;
  const before = text.slice(Math.max(0, start - 4), start);
  if (/[\w+./-]$/.test(before) || /\d,$/.test(before)) return false;
  return chunk[0] === '+' || !/[\d)][ .-]{1,3}$/.test(before);
}

function count(value: string, char: string): number {
  let n = 0;
  for (let i = value.indexOf(char); i >= 0; i = value.indexOf(char, i + 1)) n++;
  return n;
}

/** The digits of `value`, and nothing else. */
function digitsOf(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 48 && c <= 57) out += value[i];
  }
  return out;
}

/** Drops trailing separators (what `/[ .\/-]+$/` would). */
function trimSeparators(value: string): string {
  let end = value.length;
  while (end > 0 && SEPARATOR_CODES.has(value.charCodeAt(end - 1))) end--;
  return end === value.length ? value : value.slice(0, end);
}

const SEPARATOR_CODES = new Set([32, 46, 47, 45]);
