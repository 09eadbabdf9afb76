import type { EntityType } from '../entities.ts';
import type { Recognizer } from '../recognizer.ts';
import { apiKeyRecognizer } from './api-key.ts';
import { bearerTokenRecognizer } from './bearer-token.ts';
import { cloudAccessKeyRecognizer } from './cloud-access-key.ts';
import { creditCardRecognizer } from './credit-card.ts';
import { dateOfBirthRecognizer } from './date-of-birth.ts';
import { EmailRecognizer } from './email.ts';
import { IbanRecognizer } from './iban.ts';
import { IpAddressRecognizer } from './ip-address.ts';
import { jwtRecognizer } from './jwt.ts';
import { LocationRecognizer } from './location.ts';
import { ObfuscatedEmailRecognizer } from './obfuscated-email.ts';
import { organizationRecognizer } from './organization.ts';
import { PhoneNumberRecognizer } from './phone-number.ts';
import { passwordRecognizer } from './password.ts';
import { PersonNameRecognizer } from './person-name.ts';
import { privateKeyRecognizer } from './private-key.ts';
import { streetAddressRecognizer } from './street-address.ts';
import { usSsnRecognizer } from './us-ssn.ts';

/** Options of {@link defaultRecognizers}. */
export interface DefaultRecognizerOptions {
  /** Regions for national phone numbers; see {@link PhoneNumberRecognizerOptions.regions}. */
  phoneRegions?: readonly string[];
  /** The entity types wanted; the opt-in recognizers (people, places, organisations, addresses, birth dates) are built only when listed. */
  entities?: readonly EntityType[];
}

/**
 * Every built-in recognizer, in priority order: on equal score and span the
 * earlier one wins, so specific secrets come before the generic bearer token.
 */
export function defaultRecognizers(options: DefaultRecognizerOptions = {}): Recognizer[] {
  const recognizers: Recognizer[] = [
    privateKeyRecognizer(),
    jwtRecognizer(),
    cloudAccessKeyRecognizer(),
    apiKeyRecognizer(),
    bearerTokenRecognizer(),
    passwordRecognizer(),
    new EmailRecognizer(),
    new ObfuscatedEmailRecognizer(),
    new IbanRecognizer(),
    creditCardRecognizer(),
    usSsnRecognizer(),
    new PhoneNumberRecognizer(options.phoneRegions ? { regions: options.phoneRegions } : {}),
    new IpAddressRecognizer(),
  ];
  const wanted = (entity: EntityType) => options.entities?.includes(entity) ?? false;
  // A known place before a name: on a tie ("lives near Chiang Mai") the place wins.
  if (wanted('LOCATION')) recognizers.push(new LocationRecognizer());
  if (wanted('PERSON')) recognizers.push(new PersonNameRecognizer());
  if (wanted('ORGANIZATION')) recognizers.push(organizationRecognizer());
  if (wanted('STREET_ADDRESS')) recognizers.push(streetAddressRecognizer());
  if (wanted('DATE_OF_BIRTH')) recognizers.push(dateOfBirthRecognizer());
  return recognizers;
}
