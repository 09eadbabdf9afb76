import type { EntityType } from '../../../src/dlp/entities.ts';
import type { EvalSample, GoldSpan } from './eval-set.ts';
import * as p from './holdout-places.ts';
import * as v from './holdout-values.ts';

/**
 * The held-out DLP evaluation set: hand-written templates in several styles
 * (chat, letters, signatures, CSV, JSON, logs, shell, other languages),
 * filled by holdout-values.ts. It was written before the rules it measures
 * were changed and is split in two by template: `dev` (even templates, seed
 * 101) is what rules may be tuned on, `test` (odd templates, seed 202) is only
 * ever measured. Labels include people, places, organisations, street
 * addresses and dates of birth, whether or not the engine looks for them;
 * dates that are not birth dates are look-alikes.
 */
export type HoldoutEntity =
  EntityType | 'PERSON' | 'LOCATION' | 'ORGANIZATION' | 'STREET_ADDRESS' | 'DATE_OF_BIRTH' | 'PASSWORD';

export type HoldoutSplit = 'dev' | 'test';

type Slot = (r: v.Rng) => v.Piece;
const SLOTS: Record<string, Slot> = {
  name: (r) => v.person(r, 'full'),
  first: (r) => v.person(r, 'first'),
  last: (r) => v.person(r, 'last'),
  comma: (r) => v.person(r, 'comma'),
  city: v.city,
  country: p.country,
  org: p.organization,
  address: p.streetAddress,
  dob: p.dateOfBirth,
  date: p.plainDate,
  // A fixed value that draws no random number, so the samples around it stay as they were before it was labelled.
  acme: () => v.whole('ORGANIZATION', 'ACME Corp'),
  phone: (r) => v.phone(r),
  email: v.email,
  obf: v.obfuscatedEmail,
  card: v.card,
  iban: v.iban,
  key: v.apiKey,
  pw: v.passwordPiece,
  x: v.lookAlike,
  badcard: v.lookAlikeCard,
  badiban: v.lookAlikeIban,
};

export const HOLDOUT_TEMPLATES: readonly string[] = [
  'Hi, this is {name}. Could you call me back on {phone}? Thanks',
  'Dear Ms. {last},\nthank you for your order. Our records show the card {card} and delivery to {city}.\nKind regards,\n{name}',
  'name,phone,email\n{name},{phone},{email}\n{name},{phone},{email}',
  '{"customer": {"name": "{name}", "phone": "{phone}", "email": "{email}"}, "ref": "{x}"}',
  'Ruf mich bitte unter {phone} an, oder schreib an {email}. Gruß, {first}',
  'Mon numéro est le {phone}, je suis à {city} jusqu’à vendredi.',
  'Llámame al {phone} o escribe a {obf}. Un saludo, {first}',
  '2024-03-02T10:11:12Z WARN payment failed card={card} user={email} latency=231ms',
  'Please wire the deposit to IBAN {iban} (account holder {name}) before {x}.',
  'Bankverbindung: {iban}\nKontoinhaber: {name}, {city}',
  '{name}\nSenior Engineer | {acme}\nM: {phone}\nE: {email}',
  'contact me at {obf} if the form does not work',
  'Here is my config, why does it fail?\n```\nDATABASE_URL={pw}\nLOG_LEVEL=debug\n```',
  'curl call that returns 401: {pw}',
  'can you check why CI fails, token is {key} and the build is {x}',
  'export HF_TOKEN={key}\npython train.py --epochs 3',
  'Patient: {comma}, DOB withheld, referred from {city}. Callback {phone}.',
  'My colleague {first} said the number {phone} is wrong, it should be {phone}.',
  'Summarise: {name} from {city} complained about {x}; she paid with {card}.',
  '| name | phone |\n|---|---|\n| {name} | {phone} |\n| {name} | {phone} |',
  'Reminder: meeting with {name} at {x} about the {city} office.',
  'Order {x} shipped. Tracking and {x} attached. No personal data here.',
  'The tests in {x} fail with error code {x}; see build {x}.',
  'Refund {badcard} was rejected because the number is invalid, IBAN {badiban} also bounced.',
  'hey its {first} lol text me {phone}',
  'Ticket from {email}: "I changed my password to {pw} and now I cannot log in"',
  'Angaben: Herr {name}, Tel. {phone}, IBAN {iban}',
  'Gentile {name}, la contattiamo dal numero {phone} per la consegna a {city}.',
  'yaml:\n  smtp:\n    user: {email}\n    {pw}\n  slack_webhook: {key}',
  'I met {first} {last} in {city}; we talked about {x} and {x}.',
  'card on file: {card}; backup card {card}',
  'Contact form\nName: {name}\nPhone: {phone}\nMessage: please call after {x}',
  'git remote add origin {pw}',
  'WhatsApp: {phone} ({first})',
  'Send the contract to {email} and cc {email}.',
  'prices: {x}, {x} and {x}; ids {x} / {x}',
  'Transfer from {iban} to {iban} failed with {x}.',
  'npm publish fails, my .npmrc has //registry.npmjs.org/:_authToken={key}',
  'The speaker, Dr. {last}, lives near {city} and can be reached on {phone}.',
  'Rufnummer {phone}, Fax {phone}',
];

/**
 * Templates for countries, organisations, street addresses and dates of
 * birth, sampled after the ones above (so those samples stay as they were)
 * and split the same way by index.
 */
export const PLACE_TEMPLATES: readonly string[] = [
  'Shipping address: {address}. Please deliver before {date}.',
  'Neue Anschrift: {address}\nGültig ab {date}.',
  'Patient {name}, DOB {dob}, lives at {address}.',
  'Name: {name}\nDate of birth: {dob}\nAddress: {address}',
  'Geboren am {dob} in {city}, wohnhaft in {country}.',
  'Je suis née le {dob} à {city}, j’habite en {country}.',
  'fecha de nacimiento: {dob}; país: {country}',
  'Applicant was born on {dob} in {country}.',
  'I work for {org} in {city}; before that I was at {org}.',
  'Invoice from {org}, {address}, dated {date}.',
  'The contract between {org} and {org} starts on {date}.',
  'Sie arbeitet bei {org} und ist am {dob} geboren.',
  'We moved from {country} to {city} last year; the office is at {address}.',
  'Flight to {city} via {country} on {date}, seat {x}.',
  'Report due {date}; revenue of {x} was booked in Q3.',
  'Release {x} shipped on {date}; the next one is planned for {date}.',
];

const SEEDS: Record<HoldoutSplit, number> = { dev: 101, test: 202 };

/** Options of {@link generateHoldoutSet}. */
export interface HoldoutOptions {
  split: HoldoutSplit;
  /** Samples from {@link HOLDOUT_TEMPLATES}. Default 1500. */
  size?: number;
  /** Samples from {@link PLACE_TEMPLATES}, drawn after the others. Default 500. */
  placeSize?: number;
  /** Default: the split's own seed. */
  seed?: number;
}

/** The samples of one split; `family` is the first labelled entity type (or `OTHER`). */
export function generateHoldoutSet(options: HoldoutOptions): EvalSample[] {
  const r = new v.Rng(options.seed ?? SEEDS[options.split]);
  const ofSplit = (list: readonly string[]) => list.filter((_, i) => i % 2 === (options.split === 'dev' ? 0 : 1));
  const samples: EvalSample[] = [];
  const draw = (templates: readonly string[], count: number, prefix: string) => {
    for (let n = 0; n < count; n++) {
      const index = r.int(templates.length);
      const { text, gold } = fill(templates[index]!, r);
      const family = (gold[0]?.entity ?? 'OTHER') as EvalSample['family'];
      samples.push({
        text,
        gold: gold as GoldSpan[],
        family,
        kind: gold.length > 0 ? 'positive' : 'negative',
        generator: `holdout-${options.split}-${prefix}${index}`,
      });
    }
  };
  draw(ofSplit(HOLDOUT_TEMPLATES), options.size ?? 1500, '');
  draw(ofSplit(PLACE_TEMPLATES), options.placeSize ?? 500, 'p');
  return samples;
}

function fill(
  template: string,
  r: v.Rng,
): { text: string; gold: { entity: HoldoutEntity; start: number; end: number }[] } {
  let text = '';
  const gold: { entity: HoldoutEntity; start: number; end: number }[] = [];
  for (const part of template.split(/(\{[a-z]+\})/)) {
    const slot = /^\{([a-z]+)\}$/.exec(part)?.[1];
    const make = slot ? SLOTS[slot] : undefined;
    if (!make) {
      text += part;
      continue;
    }
    const piece = make(r);
    for (const span of piece.spans)
      gold.push({ entity: span.entity, start: text.length + span.start, end: text.length + span.end });
    text += piece.text;
  }
  return { text, gold };
}
