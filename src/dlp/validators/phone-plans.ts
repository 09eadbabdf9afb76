import { Metadata, type MetadataJson } from 'libphonenumber-js/core';
import metadataJson from 'libphonenumber-js/metadata.max.json';

/**
 * Phone number validation from Google's libphonenumber metadata ("max" set,
 * as libphonenumber-js ships it), compiled once per region into two regular
 * expressions, so checking a digit run is one `RegExp.test` per region
 * instead of a full parse: parsing every digit run with libphonenumber-js
 * cost about 20 µs a region, and a national number may be tried in forty
 * regions. A number is valid for a region when its national significant
 * number has one of the region's possible lengths and matches one of its
 * number types (fixed line, mobile, toll free …), which is what
 * libphonenumber's `isValid()` checks; national prefixes are stripped or
 * rewritten (Argentina's `15`, Brazil's carrier codes) by the metadata's own
 * parsing rules. test/dlp/phone-plans.test.ts compares it with
 * libphonenumber-js' `isValid()`.
 */

/** The members of libphonenumber-js' numbering plan object this module reads (its typings declare fewer). */
interface PlanView {
  callingCode(): string;
  nationalPrefix(): string | undefined;
  nationalPrefixForParsing(): string | undefined;
  nationalPrefixTransformRule(): string | undefined;
  possibleLengths(): number[];
  type(name: string): { pattern(): string | undefined; possibleLengths(): number[] | undefined } | undefined;
}
interface MetadataView {
  selectNumberingPlan(country: string): void;
  numberingPlan: PlanView;
}

const NUMBER_TYPES = [
  'FIXED_LINE',
  'MOBILE',
  'TOLL_FREE',
  'PREMIUM_RATE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
];

/** One region's rules. */
export interface PhonePlan {
  readonly region: string;
  readonly callingCode: string;
  /** The trunk prefix of national numbers (`0`, `8` in Russia), if the region has one. */
  readonly trunk: string | undefined;
  /** What parsing strips (or, with `transform`, rewrites) before a national number: the trunk prefix, sometimes a carrier code. */
  readonly prefix: RegExp | undefined;
  readonly transform: string | undefined;
  readonly lengths: ReadonlySet<number>;
  readonly valid: RegExp;
}

const metadata = metadataJson as unknown as MetadataJson & {
  countries: Record<string, unknown>;
  country_calling_codes: Record<string, string[]>;
};
let view: MetadataView | undefined;
const plans = new Map<string, PhonePlan | null>();

/** The plan of `region` (ISO 3166 alpha-2), compiled on first use; undefined for a region libphonenumber does not know. */
export function phonePlan(region: string): PhonePlan | undefined {
  const cached = plans.get(region);
  if (cached !== undefined) return cached ?? undefined;
  if (!(region in metadata.countries)) {
    plans.set(region, null);
    return undefined;
  }
  view ??= new Metadata(metadata) as unknown as MetadataView;
  view.selectNumberingPlan(region);
  const plan = view.numberingPlan;
  const patterns: string[] = [];
  const lengths = new Set<number>(plan.possibleLengths());
  for (const name of NUMBER_TYPES) {
    const type = plan.type(name);
    const pattern = type?.pattern();
    if (!pattern) continue;
    patterns.push(pattern);
    for (const length of type?.possibleLengths() ?? []) lengths.add(length);
  }
  const trunk = plan.nationalPrefix();
  const forParsing = plan.nationalPrefixForParsing() ?? trunk;
  const compiled: PhonePlan = {
    region,
    callingCode: plan.callingCode(),
    trunk,
    prefix: forParsing ? new RegExp(`^(?:${forParsing})`) : undefined,
    transform: plan.nationalPrefixTransformRule(),
    lengths,
    valid: new RegExp(`^(?:${patterns.join('|')})$`),
  };
  plans.set(region, compiled);
  return compiled;
}

/** Regions sharing a country calling code, the main one first (`1`: US, then CA …). */
function regionsOfCallingCode(code: string): readonly string[] {
  return metadata.country_calling_codes[code] ?? [];
}

/**
 * E.164 of `digits` read as a national number of `plan`: `withTrunk` when
 * the digits start with its national prefix, stripped (or rewritten) the way
 * libphonenumber parses it; else as written. Undefined when not valid there.
 */
export function nationalE164(plan: PhonePlan, digits: string, withTrunk: boolean): string | undefined {
  let nsn = digits;
  if (withTrunk) {
    const match = plan.prefix?.exec(digits);
    if (!match || match[0] === '') return undefined;
    nsn =
      plan.transform !== undefined && match.length > 1 && match[1] !== undefined
        ? digits.replace(plan.prefix!, plan.transform)
        : digits.slice(match[0].length);
  }
  return isValidFor(plan, nsn) ? `+${plan.callingCode}${nsn}` : undefined;
}

/** E.164 of `digits` read as an international number (calling code first, no `+`), or undefined. */
export function internationalE164(digits: string): string | undefined {
  for (let size = 1; size <= 3 && size < digits.length; size++) {
    const regions = regionsOfCallingCode(digits.slice(0, size));
    if (regions.length === 0) continue;
    const nsn = digits.slice(size);
    for (const region of regions) {
      const plan = phonePlan(region);
      if (!plan) continue;
      if (isValidFor(plan, nsn)) return `+${digits}`;
      // `+7 8 922 …`: a trunk prefix typed after the calling code, which libphonenumber drops too.
      // Only a plain strip (no carrier code or area code rewritten in), as libphonenumber does here.
      const match = plan.prefix?.exec(nsn);
      if (match && match[0] !== '' && match.slice(1).every((group) => group === undefined)) {
        const stripped = nsn.slice(match[0].length);
        if (isValidFor(plan, stripped)) return `+${plan.callingCode}${stripped}`;
      }
    }
    // Calling codes are prefix-free: only one length can name a country.
    return undefined;
  }
  return undefined;
}

/**
 * The ten digits of a North American number in the plan's shape (`NXX NXX XXXX`), and not one digit ten times over,
 * the placeholder `555-555-5555`. A service code as area code (`+1 (711) 577-6643`) is let through: no such number is
 * dialled, but one written in a phone number's layout beside a phone word is meant as one, and is as private.
 */
const NANP_POSSIBLE = /^(?!(\d)\1{9})[2-9]\d\d[2-9]\d{6}$/;

/**
 * Whether `digits` (calling code first, no `+`) could be a number of the country its calling code names: the rest has
 * a length that country's numbers have (for North America, its plan's own rules: {@link NANP_POSSIBLE}), though it
 * may lie in no range assigned (yet, or in the metadata this release ships).
 */
export function possibleInternational(digits: string): boolean {
  if (digits.startsWith('1')) return NANP_POSSIBLE.test(digits.slice(1));
  for (let size = 2; size <= 3 && size < digits.length; size++) {
    const main = regionsOfCallingCode(digits.slice(0, size))[0];
    if (main === undefined) continue;
    return phonePlan(main)?.lengths.has(digits.length - size) ?? false;
  }
  return false;
}

function isValidFor(plan: PhonePlan, nsn: string): boolean {
  return plan.lengths.has(nsn.length) && plan.valid.test(nsn);
}
