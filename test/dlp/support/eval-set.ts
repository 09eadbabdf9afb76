import { Faker, base, en } from '@faker-js/faker';
import type { EntityType } from '../../../src/dlp/entities.ts';

/**
 * A labelled evaluation set for the DLP engine, generated (not stored): text
 * templates filled with faker-made values. For every entity type there are
 * positives (valid values, several spellings, with and without context
 * words) and negatives (look-alikes: broken checksums, impossible numbers,
 * order numbers, dates, versions, file names). The same seed always gives
 * the same set.
 */

/** A labelled value inside a sample. */
export interface GoldSpan {
  entity: EntityType;
  start: number;
  end: number;
}

export interface EvalSample {
  text: string;
  /** What must be found; empty for a negative sample. */
  gold: GoldSpan[];
  /** The entity type this sample exercises (its look-alike family, for negatives); `OTHER` for generic identifiers. */
  family: EntityType | 'OTHER';
  kind: 'positive' | 'negative';
  /** Which generator made it, to trace a miss. */
  generator: string;
}

/** Options of {@link generateEvalSet}. */
export interface EvalSetOptions {
  /** Default 20240607. */
  seed?: number;
  /** Samples per generator. Default 40. */
  perGenerator?: number;
}

type Generator = (f: Faker) => { template: string; value: string };

interface Family {
  entity: EntityType | 'OTHER';
  positives: Record<string, Generator>;
  negatives: Record<string, Generator>;
}

// ---------------------------------------------------------------- helpers

const pick = <T>(f: Faker, items: readonly T[]): T => f.helpers.arrayElement(items);
const digits = (f: Faker, n: number): string => f.string.numeric({ length: n, allowLeadingZeros: true });
const chars = (f: Faker, n: number, alphabet: string): string =>
  Array.from({ length: n }, () => alphabet[f.number.int(alphabet.length - 1)]).join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64 = `${ALNUM}+/`;
const B64URL = `${ALNUM}-_`;
/** A random string over `alphabet` with at least one letter and one digit, as generated keys have. */
function keyBody(f: Faker, n: number, alphabet = ALNUM): string {
  return chars(f, n - 2, alphabet) + pick(f, [...'abcdefghijklmnopqrstuvwxyz']) + f.number.int(9);
}
function luhnCheckDigit(payload: string): number {
  let sum = 0;
  let double = true;
  for (let i = payload.length - 1; i >= 0; i--) {
    let d = Number(payload[i]);
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return (10 - (sum % 10)) % 10;
}
function group(value: string, sizes: readonly number[], sep: string): string {
  const out: string[] = [];
  let i = 0;
  for (const size of sizes) {
    out.push(value.slice(i, i + size));
    i += size;
  }
  if (i < value.length) out.push(value.slice(i));
  return out.filter((s) => s.length > 0).join(sep);
}
function b64url(json: unknown): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

const FILLER_BEFORE = [
  '',
  'Hi team,',
  'Quick question about the migration.',
  'Please summarise this ticket for me.',
  'Context from the customer call:',
  'Draft a polite reply to the following.',
  'Here is the log excerpt.',
];
const FILLER_AFTER = [
  '',
  'Thanks!',
  'Keep it short.',
  'Answer in French.',
  'What should we do next?',
  'Let me know by Friday.',
];

// ---------------------------------------------------------------- families

const US_AREA_CODES = [
  '201',
  '202',
  '206',
  '212',
  '213',
  '303',
  '305',
  '312',
  '404',
  '415',
  '503',
  '512',
  '602',
  '617',
  '646',
  '702',
  '713',
  '718',
  '805',
  '917',
  '972',
  '415',
  '650',
  '860',
  '919',
];
function usSubscriber(f: Faker): [string, string, string] {
  let exchange: string;
  do exchange = `${f.number.int({ min: 2, max: 9 })}${digits(f, 2)}`;
  while (exchange.endsWith('11'));
  return [pick(f, US_AREA_CODES), exchange, digits(f, 4)];
}

const phone: Family = {
  entity: 'PHONE_NUMBER',
  positives: {
    'us-formatted': (f) => {
      const [a, e, l] = usSubscriber(f);
      const value = pick(f, [
        `(${a}) ${e}-${l}`,
        `${a}-${e}-${l}`,
        `${a}.${e}.${l}`,
        `+1 ${a} ${e} ${l}`,
        `+1-${a}-${e}-${l}`,
        `1-${a}-${e}-${l}`,
        `+1 (${a}) ${e}-${l}`,
      ]);
      return {
        template: pick(f, [
          'Call me at {v} after 5pm.',
          'You can reach her on {v}.',
          'Customer number: {v}',
          'Phone: {v}',
          'Her cell is {v}, his is unknown.',
          'The number {v} keeps calling.',
        ]),
        value,
      };
    },
    'us-bare-with-context': (f) => {
      const [a, e, l] = usSubscriber(f);
      return { template: pick(f, ['phone {v}', 'Mobile: {v}', 'call {v} tomorrow', 'tel {v}']), value: `${a}${e}${l}` };
    },
    e164: (f) => {
      const [a, e, l] = usSubscriber(f);
      return {
        template: pick(f, ['{v}', 'Forward the SMS to {v}.', 'Contact: {v}']),
        value: pick(f, [
          `+1${a}${e}${l}`,
          `+4420794${digits(f, 5)}`,
          `+4474${pick(f, ['00', '50'])}${digits(f, 6)}`,
          `+491511${digits(f, 7)}`,
        ]),
      };
    },
    uk: (f) => ({
      template: pick(f, ['Ring the London office on {v}.', 'Tel: {v}', 'UK support: {v}']),
      value: pick(f, [
        `+44 20 7946 ${digits(f, 4)}`,
        `020 7946 ${digits(f, 4)}`,
        `+44 7400 ${digits(f, 6)}`,
        `07500 ${digits(f, 6)}`,
      ]),
    }),
    'de-fr': (f) => ({
      template: pick(f, ['Rufen Sie {v} an.', 'Appelez le {v} svp.', 'Number: {v}']),
      value: pick(f, [
        `+49 30 ${digits(f, 8)}`,
        `030 ${f.number.int({ min: 2, max: 9 })}${digits(f, 7)}`,
        `+49 151 ${digits(f, 8)}`,
        `+33 6 1${digits(f, 1)} ${group(digits(f, 6), [2, 2, 2], ' ')}`,
        `06 0${digits(f, 1)} ${group(digits(f, 6), [2, 2, 2], ' ')}`,
        `+33 1 ${group(digits(f, 8), [2, 2, 2, 2], ' ')}`,
      ]),
    }),
  },
  negatives: {
    'impossible-nanp': (f) => ({
      template: pick(f, ['Dial {v} for help.', 'Number: {v}']),
      value: pick(f, [
        `(123) 456-${digits(f, 4)}`,
        `555-555-5555`,
        `+1 123 456 ${digits(f, 4)}`,
        `(199) ${digits(f, 3)}-${digits(f, 4)}`,
        `(000) ${digits(f, 3)}-${digits(f, 4)}`,
      ]),
    }),
    'order-number': (f) => ({
      template: pick(f, [
        'Your order {v} has shipped.',
        'Order #{v} is delayed.',
        'Invoice {v} is overdue.',
        'Reference {v}',
      ]),
      value: pick(f, [
        `${f.number.int({ min: 2, max: 9 })}${digits(f, 9)}`,
        `2024-${digits(f, 6)}`,
        `PO-${digits(f, 10)}`,
        `ORD-${digits(f, 8)}-${digits(f, 4)}`,
      ]),
    }),
    'date-time': (f) => {
      const d = f.date.anytime();
      return {
        template: pick(f, ['Meeting on {v}.', 'Deadline: {v}', 'Logged at {v}']),
        value: pick(f, [
          d.toISOString(),
          d.toISOString().slice(0, 10),
          d.toLocaleDateString('de-DE'),
          d.toLocaleDateString('en-US'),
          d.toISOString().slice(11, 19),
        ]),
      };
    },
    'amounts-and-codes': (f) => ({
      template: pick(f, ['The total is {v}.', 'ISBN {v}', 'Zip {v}', 'Coordinates {v}', 'Build {v}']),
      value: pick(f, [
        `$${f.number.int({ min: 1000, max: 9999999 }).toLocaleString('en-US')}.${digits(f, 2)}`,
        `978-3-16-${digits(f, 6)}-${digits(f, 1)}`,
        `${digits(f, 5)}-${digits(f, 4)}`,
        `${f.location.latitude()}, ${f.location.longitude()}`,
        `${f.system.semver()}`,
      ]),
    }),
  },
};

const email: Family = {
  entity: 'EMAIL_ADDRESS',
  positives: {
    'faker-email': (f) => ({
      template: pick(f, [
        'Please contact {v} about the renewal.',
        'Send the report to {v}.',
        'From: Jane <{v}>',
        'email: {v}',
        'cc {v}, thanks',
      ]),
      value: f.internet.email(),
    }),
    'tagged-and-subdomain': (f) => ({
      template: pick(f, ['Reply-To: {v}', 'Write to {v}.', 'mailto:{v}']),
      value: `${f.person.firstName().toLowerCase()}.${f.person
        .lastName()
        .toLowerCase()
        .replace(
          /[^a-z]/g,
          '',
        )}+${f.word.noun()}@${f.internet.domainWord()}.${pick(f, ['co.uk', 'example.org', 'mail.example.com', 'io', 'de'])}`,
    }),
  },
  negatives: {
    'file-and-handle': (f) => ({
      template: pick(f, [
        'Use {v} for retina screens.',
        'Ping {v} on Slack.',
        'Install {v} from npm.',
        'Connect to {v}',
      ]),
      value: pick(f, [
        `${f.word.noun()}@2x.png`,
        `@${f.internet.username()}`,
        `@${f.word.noun()}/${f.word.noun()}@${f.system.semver()}`,
        `${f.internet.username()}@localhost`,
        `user@${f.word.noun()}`,
      ]),
    }),
    'broken-address': (f) => ({
      template: pick(f, ['Not an address: {v}', 'Typo: {v}']),
      value: pick(f, [`${f.word.noun()}..${f.word.noun()}@`, `@${f.internet.domainName()}`, `${f.word.noun()}@.com`]),
    }),
  },
};

function cardNumber(f: Faker): string {
  const issuer = pick(f, ['visa', 'mastercard', 'american_express', 'discover', 'jcb', 'diners_club'] as const);
  return f.finance.creditCardNumber({ issuer });
}
function regroupCard(f: Faker, value: string): string {
  const d = value.replace(/\D/g, '');
  if (d.length === 15) return pick(f, [d, group(d, [4, 6, 5], ' '), group(d, [4, 6, 5], '-')]);
  if (d.length === 16) return pick(f, [d, group(d, [4, 4, 4, 4], ' '), group(d, [4, 4, 4, 4], '-')]);
  return d;
}

const card: Family = {
  entity: 'CREDIT_CARD',
  positives: {
    'faker-card': (f) => ({
      template: pick(f, [
        'My card number is {v}.',
        'Charge {v} please.',
        'Visa {v} exp 04/27',
        '{v}',
        'Payment with {v} failed.',
      ]),
      value: cardNumber(f),
    }),
    'regrouped-card': (f) => ({
      template: pick(f, ['card: {v}', 'Use {v} for the deposit.', 'CC {v}']),
      value: regroupCard(f, cardNumber(f)),
    }),
  },
  negatives: {
    'luhn-broken': (f) => {
      const value = cardNumber(f);
      const last = Number(value.at(-1));
      return {
        template: pick(f, ['My card number is {v}.', 'Charge {v} please.']),
        value: value.slice(0, -1) + String((last + f.number.int({ min: 1, max: 9 })) % 10),
      };
    },
    'long-ids': (f) => {
      const payload = `${pick(f, ['1', '8', '9'])}${digits(f, 14)}`;
      return {
        template: pick(f, ['Tracking {v}', 'Order {v} shipped.', 'Account ref {v}']),
        value: pick(f, [
          payload + luhnCheckDigit(payload),
          `9400 1000 0000 ${digits(f, 4)} ${digits(f, 4)} ${digits(f, 2)}`,
          group(payload + ((luhnCheckDigit(payload) + 1) % 10), [4, 4, 4, 4], '-'),
        ]),
      };
    },
  },
};

const iban: Family = {
  entity: 'IBAN_CODE',
  positives: {
    'faker-iban': (f) => ({
      template: pick(f, ['Please wire it to {v}.', 'IBAN: {v}', 'Account {v} (SEPA)', 'Refund to {v}, thanks']),
      value: f.finance.iban({ formatted: f.datatype.boolean() }),
    }),
  },
  negatives: {
    'checksum-broken': (f) => {
      const value = f.finance.iban();
      const check = Number(value.slice(2, 4));
      const wrong = String((check + f.number.int({ min: 1, max: 90 })) % 97).padStart(2, '0');
      return {
        template: pick(f, ['IBAN: {v}', 'Please wire it to {v}.']),
        value: value.slice(0, 2) + (wrong === value.slice(2, 4) ? '00' : wrong) + value.slice(4),
      };
    },
    'product-codes': (f) => ({
      template: pick(f, ['Part {v} is out of stock.', 'Serial {v}', 'SKU {v}']),
      value: pick(f, [
        `XX${digits(f, 2)}${chars(f, 14, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`,
        `${chars(f, 2, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')}${digits(f, 2)} ${chars(f, 4, 'ABCDEFGHIJ')} ${chars(f, 4, 'KLMNOPQRST')} ${chars(f, 3, 'UVWXYZ')}`,
      ]),
    }),
  },
};

function ssnDigits(f: Faker): string {
  let area: number;
  do area = f.number.int({ min: 1, max: 899 });
  while (area === 666);
  return `${String(area).padStart(3, '0')}${String(f.number.int({ min: 1, max: 99 })).padStart(2, '0')}${String(f.number.int({ min: 1, max: 9999 })).padStart(4, '0')}`;
}
const ssn: Family = {
  entity: 'US_SSN',
  positives: {
    dashed: (f) => ({
      template: pick(f, [
        'My SSN is {v}.',
        'SSN: {v}',
        'Employee {v} onboarding form',
        'social security number {v}',
        '{v}',
      ]),
      value: group(ssnDigits(f), [3, 2, 4], '-'),
    }),
    'spaced-or-bare-with-context': (f) => ({
      template: pick(f, ['SSN {v}', 'ssn: {v}', 'Social Security {v}']),
      value: pick(f, [group(ssnDigits(f), [3, 2, 4], ' '), ssnDigits(f)]),
    }),
  },
  negatives: {
    'rule-breaking': (f) => ({
      template: pick(f, ['My SSN is {v}.', 'SSN: {v}', 'Number {v}']),
      value: pick(f, [
        `000-${digits(f, 2)}-${digits(f, 4)}`,
        `666-${digits(f, 2)}-${digits(f, 4)}`,
        `9${digits(f, 2)}-${digits(f, 2)}-${digits(f, 4)}`,
        `${f.number.int({ min: 100, max: 665 })}-00-${digits(f, 4)}`,
        `${f.number.int({ min: 100, max: 665 })}-${f.number.int({ min: 10, max: 99 })}-0000`,
        '078-05-1120',
        '123-45-6789',
      ]),
    }),
    'nine-digit-ids': (f) => ({
      template: pick(f, ['Routing number {v}', 'Order {v}', 'Part no. {v}', 'ZIP {v}']),
      value: pick(f, [ssnDigits(f), group(ssnDigits(f), [3, 2, 4], '-'), `${digits(f, 5)}-${digits(f, 4)}`]),
    }),
  },
};

function ipv4(f: Faker): string {
  let value: string;
  do value = f.internet.ipv4();
  while (/^(?:127|0)\./.test(value));
  return value;
}
const ip: Family = {
  entity: 'IP_ADDRESS',
  positives: {
    ipv4: (f) => ({
      template: pick(f, [
        'The server at {v} is down.',
        'Login from {v} at 03:12.',
        'ip={v}',
        'Whitelist {v}/32 please.',
        'client {v} timed out',
      ]),
      value: ipv4(f),
    }),
    ipv6: (f) => ({
      template: pick(f, ['The host {v} is unreachable.', 'Source address {v}', 'IPv6: {v}']),
      value: pick(f, [
        f.internet.ipv6(),
        f.internet.ipv6().replace(/(?::0{1,4}){2,}/, '::'),
        `fe80::${digits(f, 2)}a:${chars(f, 4, '0123456789abcdef')}`,
        `2001:db8::${f.number.int({ min: 1, max: 9999 })}`,
      ]),
    }),
  },
  negatives: {
    'versions-and-sections': (f) => ({
      template: pick(f, ['Upgrade to version {v}.', 'See section {v}.', 'Released v{v} today.', 'Build {v} is green.']),
      value: `${f.number.int(9)}.${f.number.int(20)}.${f.number.int(20)}.${f.number.int(99)}`,
    }),
    'not-addresses': (f) => ({
      template: pick(f, ['Value: {v}', 'See {v}', 'Use {v} here.']),
      value: pick(f, [
        '127.0.0.1',
        '0.0.0.0',
        '::1',
        `${f.number.int({ min: 256, max: 999 })}.${f.number.int(255)}.${f.number.int(255)}.${f.number.int(255)}`,
        `${f.number.int(23)}:${digits(f, 2)}:${digits(f, 2)}`,
        f.internet.mac(),
        'std::vector<int>',
        'Foo::Bar::baz',
        `${f.date.anytime().toISOString()}`,
        '2001:db8:::1',
      ]),
    }),
  },
};

const cloudKey: Family = {
  entity: 'CLOUD_ACCESS_KEY',
  positives: {
    'aws-key-id': (f) => ({
      template: pick(f, ['AWS_ACCESS_KEY_ID={v}', 'key id {v} leaked', 'aws_access_key_id = {v}']),
      value: `${pick(f, ['AKIA', 'ASIA'])}${chars(f, 16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`,
    }),
    'aws-secret': (f) => ({
      template: pick(f, ['aws_secret_access_key = {v}', 'AWS_SECRET_ACCESS_KEY="{v}"', 'secret_access_key: {v}']),
      value: keyBody(f, 40, B64),
    }),
    'google-api-key': (f) => ({
      template: pick(f, ['const key = "{v}";', 'GOOGLE_API_KEY={v}']),
      value: `AIza${keyBody(f, 35, B64URL)}`,
    }),
    'azure-account-key': (f) => ({
      template: 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={v};EndpointSuffix=core.windows.net',
      value: `${keyBody(f, 86, B64)}==`,
    }),
  },
  negatives: {
    'near-misses': (f) => ({
      template: pick(f, ['id {v}', 'The value {v} is a placeholder.']),
      value: pick(f, [
        `AKIA${chars(f, 10, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')}`,
        `akia${chars(f, 16, 'abcdefghijklmnop')}`,
        `AIza${chars(f, 12, ALNUM)}`,
        'aws_secret_access_key = os.environ["AWS_SECRET_ACCESS_KEY"]',
      ]),
    }),
  },
};

const apiKey: Family = {
  entity: 'API_KEY',
  positives: {
    'prefixed-keys': (f) => ({
      template: pick(f, ['OPENAI_API_KEY={v}', 'token: {v}', 'Use {v} for the CI job.', 'export GITHUB_TOKEN={v}']),
      value: pick(f, [
        `ghp_${keyBody(f, 36)}`,
        `github_pat_${keyBody(f, 82, `${ALNUM}_`)}`,
        `xoxb-${digits(f, 12)}-${digits(f, 12)}-${keyBody(f, 24)}`,
        `sk_live_${keyBody(f, 24)}`,
        `sk-proj-${keyBody(f, 48, B64URL)}`,
        `sk-ant-api03-${keyBody(f, 80, B64URL)}`,
        `gw_${keyBody(f, 43, B64URL)}`,
      ]),
    }),
  },
  negatives: {
    'prefix-look-alikes': (f) => ({
      template: pick(f, ['Install {v} first.', 'The module {v} handles it.', 'Set {v} in the config.']),
      value: pick(f, [
        'sk-learn',
        'scikit-learn',
        `ghp_${chars(f, 8, ALNUM)}`,
        'gw_config_reload',
        `sk_live_mode`,
        'xoxb-token-here',
        `sk-${f.word.noun()}-${f.word.noun()}`,
      ]),
    }),
  },
};

function pemBody(f: Faker): string {
  return Array.from({ length: f.number.int({ min: 2, max: 6 }) }, () => chars(f, 64, B64)).join('\n');
}
const privateKey: Family = {
  entity: 'PRIVATE_KEY',
  positives: {
    'pem-block': (f) => {
      const kind = pick(f, ['RSA ', 'EC ', 'OPENSSH ', 'ENCRYPTED ', '']);
      return {
        template: pick(f, ['Why does this key fail?\n{v}\nThanks', '{v}', 'key:\n{v}']),
        value: `-----BEGIN ${kind}PRIVATE KEY-----\n${pemBody(f)}\n-----END ${kind}PRIVATE KEY-----`,
      };
    },
  },
  negatives: {
    'public-material': (f) => {
      const kind = pick(f, ['PUBLIC KEY', 'CERTIFICATE', 'CERTIFICATE REQUEST']);
      return {
        template: 'Is this valid?\n{v}',
        value: `-----BEGIN ${kind}-----\n${pemBody(f)}\n-----END ${kind}-----`,
      };
    },
  },
};

const bearer: Family = {
  entity: 'BEARER_TOKEN',
  positives: {
    'authorization-header': (f) => ({
      template: pick(f, [
        'Authorization: Bearer {v}',
        'curl -H "Authorization: Bearer {v}" https://api.example.com',
        'bearer {v}',
      ]),
      value: keyBody(f, f.number.int({ min: 24, max: 64 }), `${ALNUM}-._~`),
    }),
  },
  negatives: {
    prose: (f) => ({
      template: pick(f, ['{v}', 'Note: {v}']),
      value: pick(f, [
        'The bearer of this letter is a friend.',
        'Bearer authentication is required for every endpoint.',
        'Authorization: Bearer <token>',
        'Authorization: Bearer $API_TOKEN',
      ]),
    }),
  },
};

const jwt: Family = {
  entity: 'JWT',
  positives: {
    'signed-token': (f) => {
      const token = `${b64url({ alg: pick(f, ['HS256', 'RS256', 'ES256']), typ: 'JWT' })}.${b64url({ sub: f.string.uuid(), name: f.person.fullName(), iat: f.number.int({ min: 1.6e9, max: 1.8e9 }) })}.${chars(f, 43, B64URL)}`;
      return {
        template: pick(f, ['token={v}', 'Decode this JWT: {v}', 'Authorization: Bearer {v}', '"id_token": "{v}"']),
        value: token,
      };
    },
  },
  negatives: {
    'not-json': (f) => ({
      template: 'Value: {v}',
      value: `eyJ${chars(f, 20, B64URL)}.eyJ${chars(f, 30, B64URL)}.${chars(f, 10, B64URL)}`,
    }),
  },
};

/**
 * Identifiers faker makes that belong to no entity type: hashes, UUIDs,
 * IMEIs, VINs, account and routing numbers, bitcoin addresses, prices. Not
 * used while calibrating the scores, so they are the fairest check of precision.
 */
const other: Family = {
  entity: 'OTHER',
  positives: {},
  negatives: {
    'faker-identifiers': (f) => ({
      template: pick(f, ['Value: {v}', 'See {v} for details.', 'id={v}', 'The {v} entry', 'Ref: {v}', '{v}']),
      value: pick(f, [
        f.git.commitSha(),
        f.string.uuid(),
        f.phone.imei(),
        f.vehicle.vin(),
        f.finance.accountNumber(),
        f.finance.routingNumber(),
        f.finance.bitcoinAddress(),
        f.finance.ethereumAddress(),
        f.commerce.price({ min: 1000, max: 100000, symbol: '$' }),
        f.finance.pin(),
        f.string.numeric(12),
        f.string.alphanumeric(24),
        f.system.semver(),
        f.internet.port().toString(),
        f.date.past().getTime().toString(),
        f.color.rgb(),
        f.internet.url(),
        f.system.filePath(),
        f.airline.flightNumber({ addLeadingZeros: true }),
        f.finance.amount({ min: 1000, max: 9999999, dec: 2 }),
      ]),
    }),
  },
};

/** Every family, in the order the evaluation prints them. */
const FAMILIES: readonly Family[] = [
  email,
  phone,
  card,
  iban,
  ssn,
  ip,
  cloudKey,
  apiKey,
  privateKey,
  bearer,
  jwt,
  other,
];

/** The entity types the set covers. */
export const EVAL_ENTITIES: readonly EntityType[] = FAMILIES.flatMap((family) =>
  family.entity === 'OTHER' ? [] : [family.entity],
);

export function generateEvalSet(options: EvalSetOptions = {}): EvalSample[] {
  const f = new Faker({ locale: [en, base] });
  f.seed(options.seed ?? 20240607);
  // Dates are drawn around a reference date, which is "now" unless fixed.
  f.setDefaultRefDate(new Date('2024-06-07T12:00:00Z'));
  const perGenerator = options.perGenerator ?? 40;
  const samples: EvalSample[] = [];
  for (const family of FAMILIES) {
    for (const kind of ['positive', 'negative'] as const) {
      const generators = kind === 'positive' ? family.positives : family.negatives;
      for (const [name, generate] of Object.entries(generators)) {
        for (let i = 0; i < perGenerator; i++) {
          const { template, value } = generate(f);
          const before = pick(f, FILLER_BEFORE);
          const after = pick(f, FILLER_AFTER);
          const slot = template.indexOf('{v}');
          const head = `${before}${before ? ' ' : ''}${template.slice(0, slot)}`;
          const text = `${head}${value}${template.slice(slot + 3)}${after ? ' ' : ''}${after}`;
          const gold: GoldSpan[] =
            kind === 'positive' && family.entity !== 'OTHER'
              ? [{ entity: family.entity, start: head.length, end: head.length + value.length }]
              : [];
          samples.push({ text, gold, family: family.entity, kind, generator: `${family.entity}/${name}` });
        }
      }
    }
  }
  return samples;
}
