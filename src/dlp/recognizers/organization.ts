import { isEnglishWord } from '../../cache/english-dictionary.ts';
import { PatternRecognizer } from './pattern-recognizer.ts';

/** Legal forms after a company's name, longest first so `GmbH & Co. KG` wins over `GmbH`. */
const LEGAL_FORMS = [
  'GmbH & Co\\. KG',
  'S\\.A\\. de C\\.V\\.',
  'Co\\., Ltd\\.',
  'Pty\\.? Ltd\\.?',
  'Sp\\. z o\\.o\\.',
  'S\\.à r\\.l\\.',
  'Incorporated',
  'Corporation',
  'Limited',
  'GmbH',
  'gGmbH',
  'UG',
  'OHG',
  'KGaA',
  'KG',
  'AG',
  'e\\.V\\.',
  'Inc\\.?',
  'LLC',
  'L\\.L\\.C\\.',
  'LLP',
  'Ltd\\.?',
  'plc',
  'PLC',
  'Corp\\.?',
  'S\\.A\\.S\\.',
  'S\\.A\\.',
  'SAS',
  'SARL',
  'S\\.r\\.l\\.',
  'Srl',
  'S\\.p\\.A\\.',
  'SpA',
  'S\\.L\\.(?:U\\.)?',
  'B\\.V\\.',
  'BV',
  'N\\.V\\.',
  'NV',
  'Oyj',
  'Oy',
  'AB',
  'A/S',
  'ASA',
  'K\\.K\\.',
  'Kft\\.',
  's\\.r\\.o\\.',
  'a\\.s\\.',
  'd\\.o\\.o\\.',
  'Ltda\\.?',
  'S\\.A\\.B\\.',
];
/** A word of a company's name: capitalised or a number, or a joining word between two of them. */
const NAME_WORD = String.raw`(?:\p{Lu}[\p{L}\p{M}\p{N}'’.-]*|\d[\p{L}\d]*)`;
// "and" is left out: "between Lotus Inc. and Kestrel AB" names two companies.
const JOINER = String.raw`(?:&|of|de|van|von|der|di)`;
const WITH_LEGAL_FORM = new RegExp(
  String.raw`(?<![\p{L}\p{N}])${NAME_WORD}(?: (?:${JOINER} )?${NAME_WORD}){0,4},? (?:${LEGAL_FORMS.join('|')})(?![\p{L}\p{N}])`,
  'gu',
);

/**
 * The last word of an organisation's name that a person's or a place's never ends in (`Koch
 * Industries`, `Bell Labs`, `Virgin Group`, `Palantir Technologies`), lower case. Written from general
 * knowledge of company names.
 */
export const ORGANIZATION_HEADS: ReadonlySet<string> = new Set(
  [
    'enterprises industries technologies labs laboratories corporation holdings group systems solutions dynamics',
    'worldwide partners associates consulting pharmaceuticals insurance airlines airways motors foods media',
    'studios ventures networks software logistics',
  ]
    .join(' ')
    .split(' '),
);
/** The head words as they follow a name: ` Technologies`. */
const HEADS_AFTER_NAME = [...ORGANIZATION_HEADS].map((w) => ` ${w[0]!.toUpperCase()}${w.slice(1)}`);
const HEAD_ANYWHERE = new RegExp(String.raw`(?:${HEADS_AFTER_NAME.join('|')})(?![\p{L}\p{N}])`, 'u');
const WITH_HEAD = new RegExp(
  String.raw`(?<![\p{L}\p{N}])${NAME_WORD}(?: (?:${JOINER} )?${NAME_WORD}){0,2}(?:${HEADS_AFTER_NAME.join('|')})(?![\p{L}\p{N}])`,
  'gu',
);

const ARTICLES = new Set([
  'The',
  'A',
  'An',
  'Our',
  'Your',
  'My',
  'This',
  'That',
  'Their',
  'Its',
  'Der',
  'Die',
  'Das',
  'Le',
  'La',
  'Les',
  'El',
  'Il',
]);

/**
 * Large employers whose names appear without a legal form. Written from
 * general knowledge; a name here scores 0.55 and needs a word such as "at",
 * "for", "company" or "bei" nearby to act at the default threshold.
 */
const WELL_KNOWN = [
  'Accenture',
  'Alibaba',
  'Allianz',
  'Aramco',
  'AXA',
  'BASF',
  'Bayer',
  'BMW',
  'Bosch',
  'BNP Paribas',
  'Capgemini',
  'Carrefour',
  'Deloitte',
  'Deutsche Bank',
  'Deutsche Telekom',
  'Ericsson',
  'ExxonMobil',
  'Foxconn',
  'Goldman Sachs',
  'HSBC',
  'Huawei',
  'IBM',
  'Infosys',
  'Intel',
  'JPMorgan',
  'KPMG',
  'Lenovo',
  'LVMH',
  'McKinsey',
  'Meta',
  'Microsoft',
  'Nestlé',
  'Nokia',
  'Novartis',
  'Petrobras',
  'Pfizer',
  'Philips',
  'PwC',
  'Reliance Industries',
  'Roche',
  'Samsung',
  'Santander',
  'SAP',
  'Shell',
  'Siemens',
  'Sinopec',
  'Sony',
  'Tata Consultancy Services',
  'Tencent',
  'TotalEnergies',
  'Toyota',
  'Unilever',
  'Volkswagen',
  'Walmart',
  'Wipro',
];
const WELL_KNOWN_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:${WELL_KNOWN.sort((a, b) => b.length - a.length).join('|')})(?![\p{L}\p{N}])`,
  'gu',
);

/**
 * Organisations: capitalised words followed by a legal form in the style of
 * many countries (`Nordlicht Logistik GmbH`, `Blue Harbor Ltd`, `Rossi &
 * Figli S.p.A.`, `Sunrise Co., Ltd.`), 0.85; a coined name before a word
 * only organisations' names end in (`Palantir Technologies`), 0.85, and English
 * words or a word in capitals before one (`Umbrella Group`), 0.5; a short list of large
 * employers without one, 0.55 (each plus 0.35 with a word such as "at", "for",
 * "company", "employer", "bei", "chez" nearby). Off unless listed in
 * DLP_ENTITIES: organisations are mostly not personal data, but an
 * employer next to a name can identify a person.
 */
export function organizationRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'organization',
    entity: 'ORGANIZATION',
    patterns: [
      { name: 'legal-form', regex: WITH_LEGAL_FORM, score: 0.85 },
      { name: 'well-known', regex: WELL_KNOWN_RE, score: 0.55 },
      { name: 'head-word', regex: WITH_HEAD, score: 0.85, requires: HEAD_ANYWHERE },
    ],
    context: {
      positive: [
        'at',
        'for',
        'with',
        'from',
        'between',
        'company',
        'employer',
        'client',
        'customer',
        'vendor',
        'supplier',
        'works',
        'work',
        'worked',
        'joined',
        'bei',
        'firma',
        'chez',
        'société',
        'empresa',
        'azienda',
        'arbeitet',
      ],
    },
    validate: (value, pattern) => {
      if (pattern.name === 'well-known') return pattern.score;
      const words = value.split(' ').slice(0, -1);
      // "The Inc. magazine": an article is not a name.
      if (words.every((w) => ARTICLES.has(w))) return 0;
      // "Research Group", "Stark Labs": English words before the head need a word such as "at" nearby; a coined name does not.
      if (pattern.name === 'head-word')
        return words.every((w) => ARTICLES.has(w) || isEnglishWord(w) || !/\p{Ll}/u.test(w)) ? 0.5 : pattern.score;
      // "Q3 AG", "TEAM AB": one upper-case word before a two-letter form is as often a heading or code.
      const shortForm = value.length - words.join(' ').length <= 3;
      return shortForm && words.length <= 1 && words[0] === words[0]?.toUpperCase() ? 0.5 : pattern.score;
    },
    normalize: (value) => value.toLowerCase(),
  });
}
