import { ContextScorer } from '../context-scoring.ts';
import { CONTEXT_BOOST, type Candidate, type ContextRule, type Recognizer } from '../recognizer.ts';
import {
  internationalE164,
  nationalE164,
  phonePlan,
  possibleInternational,
  type PhonePlan,
} from '../validators/phone-plans.ts';
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
const EXTENSION = /[ ,]*(?:x|ext\.?|extension|durchwahl|poste|#) ?\d{1,6}(?![\w])/iy;
const NANP_SHAPE = /^(?:\+?1[ .-])?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;
/**
 * Layouts of other numbers that a region's numbering plan could accept.
 * Tested as one expression ({@link NOT_PHONE}), so only the first may hold a
 * capturing group: the union numbers groups across the alternatives.
 */
const NOT_PHONES = [
  /^\d{3}([- ])\d{2}\1\d{4}$/, // US SSN
  /^\d{5}-\d{4}$/, // ZIP+4
  /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$/, // ISO date
  /^\d{1,2}[-./]\d{1,2}[-./](?:\d{2}|\d{4})$/, // day-month-year
  /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)$/, // IPv4
  /^\d{1,3}(?:[.,]\d{3})+$/, // 1.234.567 amounts
  /^\d{4}\.\d{2}\.\d{3}$/, // build numbers
  /^\d+[.,]\d{1,2}$/, // decimals
  /^(?:\d+ )?0[.,]\d+$/, // a fraction under one (0.8146392017), also after another number
  /^\d(?: \d{3})+$/, // 1 234 567 amounts
  /^756\.\d{4}\.\d{4}\.\d{2}$/, // Swiss social security (AHV/AVS) numbers
];
/** {@link NOT_PHONES} in one expression: one test per value instead of ten. */
const NOT_PHONE = new RegExp(`^(?:${NOT_PHONES.map((shape) => shape.source.slice(1, -1)).join('|')})$`);
/** Card layouts: a number printed like a card is not a phone number, nor is any prefix of it. */
const CARD_LAYOUT = /^\d{4}([ .-])(?:\d{4}\1\d{4}\1\d{1,4}|\d{6}\1\d{4,5})$/;

const FORMATTED_SCORE = 0.85;
const NATIONAL_SCORE = 0.6;
const BARE_SCORE = 0.5;
/** Digits without `+` that form a valid international number (`447911123456`): as likely a phone as a national number without its trunk 0. */
const BARE_INTERNATIONAL_SCORE = 0.6;
const MAX_TRIMS = 3;
const MIN_DIGITS = 7;
const MAX_DIGITS = 17;
const MEMO_SIZE = 1024;

/** How a national number is read: with its trunk prefix, in a North American layout, or as written. */
type NationalKind = 'trunk' | 'nanp' | 'any';

function remember(memo: Map<string, string | null>, digits: string, found: string | undefined): string | undefined {
  if (memo.size >= MEMO_SIZE) memo.clear();
  memo.set(digits, found ?? null);
  return found;
}

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
 * a bare 10-11 digit run 0.5. A number in an international or North American
 * layout whose range is not assigned (or not in this release's metadata) but
 * whose length its country's numbers have is 0.85 when written with `+` in
 * groups, and otherwise 0.6 too, and only with a phone word nearby. Dates,
 * amounts, SSN and ZIP+4 layouts are never numbers.
 */
export class PhoneNumberRecognizer implements Recognizer {
  readonly name = 'phone-number';
  readonly entities = ['PHONE_NUMBER'] as const;
  readonly context: ContextRule = PHONE_CONTEXT;
  private readonly plans: readonly PhonePlan[];
  private readonly scorer = new ContextScorer(PHONE_CONTEXT);
  private readonly phoneWords: ReadonlySet<string>;
  /** The chunk being read, and whether a phone word is near it once asked ({@link phoneWordNearby}); refilled per chunk. */
  private readonly nearby: { text: string; start: number; end: number; answer: boolean | undefined } = {
    text: '',
    start: 0,
    end: 0,
    answer: undefined,
  };
  /**
   * Digit runs already read, and what they were: a conversation re-sends its
   * earlier turns with every request, so most runs were read a moment ago.
   * One map per way of reading them; each bounded, and emptied when full; in
   * memory only, like the request itself.
   */
  private readonly memo: Record<NationalKind | 'international', Map<string, string | null>> = {
    trunk: new Map(),
    nanp: new Map(),
    any: new Map(),
    international: new Map(),
  };

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
      const chunk = match[0];
      if (!startsNumber(text, start, chunk)) {
        CHUNK.lastIndex = start + leadingRunLength(chunk);
        continue;
      }
      const found = this.longestValid(text, start, chunk);
      if (!found) {
        const nextGroup = nextGroupAt(chunk);
        CHUNK.lastIndex = start + (nextGroup > 0 ? nextGroup + 1 : chunk.length);
        continue;
      }
      let end = start + found.length;
      const ext = extensionLength(text, end);
      if (ext > 0) end += ext;
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
    const nearby = this.nearby;
    nearby.text = text;
    nearby.start = start;
    nearby.end = start + chunk.length;
    nearby.answer = undefined;
    // No prefix of a card, a date or an address is a phone number either, nor one in parentheses (`(2025-01-16)`); an
    // extension right after proves a phone.
    const extended = extensionLength(text, start + value.length) > 0;
    const layout =
      value.charCodeAt(0) === OPEN && value.charCodeAt(value.length - 1) === CLOSE ? value.slice(1, -1) : value;
    // Both layouts start with a digit, and most chunks that do not are numbers with `+` or `(`.
    if (isDigit(layout.charCodeAt(0)) && (CARD_LAYOUT.test(layout) || (!extended && NOT_PHONE.test(layout))))
      return undefined;
    for (let trims = 0; trims <= MAX_TRIMS; trims++) {
      const after = start + value.length;
      // An extension glued on (`415-555-2671x123`) ends the number as well as a space does.
      if (trims > 0 || endsNumber(text, after) || extensionLength(text, after) > 0) {
        // The whole chunk's layout was checked above; a shorter prefix is checked again unless an extension proves it.
        const found = this.validate(value, trims === 0 || extended);
        if (found) return { length: value.length, score: found.score, e164: found.e164 };
      }
      const cut = lastSeparator(value);
      if (cut <= 0) return undefined;
      value = trimSeparators(value.slice(0, cut));
    }
    return undefined;
  }

  /**
   * Whether a phone word, or a table's column header, is near the chunk
   * being read: reading the words around costs more than the rest, so it is
   * asked at most once per chunk, only when the answer matters, and after
   * the header (read once per line, and enough for a row of a phone column).
   */
  private phoneWordNearby(): boolean {
    const nearby = this.nearby;
    return (nearby.answer ??=
      columnHeaderHas(nearby.text, nearby.start, this.phoneWords) ||
      this.scorer.adjust(nearby.text, nearby.start, nearby.end, NATIONAL_SCORE) > NATIONAL_SCORE);
  }

  private validate(value: string, layoutChecked: boolean): { score: number; e164: string } | undefined {
    const shape = shapeOf(value);
    if (shape.digits < MIN_DIGITS || shape.digits > MAX_DIGITS) return undefined;
    if (shape.opens !== shape.closes) return undefined;
    if (!layoutChecked && NOT_PHONE.test(value)) return undefined;
    const digits = shape.digits === value.length ? value : digitsOf(value);
    const first = value.charCodeAt(0);
    if (first === PLUS || (first === ZERO && value.charCodeAt(1) === ZERO)) {
      const international = first === PLUS ? digits : digits.slice(2);
      const e164 = this.international(international);
      if (e164) return { score: FORMATTED_SCORE, e164 };
      // Written in groups as a phone number, of a length its country's numbers have, in a range not assigned (or not
      // known to this release's metadata): with `+`, written as nothing but a phone number; with `00`, a phone
      // number where a phone word says so.
      const grouped = value.length > digits.length + (first === PLUS ? 1 : 0);
      if (!grouped || !possibleInternational(international)) return undefined;
      if (first === PLUS) return { score: FORMATTED_SCORE, e164: `+${international}` };
      return this.phoneWordNearby() ? { score: NATIONAL_SCORE, e164: `+${international}` } : undefined;
    }
    const bare = digits.length === value.length;
    if (bare) {
      // A bare national number needs a full length to be told from an ID ("041363567").
      if (digits.length < 10 || digits.length > 15) return undefined;
      const national = digits.length <= 11 ? this.national(digits, first === ZERO ? 'trunk' : 'any') : undefined;
      if (national) return { score: BARE_SCORE, e164: national };
      // Typed without its `+` (`447911123456`): valid for the region its calling code names.
      const international = digits.length >= 11 && first !== ZERO ? this.international(digits) : undefined;
      return international ? { score: BARE_INTERNATIONAL_SCORE, e164: international } : undefined;
    }
    if (NANP_SHAPE.test(value)) {
      const e164 = this.national(digits, 'nanp');
      if (e164) return { score: FORMATTED_SCORE, e164 };
      const international = `1${digits.slice(-10)}`;
      return possibleInternational(international) && this.phoneWordNearby()
        ? { score: NATIONAL_SCORE, e164: `+${international}` }
        : undefined;
    }
    if (first === ZERO || (first === OPEN && value.charCodeAt(1) === ZERO)) {
      const e164 = this.national(digits, 'trunk');
      return e164 ? { score: FORMATTED_SCORE, e164 } : undefined;
    }
    // Without a phone word nearby the score could not reach a threshold anyway.
    if (!this.phoneWordNearby()) return undefined;
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
  private national(digits: string, kind: NationalKind): string | undefined {
    const memo = this.memo[kind];
    const known = memo.get(digits);
    if (known !== undefined) return known ?? undefined;
    return remember(memo, digits, this.readNational(digits, kind));
  }

  private international(digits: string): string | undefined {
    const known = this.memo.international.get(digits);
    if (known !== undefined) return known ?? undefined;
    return remember(this.memo.international, digits, internationalE164(digits));
  }

  private readNational(digits: string, kind: NationalKind): string | undefined {
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
  'telefoon',
  'telefono',
  'teléfono',
  'téléphone',
  'telefone',
  'handy',
  'mobil',
  'mobiel',
  'portable',
  'celular',
  'contact',
  'whatsapp',
  'number',
  'nummer',
  'numéro',
  'número',
];

const PLUS = 43;
const ZERO = 48;
const OPEN = 40;
const CLOSE = 41;
const COMMA = 44;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** A space, a dot, a slash or a dash: what separates the groups of a number. */
function isSeparator(c: number): boolean {
  return c === 32 || c === 46 || c === 47 || c === 45;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** `[\w+./-]`: a character that glues whatever follows to a word or a longer number. */
function gluesOn(c: number): boolean {
  return isDigit(c) || isAsciiLetter(c) || c === 95 || c === PLUS || c === 46 || c === 47 || c === 45;
}

/**
 * Whether a number may start at `start`: not inside a word or a longer number
 * (`v2.14`, `+1 123…` whose start did not parse), nor a group after digits
 * and a separator (`4111 0605 …`, `1,234`) unless it carries its own `+`,
 * which may follow a word or a comma (`Phone+1 …`, `…-1198,+1 …`).
 * Reads at most four characters back, in place.
 */
function startsNumber(text: string, start: number, chunk: string): boolean {
  if (chunk.charCodeAt(0) === OPEN && !isDigit(chunk.charCodeAt(1))) return false;
  if (start === 0) return true;
  const before = text.charCodeAt(start - 1);
  if (chunk.charCodeAt(0) === PLUS) return !gluesOn(before) || isAsciiLetter(before);
  if (gluesOn(before)) return false;
  if (start >= 2 && before === COMMA && isDigit(text.charCodeAt(start - 2))) return false;
  // A digit or `)` and one to three spaces, dots or dashes, all within the four characters before.
  const floor = Math.max(0, start - 4);
  let i = start;
  while (i > floor && start - i < 3 && isSpaceDotOrDash(text.charCodeAt(i - 1))) i--;
  if (i === start || i === floor) return true;
  const c = text.charCodeAt(i - 1);
  return !(isDigit(c) || c === CLOSE);
}

function isSpaceDotOrDash(c: number): boolean {
  return c === 32 || c === 46 || c === 45;
}

/** Whether a number may end at `position` (what `(?![\w]|[.,-]\d)` asserts): no word character, no decimal or group after it. */
function endsNumber(text: string, position: number): boolean {
  const c = text.charCodeAt(position);
  if (isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95) return false;
  return !((c === 46 || c === COMMA || c === 45) && isDigit(text.charCodeAt(position + 1)));
}

/** Length of the extension (`x123`, ` ext. 12`) at `position`, 0 if none; the expression runs only where one could start. */
function extensionLength(text: string, position: number): number {
  let i = position;
  let c = text.charCodeAt(i);
  while (c === 32 || c === COMMA) c = text.charCodeAt(++i);
  // x, e(xt), d(urchwahl), p(oste) in either case, or #.
  const lower = c | 0x20;
  if (c !== 35 && lower !== 120 && lower !== 101 && lower !== 100 && lower !== 112) return 0;
  EXTENSION.lastIndex = position;
  const ext = EXTENSION.exec(text);
  return ext ? ext[0].length : 0;
}

/** Where the scan resumes after a chunk that cannot start a number: past its leading digits (what `/^[+(]?\d+/` matches), else one character on. */
function leadingRunLength(chunk: string): number {
  const first = chunk.charCodeAt(0);
  let i = first === PLUS || first === OPEN ? 1 : 0;
  const digitsFrom = i;
  while (i < chunk.length && isDigit(chunk.charCodeAt(i))) i++;
  return i > digitsFrom ? i : 1;
}

/** Index of the first separator before another group (what `/[ ./-]\(?\d/` finds), or -1. */
function nextGroupAt(chunk: string): number {
  for (let i = 0; i < chunk.length - 1; i++) {
    if (!isSeparator(chunk.charCodeAt(i))) continue;
    const next = chunk.charCodeAt(i + 1);
    if (isDigit(next) || (next === OPEN && isDigit(chunk.charCodeAt(i + 2)))) return i;
  }
  return -1;
}

/** Index of the last space, dash, dot or slash in `value`, or -1. */
function lastSeparator(value: string): number {
  let i = value.length - 1;
  while (i >= 0 && !isSeparator(value.charCodeAt(i))) i--;
  return i;
}

function count(value: string, char: string): number {
  let n = 0;
  for (let i = value.indexOf(char); i >= 0; i = value.indexOf(char, i + 1)) n++;
  return n;
}

/** Digits and parentheses of a value, counted in one pass; one object reused, since a scan is synchronous. */
const SHAPE = { digits: 0, opens: 0, closes: 0 };

function shapeOf(value: string): typeof SHAPE {
  let digits = 0;
  let opens = 0;
  let closes = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (isDigit(c)) digits++;
    else if (c === OPEN) opens++;
    else if (c === CLOSE) closes++;
  }
  SHAPE.digits = digits;
  SHAPE.opens = opens;
  SHAPE.closes = closes;
  return SHAPE;
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
  while (end > 0 && isSeparator(value.charCodeAt(end - 1))) end--;
  return end === value.length ? value : value.slice(0, end);
}
