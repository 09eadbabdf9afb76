import { none, whole, type Piece, type Rng } from './holdout-values.ts';

/**
 * Value makers of the held-out DLP set for countries, organisations, street
 * addresses and dates of birth (holdout-set.ts), in the style of
 * holdout-values.ts: hand-written lists, no faker, the seeded PRNG. Written
 * before the recognizers of these types.
 */

export const COUNTRIES = [
  'India',
  'China',
  'Indonesia',
  'Pakistan',
  'Nigeria',
  'Brazil',
  'Bangladesh',
  'Russia',
  'Ethiopia',
  'Mexico',
  'Japan',
  'Egypt',
  'the Philippines',
  'Vietnam',
  'Iran',
  'Türkiye',
  'Germany',
  'Thailand',
  'France',
  'Italy',
  'Spain',
  'Poland',
  'Romania',
  'the Netherlands',
  'Belgium',
  'Portugal',
  'Sweden',
  'Greece',
  'Ireland',
  'Canada',
  'Kenya',
  'Argentina',
  'Deutschland',
  'Frankreich',
  'España',
  'Italia',
  'Brasil',
  'México',
  'Österreich',
  'Schweiz',
  'South Africa',
  'United Kingdom',
  'New Zealand',
  'Sri Lanka',
  'Côte d’Ivoire',
];

export const country = (r: Rng): Piece => whole('LOCATION', r.pick(COUNTRIES));

const ORG_STEMS = [
  'Nordlicht',
  'Blue Harbor',
  'Kestrel',
  'Sunrise',
  'Van Dijk',
  'Okafor Brothers',
  'Lotus',
  'Adler',
  'Pacific Rim',
  'Sakura',
  'Iberia Verde',
  'Meridian',
  'Baltic',
  'Granite Peak',
  'Silverline',
  'Rossi & Figli',
  'Tigris',
  'Cascadia',
  'Hoffmann',
  'Andes',
  'Mekong',
  'Northwind',
];
const ORG_KINDS = [
  'Logistics',
  'Solutions',
  'Holding',
  'Bau',
  'Consulting',
  'Software',
  'Foods',
  'Textiles',
  'Energy',
  'Partners',
  'Technologies',
  'Medical',
];
const LEGAL_FORMS = [
  'GmbH',
  'Ltd',
  'Ltd.',
  'Inc.',
  'Inc',
  'LLC',
  'S.A.',
  'plc',
  'AG',
  'S.r.l.',
  'B.V.',
  'SAS',
  'Pty Ltd',
  'Co., Ltd.',
  'S.L.',
  'GmbH & Co. KG',
  'Oy',
  'AB',
  'S.p.A.',
  'Corp.',
  'SARL',
  'Sp. z o.o.',
  'N.V.',
  'LLP',
];
const KNOWN_COMPANIES = [
  'Siemens',
  'Deutsche Bank',
  'Toyota',
  'Unilever',
  'Samsung',
  'Nestlé',
  'Infosys',
  'Petrobras',
  'Tata Consultancy Services',
  'Alibaba',
  'Accenture',
  'Volkswagen',
];

/** A company: capitalised words and a legal form, one or two words before it, or a well-known name without one. */
export function organization(r: Rng): Piece {
  if (r.next() < 0.15) return whole('ORGANIZATION', r.pick(KNOWN_COMPANIES));
  const stem = r.pick(ORG_STEMS);
  const kind = r.next() < 0.6 ? ` ${r.pick(ORG_KINDS)}` : '';
  return whole('ORGANIZATION', `${stem}${kind} ${r.pick(LEGAL_FORMS)}`);
}

const STREETS_EN = [
  'Maple',
  'Oak',
  'Baker',
  'Church',
  'Highland',
  'Station',
  'Victoria',
  'Sunset',
  'Lakeview',
  'Elm',
  'Kingsway',
  'Mill',
];
const STREET_TYPES_EN = [
  'Street',
  'St.',
  'Avenue',
  'Ave',
  'Road',
  'Rd.',
  'Lane',
  'Boulevard',
  'Blvd',
  'Drive',
  'Dr.',
  'Court',
  'Way',
  'Place',
];
const STREETS_DE = [
  'Haupt',
  'Linden',
  'Bahnhof',
  'Schiller',
  'Goethe',
  'Berliner ',
  'Am Markt',
  'Birken',
  'Kirch',
  'Garten',
];
const STREET_TYPES_DE = ['straße', 'str.', 'weg', 'allee', 'gasse', 'platz', 'ring'];
const VOIES_FR = [
  'rue de la Paix',
  'avenue Victor Hugo',
  'boulevard Haussmann',
  'rue du Moulin',
  'place de la République',
  'chemin des Vignes',
  'allée des Tilleuls',
];
const VIAS_ES_IT_PT = [
  'Calle Mayor',
  'Calle de Alcalá',
  'Avenida de la Constitución',
  'C/ Gran Vía',
  'Via Roma',
  'Via Garibaldi',
  'Corso Vittorio Emanuele',
  'Rua das Flores',
  'Avenida Paulista',
  'Rua Augusta',
];
const STRATEN_NL = ['Kerkstraat', 'Dorpsstraat', 'Prinsengracht', 'Stationsweg', 'Molenlaan', 'Julianastraat'];
const UNITS = ['Apt 4B', 'Apt. 12', 'Suite 300', 'Unit 7', 'Flat 2', '#14', 'Ste 210'];

const houseNumber = (r: Rng) =>
  `${1 + r.int(r.next() < 0.5 ? 30 : 2000)}${r.next() < 0.15 ? r.pick(['a', 'b', 'B', 'A']) : ''}`;

/** A street address in an English, German, French, Spanish/Italian/Portuguese or Dutch layout, sometimes with a unit, postcode and city. */
export function streetAddress(r: Rng): Piece {
  const style = r.int(6);
  let text: string;
  if (style === 0 || style === 1) {
    text = `${houseNumber(r)} ${r.pick(STREETS_EN)} ${r.pick(STREET_TYPES_EN)}`;
    if (r.next() < 0.35) text += `, ${r.pick(UNITS)}`;
    if (r.next() < 0.4)
      text += r.pick([
        `, Springfield, IL ${r.digits(5)}`,
        `, London ${r.pick(['SW1A 1AA', 'EC1V 9HX', 'N1 7GU'])}`,
        `, Toronto, ON M5V 2T6`,
      ]);
  } else if (style === 2) {
    const stem = r.pick(STREETS_DE);
    text = `${stem}${stem.endsWith(' ') || stem === 'Am Markt' ? (stem === 'Am Markt' ? '' : 'Straße') : r.pick(STREET_TYPES_DE)} ${houseNumber(r)}`;
    if (r.next() < 0.5) text += `, ${r.digits(5)} ${r.pick(['Berlin', 'München', 'Köln', 'Leipzig'])}`;
  } else if (style === 3) {
    text = `${houseNumber(r)}${r.next() < 0.2 ? ' bis' : ''} ${r.pick(VOIES_FR)}`;
    if (r.next() < 0.6) text += `, ${r.digits(5)} ${r.pick(['Paris', 'Lyon', 'Marseille', 'Nantes'])}`;
  } else if (style === 4) {
    text = `${r.pick(VIAS_ES_IT_PT)}${r.next() < 0.5 ? ', ' : ' '}${houseNumber(r)}`;
    if (r.next() < 0.3) text += `, ${r.pick(['3º B', '2.º izq.', 'piano 2', 'int. 5'])}`;
    if (r.next() < 0.4) text += `, ${r.digits(5)} ${r.pick(['Madrid', 'Sevilla', 'Roma', 'Milano'])}`;
  } else {
    text = `${r.pick(STRATEN_NL)} ${houseNumber(r)}`;
    if (r.next() < 0.5)
      text += `, ${r.digits(4)} ${r.chars(2, 'ABCDEFGHJKLMNPRSTVWXZ')} ${r.pick(['Utrecht', 'Amsterdam', 'Eindhoven'])}`;
  }
  return whole('STREET_ADDRESS', text);
}

const MONTHS = {
  en: [
    'January',
    'February',
    'March',
    'April',
    'May',
    'June',
    'July',
    'August',
    'September',
    'October',
    'November',
    'December',
  ],
  de: [
    'Januar',
    'Februar',
    'März',
    'April',
    'Mai',
    'Juni',
    'Juli',
    'August',
    'September',
    'Oktober',
    'November',
    'Dezember',
  ],
  fr: [
    'janvier',
    'février',
    'mars',
    'avril',
    'mai',
    'juin',
    'juillet',
    'août',
    'septembre',
    'octobre',
    'novembre',
    'décembre',
  ],
  es: [
    'enero',
    'febrero',
    'marzo',
    'abril',
    'mayo',
    'junio',
    'julio',
    'agosto',
    'septiembre',
    'octubre',
    'noviembre',
    'diciembre',
  ],
};

/** A calendar date in a numeric or written format of one of several languages. */
export function dateText(r: Rng, year = 1940 + r.int(66)): string {
  const m = r.int(12);
  const d = 1 + r.int(28);
  const dd = String(d).padStart(2, '0');
  const mm = String(m + 1).padStart(2, '0');
  return r.pick([
    () => `${year}-${mm}-${dd}`,
    () => `${dd}/${mm}/${year}`,
    () => `${mm}/${dd}/${year}`,
    () => `${dd}.${mm}.${year}`,
    () => `${d}.${m + 1}.${year}`,
    () => `${MONTHS.en[m]} ${d}, ${year}`,
    () => `${d} ${MONTHS.en[m]} ${year}`,
    () => `${d}. ${MONTHS.de[m]} ${year}`,
    () => `${d} ${MONTHS.fr[m]} ${year}`,
    () => `${d} de ${MONTHS.es[m]} de ${year}`,
    () => `${MONTHS.en[m]!.slice(0, 3)} ${dd} ${year}`,
  ])();
}

export const dateOfBirth = (r: Rng): Piece => whole('DATE_OF_BIRTH', dateText(r));

/** A date that is not a birth date (an invoice, a meeting, a deadline): never labelled. */
export const plainDate = (r: Rng): Piece => none(dateText(r, 2015 + r.int(12)));
