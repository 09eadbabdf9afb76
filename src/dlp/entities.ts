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
] as const;

/**
 * Types the engine leaves out unless DLP_ENTITIES names them: dictionary and
 * layout findings (people, places, organisations, addresses, birth dates)
 * are less certain than checksums and formats.
 */
export const OPT_IN_ENTITIES: readonly EntityType[] = ['PERSON', 'LOCATION', 'ORGANIZATION', 'STREET_ADDRESS', 'DATE_OF_BIRTH'];

export type EntityType = (typeof ENTITY_TYPES)[number];

/** What the gateway does with findings at or above the threshold (docs/dlp.md). */
export const DLP_ACTIONS = ['redact', 'block', 'log'] as const;

export type DlpAction = (typeof DLP_ACTIONS)[number];

export function isEntityType(value: string): value is EntityType {
  return (ENTITY_TYPES as readonly string[]).includes(value);
}
