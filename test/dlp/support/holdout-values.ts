import { getExampleNumber, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
import type { HoldoutEntity } from './holdout-set.ts';

/**
 * Value makers of the held-out DLP set (holdout-set.ts). Deliberately unlike
 * eval-set.ts: no faker, a small seeded PRNG, hand-written name and place
 * lists, national phone formats of the most populous countries and the EU,
 * IBANs of several countries, oddly grouped cards, internationalised and
 * obfuscated e-mail addresses, and the secret formats of more services.
 */

/** Seeded PRNG (mulberry32): the same seed gives the same set. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(10));
    return s;
  }
  chars(n: number, alphabet: string): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
}

/** A value to put into a template; `spans` (relative to `text`) are what must be found. */
export interface Piece {
  text: string;
  spans: { entity: HoldoutEntity; start: number; end: number }[];
}

export const whole = (entity: HoldoutEntity, text: string): Piece => ({
  text,
  spans: [{ entity, start: 0, end: text.length }],
});
const inner = (entity: HoldoutEntity, before: string, value: string, after = ''): Piece => ({
  text: before + value + after,
  spans: [{ entity, start: before.length, end: before.length + value.length }],
});
export const none = (text: string): Piece => ({ text, spans: [] });

// ---------------------------------------------------------------- people and places

export const FIRST_NAMES = [
  'Aarav',
  'Priya',
  'Wei',
  'Xiu Ying',
  'Siti',
  'Budi',
  'Ayesha',
  'Imran',
  'Chinedu',
  'Ngozi',
  'Thiago',
  'Larissa',
  'Rahim',
  'Nusrat',
  'Dmitri',
  'Olga',
  'Abebe',
  'Tigist',
  'Guadalupe',
  'Alejandro',
  'Haruto',
  'Yui',
  'Mostafa',
  'Fatma',
  'Jose',
  'Maricel',
  'Kabongo',
  'Minh',
  'Thu',
  'Reza',
  'Shirin',
  'Emre',
  'Elif',
  'Lukas',
  'Jörg',
  'Somchai',
  'Kanya',
  'Camille',
  'Giulia',
  'Søren',
  'Agnieszka',
  'Zsófia',
  'Ioana',
  'Pieter',
  'Sinéad',
  'Margaret',
  'Tyrone',
  'Brianna',
  'Kevin',
  'Hannah',
  'Mateo',
  'Lucía',
  'Anders',
  'Eleni',
];
export const LAST_NAMES = [
  'Sharma',
  'Patel',
  'Wang',
  'Li',
  'Nurhaliza',
  'Santoso',
  'Khan',
  'Qureshi',
  'Okafor',
  'Adeyemi',
  'Oliveira',
  'Souza',
  'Hossain',
  'Ivanov',
  'Smirnova',
  'Bekele',
  'Tesfaye',
  'Hernández',
  'García',
  'Takahashi',
  'Sato',
  'Abdelrahman',
  'Yılmaz',
  'Santos',
  'Reyes',
  'Mukendi',
  'Nguyen',
  'Tran',
  'Hosseini',
  'Karimi',
  'Demir',
  'Müller',
  'Schneider',
  'Wongsakul',
  'Dubois',
  'Rossi',
  'Jørgensen',
  'Kowalski',
  'Nagy',
  'Popescu',
  'de Vries',
  "O'Brien",
  'Thompson',
  'Washington',
  'Miller',
  'Johnson',
  'Fernández',
  'Lindqvist',
  'Papadopoulos',
  'Novak',
  'Horvat',
  'Murphy',
  'Kim',
  'Chen',
];
export const CITIES = [
  'Mumbai',
  'Shanghai',
  'Chicago',
  'Jakarta',
  'Karachi',
  'Lagos',
  'São Paulo',
  'Dhaka',
  'Novosibirsk',
  'Addis Ababa',
  'Guadalajara',
  'Osaka',
  'Alexandria',
  'Cebu',
  'Kinshasa',
  'Hanoi',
  'Tehran',
  'Izmir',
  'Hamburg',
  'Chiang Mai',
  'Lyon',
  'Naples',
  'Seville',
  'Kraków',
  'Rotterdam',
  'Debrecen',
  'Cluj-Napoca',
  'Porto',
  'Gothenburg',
  'Thessaloniki',
  'Cork',
  'Brno',
  'Tallinn',
  'Leeds',
  'Toronto',
];

export function person(
  r: Rng,
  style: 'full' | 'first' | 'last' | 'comma' = r.pick(['full', 'full', 'first', 'last'] as const),
): Piece {
  const first = r.pick(FIRST_NAMES);
  const last = r.pick(LAST_NAMES);
  if (style === 'first') return whole('PERSON', first);
  if (style === 'last') return whole('PERSON', last);
  if (style === 'comma') return whole('PERSON', `${last}, ${first}`);
  return whole('PERSON', `${first} ${last}`);
}

export const city = (r: Rng): Piece => whole('LOCATION', r.pick(CITIES));

// ---------------------------------------------------------------- phones

/** The 20 most populous countries, the EU members and the United Kingdom. */
export const PHONE_COUNTRIES: readonly CountryCode[] = [
  'IN',
  'CN',
  'US',
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
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  'GB',
];

function validMobile(r: Rng, country: CountryCode) {
  const example = getExampleNumber(country, examples)!;
  const nsn = example.nationalNumber;
  for (let attempt = 0; attempt < 20; attempt++) {
    const keep = Math.max(2, nsn.length - 5);
    const phone = parsePhoneNumberFromString(
      `+${example.countryCallingCode}${nsn.slice(0, keep)}${r.digits(nsn.length - keep)}`,
    );
    if (phone?.isValid() && phone.getType() !== undefined) return phone;
  }
  return example;
}

/** A mobile number of `country` in its national or international format, re-spaced the way people type them. */
export function phone(r: Rng, country: CountryCode = r.pick(PHONE_COUNTRIES)): Piece {
  const number = validMobile(r, country);
  let text = r.next() < 0.5 ? number.formatNational() : number.formatInternational();
  const style = r.int(6);
  if (style === 1) text = text.replace(/[ -]/g, '.').replace(/[()]/g, '');
  else if (style === 2) text = text.replace(/ /g, '-');
  else if (style === 3 && text.startsWith('+')) text = `+${number.countryCallingCode} ${number.nationalNumber}`;
  else if (style === 4 && text.startsWith('+')) text = `00${text.slice(1)}`;
  const ext = r.int(8);
  if (ext === 0) text += ` x${r.digits(3)}`;
  else if (ext === 1) text += ` ext. ${r.digits(2)}`;
  return whole('PHONE_NUMBER', text);
}

// ---------------------------------------------------------------- cards and IBANs

function luhnComplete(payload: string): string {
  let sum = 0;
  for (let i = 0; i < payload.length; i++) {
    let d = Number(payload[payload.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return payload + String((10 - (sum % 10)) % 10);
}

const CARD_PREFIXES: readonly [string, number][] = [
  ['4', 16],
  ['51', 16],
  ['55', 16],
  ['2221', 16],
  ['34', 15],
  ['37', 15],
  ['6011', 16],
  ['3530', 16],
  ['4', 19],
];

export function cardNumber(r: Rng): string {
  const [prefix, length] = r.pick(CARD_PREFIXES);
  return luhnComplete(prefix + r.digits(length - prefix.length - 1));
}

function regroup(r: Rng, compact: string, sizes: readonly number[]): string {
  const sep = r.pick([' ', ' ', '-', '.', '  ', '\n', ' - ']);
  const groups: string[] = [];
  let i = 0;
  for (const size of sizes) {
    if (i >= compact.length) break;
    groups.push(compact.slice(i, i + size));
    i += size;
  }
  if (i < compact.length) groups.push(compact.slice(i));
  return groups.join(sep);
}

export function card(r: Rng): Piece {
  const number = cardNumber(r);
  const layouts: number[][] = [[4, 4, 4, 4], [4, 4, 4, 4], [4, 6, 5], [4, 8, 4], [2, 2, 4, 4, 4], [4, 4, 8], []];
  const layout = r.pick(layouts);
  return whole('CREDIT_CARD', layout.length === 0 ? number : regroup(r, number, layout));
}

/** Invalid look-alike: a card number with its last digit changed. */
export function badCard(r: Rng): Piece {
  const number = cardNumber(r);
  const broken = number.slice(0, -1) + String((Number(number.at(-1)) + 1 + r.int(8)) % 10);
  return none(regroup(r, broken, [4, 4, 4, 4]));
}

const IBAN_FORMATS: Record<string, (r: Rng) => string> = {
  DE: (r) => r.digits(18),
  FR: (r) => r.digits(10) + r.chars(11, '0123456789ABCDEFGHJ') + r.digits(2),
  ES: (r) => r.digits(20),
  IT: (r) =>
    r.chars(1, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') + r.digits(10) + r.chars(12, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'),
  NL: (r) => r.pick(['ABNA', 'INGB', 'RABO', 'TRIO']) + r.digits(10),
  GB: (r) => r.pick(['NWBK', 'BARC', 'MIDL', 'LOYD']) + r.digits(14),
  IE: (r) => r.pick(['AIBK', 'BOFI']) + r.digits(14),
  BE: (r) => r.digits(12),
  PL: (r) => r.digits(24),
  AT: (r) => r.digits(16),
  CH: (r) => r.digits(17),
  SE: (r) => r.digits(20),
  PT: (r) => r.digits(21),
  RO: (r) => r.pick(['RNCB', 'BTRL']) + r.digits(16),
  GR: (r) => r.digits(23),
};

function mod97(numeric: string): number {
  let rest = 0;
  for (const ch of numeric) rest = (rest * 10 + Number(ch)) % 97;
  return rest;
}
const toDigits = (s: string) => [...s].map((c) => (/\d/.test(c) ? c : String(c.charCodeAt(0) - 55))).join('');

export function ibanNumber(r: Rng, country = r.pick(Object.keys(IBAN_FORMATS))): string {
  const bban = IBAN_FORMATS[country]!(r);
  const check = 98 - mod97(toDigits(`${bban}${country}00`));
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

export function iban(r: Rng): Piece {
  const compact = ibanNumber(r);
  const style = r.int(7);
  let text = compact;
  if (style === 1 || style === 2) text = compact.match(/.{1,4}/g)!.join(' ');
  else if (style === 3)
    text = compact
      .toLowerCase()
      .match(/.{1,4}/g)!
      .join(' ');
  else if (style === 4) text = compact.match(/.{1,4}/g)!.join(r.pick(['-', '.']));
  else if (style === 5) text = regroup(r, compact, [4, 4, 4, 4, 4, 4, 4, 4]);
  else if (style === 6) text = `${compact.slice(0, 2)} ${compact.slice(2, 4)} ${compact.slice(4)}`;
  return whole('IBAN_CODE', text);
}

export function badIban(r: Rng): Piece {
  const good = ibanNumber(r);
  const wrong = (Number(good.slice(2, 4)) + 1 + r.int(90)) % 97;
  return none(`${good.slice(0, 2)}${String(wrong).padStart(2, '0')}${good.slice(4)}`.match(/.{1,4}/g)!.join(' '));
}

// ---------------------------------------------------------------- e-mail addresses

const ASCII_DOMAINS = [
  'example.com',
  'mail.example.org',
  'corp.example.co.uk',
  'example-health.io',
  'uni-example.edu',
  'example.com.br',
];
const IDN = [
  ['jörg.müller', 'example.de'],
  ['josé.garcía', 'correo.example.es'],
  ['françois', 'exemple.fr'],
  ['łukasz.wiśniewski', 'poczta.example.pl'],
  ['用户', '例子.广告'],
  ['δοκιμή', 'παράδειγμα.δοκιμή'],
  ['pelé', 'müller-bau.de'],
  ['søren', 'eksempel.dk'],
  ['ayşe.yılmaz', 'örnek.com.tr'],
  ['иван', 'пример.рф'],
] as const;

const slug = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z]/g, '');

export function email(r: Rng): Piece {
  const style = r.int(5);
  if (style === 0) {
    const [local, domain] = r.pick(IDN);
    return whole('EMAIL_ADDRESS', `${local}@${domain}`);
  }
  const first = slug(r.pick(FIRST_NAMES)) || 'kim';
  const last = slug(r.pick(LAST_NAMES)) || 'lee';
  const local = r.pick([
    `${first}.${last}`,
    `${first}_${last}${r.digits(2)}`,
    `${first[0]}${last}`,
    `${first}+${r.pick(['news', 'billing', 'test'])}`,
    `${last}.${first}`,
  ]);
  const domain = r.pick(ASCII_DOMAINS);
  return whole('EMAIL_ADDRESS', r.next() < 0.2 ? `${local}@${domain}`.toUpperCase() : `${local}@${domain}`);
}

export function obfuscatedEmail(r: Rng): Piece {
  const first = slug(r.pick(FIRST_NAMES)) || 'kim';
  const last = slug(r.pick(LAST_NAMES)) || 'lee';
  const [name, host, tld] = [
    r.pick([`${first}.${last}`, first]),
    r.pick(['example', 'mailbox', 'acme-example']),
    r.pick(['com', 'org', 'de']),
  ];
  const dotted = name.replace('.', r.pick([' dot ', ' [dot] ', '.']));
  const text = r.pick([
    `${dotted} at ${host} dot ${tld}`,
    `${dotted} [at] ${host} [dot] ${tld}`,
    `${dotted}(at)${host}(dot)${tld}`,
    `${name} [at] ${host}.${tld}`,
    `${name} AT ${host} DOT ${tld}`,
  ]);
  return whole('EMAIL_ADDRESS', text);
}

// ---------------------------------------------------------------- secrets

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const body = (r: Rng, n: number, alphabet = ALNUM) =>
  r.chars(n - 2, alphabet) + r.chars(1, 'abcdefghijklmnopqrstuvwxyz') + r.digits(1);

export function apiKey(r: Rng): Piece {
  const make = r.pick([
    () => `glpat-${body(r, 20, `${ALNUM}_-`)}`,
    () => `npm_${body(r, 36)}`,
    () => `hf_${body(r, 34, ALNUM.slice(0, 52))}${r.digits(0)}`,
    () => `SG.${body(r, 22, `${ALNUM}_-`)}.${body(r, 43, `${ALNUM}_-`)}`,
    () => `xoxb-${r.digits(12)}-${r.digits(13)}-${body(r, 24)}`,
    () => `xoxp-${r.digits(12)}-${r.digits(12)}-${r.digits(13)}-${r.chars(32, '0123456789abcdef')}`,
    () => `sk_live_${body(r, 24)}`,
    () => `rk_live_${body(r, 99)}`,
    () => `whsec_${body(r, 32)}`,
    () =>
      `https://hooks.slack.com/services/T${r.chars(8, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/B${r.chars(10, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}/${body(r, 24)}`,
  ]);
  return whole('API_KEY', make());
}

const PASSWORD_CHARS = `${ALNUM}!#%^*_-`;
const password = (r: Rng) =>
  r.pick([
    `${r.pick(['Summer', 'Winter', 'Dragon', 'Tr0ub4dor', 'Passw0rd'])}${r.digits(2)}!`,
    r.chars(10 + r.int(10), PASSWORD_CHARS),
    `${slug(r.pick(LAST_NAMES))}${r.digits(4)}`,
  ]);

/** A password in a URL, an assignment, a JSON field or a curl `-u`; only the password is the span. */
export function passwordPiece(r: Rng): Piece {
  const pw = password(r);
  const user = slug(r.pick(FIRST_NAMES)) || 'admin';
  return r.pick([
    () => inner('PASSWORD', `postgres://${user}:`, pw, `@db.internal.example:5432/app`),
    () => inner('PASSWORD', `https://${user}:`, pw, `@git.example.com/repo.git`),
    () => inner('PASSWORD', 'password=', pw),
    () => inner('PASSWORD', 'PASSWORD: ', pw),
    () => inner('PASSWORD', '"password": "', pw, '"'),
    () => inner('PASSWORD', 'pwd=', pw),
    () => inner('PASSWORD', `curl -u ${user}:`, pw, ' https://api.example.com/v1/items'),
    () => inner('PASSWORD', `DB_PASSWORD=`, pw),
  ])();
}

// ---------------------------------------------------------------- look-alikes (no entity)

export function lookAlike(r: Rng): Piece {
  return none(
    r.pick([
      () => `${2000 + r.int(30)}-${String(1 + r.int(12)).padStart(2, '0')}-${String(1 + r.int(28)).padStart(2, '0')}`,
      () => `${String(1 + r.int(28)).padStart(2, '0')}.${String(1 + r.int(12)).padStart(2, '0')}.${2000 + r.int(30)}`,
      () => `order ${r.digits(3)}-${r.digits(7)}-${r.digits(7)}`,
      () => `invoice no. ${r.digits(10)}`,
      () => `ISBN 978-${r.digits(1)}-${r.digits(3)}-${r.digits(5)}-${r.digits(1)}`,
      () => `v${r.int(5)}.${r.int(30)}.${r.int(200)}`,
      () => `${r.digits(1)} ${r.digits(3)} ${r.digits(3)} units`,
      () => `EUR ${r.int(99)}.${r.digits(3)},${r.digits(2)}`,
      () =>
        `tracking 1Z ${r.chars(3, 'ABCDEFGHJKLMNPRSTUVWXYZ0123456789')} ${r.chars(3, 'ABCDEFGHJKLMNPRSTUVWXYZ0123456789')} ${r.digits(2)} ${r.digits(4)} ${r.digits(4)}`,
      () =>
        `${r.chars(8, '0123456789abcdef')}-${r.chars(4, '0123456789abcdef')}-4${r.chars(3, '0123456789abcdef')}-a${r.chars(3, '0123456789abcdef')}-${r.chars(12, '0123456789abcdef')}`,
      () => `commit ${r.chars(40, '0123456789abcdef')}`,
      () => `build ${r.digits(4)}.${r.digits(2)}.${r.digits(3)}`,
      () => `room ${r.digits(3)}, floor ${r.int(20)}`,
      () => `${r.int(24)}:${r.digits(2)}:${r.digits(2)}`,
      () => `password=\${DB_PASSWORD}`,
      () => `password: os.environ["DB_PASSWORD"]`,
      () => `https://${slug(r.pick(FIRST_NAMES)) || 'app'}.example.com:8443/path`,
      () => `sku ${r.digits(4)} ${r.digits(4)} ${r.digits(4)}`,
      () => `badge ${r.digits(6)}`,
      () => `${r.digits(3)} ${r.digits(3)} ${r.digits(3)}`,
    ])(),
  );
}

export const lookAlikeCard = badCard;
export const lookAlikeIban = badIban;
