import { PatternRecognizer } from './pattern-recognizer.ts';

const MONTHS = [
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
  'Januar',
  'Jänner',
  'Februar',
  'März',
  'Mai',
  'Juni',
  'Juli',
  'Oktober',
  'Dezember',
  'janvier',
  'février',
  'mars',
  'avril',
  'juin',
  'juillet',
  'août',
  'septembre',
  'octobre',
  'novembre',
  'décembre',
  'enero',
  'febrero',
  'marzo',
  'abril',
  'mayo',
  'junio',
  'julio',
  'agosto',
  'septiembre',
  'setiembre',
  'octubre',
  'noviembre',
  'diciembre',
  'gennaio',
  'febbraio',
  'aprile',
  'maggio',
  'giugno',
  'luglio',
  'settembre',
  'ottobre',
  'dicembre',
  'Jan\\.?',
  'Feb\\.?',
  'Mar\\.?',
  'Apr\\.?',
  'Jun\\.?',
  'Jul\\.?',
  'Aug\\.?',
  'Sept?\\.?',
  'Oct\\.?',
  'Nov\\.?',
  'Dec\\.?',
].sort((a, b) => b.length - a.length);
const MONTH = `(?:${MONTHS.join('|')})`;
const YEAR = String.raw`(?:1[89]\d\d|20\d\d)`;

/** `1985-03-12`, `12/03/1985`, `12.3.1985`, `12-03-85`. */
const NUMERIC = new RegExp(
  String.raw`(?<![\d./-])(?:${YEAR}-\d\d-\d\d|\d{1,2}[./-]\d{1,2}[./-](?:${YEAR}|\d\d))(?![\d]|[./-]\d)`,
  'g',
);
/** `12 March 1985`, `March 12, 1985`, `12. März 1985`, `3 de marzo de 1985`, `1er mai 1990`, `Mar 03 1985`. */
const WRITTEN = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:\d{1,2}(?:st|nd|rd|th|er|\.|º)? (?:de )?${MONTH},? (?:de )?${YEAR}|${MONTH} \d{1,2}(?:st|nd|rd|th)?,? ${YEAR})(?![\p{N}])`,
  'giu',
);

/** Whether day, month and year read as a calendar date in either day-first or month-first order. */
function plausible(value: string): boolean {
  const parts = value.split(/[./-]/).map(Number);
  if (parts.length !== 3 || parts.some(Number.isNaN)) return false;
  const [a, b, c] = parts as [number, number, number];
  if (a > 999) return b >= 1 && b <= 12 && c >= 1 && c <= 31;
  const dayMonth = (d: number, m: number) => d >= 1 && d <= 31 && m >= 1 && m <= 12;
  return dayMonth(a, b) || dayMonth(b, a);
}

/**
 * Dates of birth: a date in a common numeric or written format (English,
 * German, French, Spanish, Italian month names) scores 0.5, below the
 * default threshold, because most dates in a prompt are deadlines and
 * invoices; a birth word nearby ("born", "DOB", "date of birth",
 * "birthday", "geboren", "Geburtsdatum", "né(e)", "naissance",
 * "nacimiento", "nato/a") adds 0.35. Off unless listed in DLP_ENTITIES.
 */
export function dateOfBirthRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'date-of-birth',
    entity: 'DATE_OF_BIRTH',
    patterns: [
      { name: 'numeric', regex: NUMERIC, score: 0.5 },
      { name: 'written', regex: WRITTEN, score: 0.5 },
    ],
    context: {
      positive: [
        'born',
        'birth',
        'birthday',
        'birthdate',
        'dob',
        'geboren',
        'geb',
        'geburtsdatum',
        'geburtstag',
        'né',
        'née',
        'naissance',
        'nacimiento',
        'nacido',
        'nacida',
        'nato',
        'nata',
        'nascita',
        'nascimento',
        'nascido',
        'nascida',
      ],
    },
    validate: (value, pattern) => (pattern.name === 'written' || plausible(value) ? pattern.score : 0),
    normalize: (value) => value.toLowerCase(),
  });
}
