/**
 * The entity types the DLP engine reports. Personal data first, then secrets
 * that must never reach a provider. The names are the labels of metrics and
 * the stem of redaction placeholders (`<EMAIL_ADDRESS_1>`), so they are stable.
 */
export const ENTITY_TYPES = [
  'EMAIL_ADDRESS',
  'PHONE_NUMBER',
  'CREDIT_CARD',
  'IBAN_CODE',
  'US_SSN',
  'IP_ADDRESS',
  'CLOUD_ACCESS_KEY',
  'API_KEY',
  'PRIVATE_KEY',
  'BEARER_TOKEN',
  'JWT',
  'PASSWORD',
  'PERSON',
  'LOCATION',
  'ORGANIZATION',
  'STREET_ADDRESS',
  'DATE_OF_BIRTH',
  'NRP',
  'DATE_TIME',
] as const;

/**
 * Types the engine leaves out unless DLP_ENTITIES names them: dictionary and
 * layout findings (people, places, organisations, addresses, birth dates)
 * are less certain than checksums and formats.
 */
export const OPT_IN_ENTITIES: readonly EntityType[] = [
  'PERSON',
  'LOCATION',
  'ORGANIZATION',
  'STREET_ADDRESS',
  'DATE_OF_BIRTH',
  'NRP',
  'DATE_TIME',
];

/**
 * What the DLP analyzer backend (DLP_ANALYZER_URL) is asked for by default:
 * the types that need a language model. NRP (nationality, religious or
 * political group) and DATE_TIME have no in-process recognizer.
 */
export const ANALYZER_DEFAULT_ENTITIES: readonly EntityType[] = [
  'PERSON',
  'LOCATION',
  'ORGANIZATION',
  'NRP',
  'DATE_TIME',
];

/** What happens to a request when the analyzer backend fails or misses its time budget (DLP_ANALYZER_FAILURE). */
export const ANALYZER_FAILURE_POLICIES = ['closed', 'open'] as const;

export type AnalyzerFailurePolicy = (typeof ANALYZER_FAILURE_POLICIES)[number];

export type EntityType = (typeof ENTITY_TYPES)[number];

/** Types only the analyzer backend finds: no in-process recognizer knows them. */
export const ANALYZER_ONLY_ENTITIES = ['NRP', 'DATE_TIME'] as const satisfies readonly EntityType[];

/** The types the in-process recognizers find. */
export type RecognizedEntityType = Exclude<EntityType, (typeof ANALYZER_ONLY_ENTITIES)[number]>;

/** What the gateway does with findings at or above the threshold (docs/dlp.md). */
export type DlpAction = 'redact' | 'block' | 'log';

export function isEntityType(value: string): value is EntityType {
  return (ENTITY_TYPES as readonly string[]).includes(value);
}
