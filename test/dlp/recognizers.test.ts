import { describe, expect, it } from 'vitest';
import { DlpEngine } from '../../src/dlp/engine.ts';
import { ENTITY_TYPES, type EntityType, type RecognizedEntityType } from '../../src/dlp/entities.ts';

/**
 * Every entity type at the default threshold (0.8): positives in several
 * spellings must be found with their exact span, look-alikes must not be.
 */
// Every type, PERSON (opt-in) included.
const engine = new DlpEngine({ entities: ENTITY_TYPES });
const found = (text: string) =>
  engine.analyze(text).map((f) => ({ entity: f.entity, value: text.slice(f.start, f.end), score: f.score }));

const jwt =
  [
    { alg: 'HS256', typ: 'JWT' },
    { sub: '42', name: 'Jane Doe' },
  ]
    .map((p) => Buffer.from(JSON.stringify(p)).toString('base64url'))
    .join('.') + '.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const pem =
  '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----';

const POSITIVES: Record<RecognizedEntityType, ReadonlyArray<readonly [text: string, value: string]>> = {
  EMAIL_ADDRESS: [
    ['Please contact jane.doe@example.com about it.', 'jane.doe@example.com'],
    ['From: Jane <Jane.Doe+billing@mail.example.co.uk>', 'Jane.Doe+billing@mail.example.co.uk'],
    ['mailto:ops_team@corp.io.', 'ops_team@corp.io'],
    ['Schreib an jörg.müller@example.de bitte', 'jörg.müller@example.de'],
    ['cc 用户@例子.广告.', '用户@例子.广告'],
    ['write to john dot doe at example dot com please', 'john dot doe at example dot com'],
    ['john[at]example[dot]com', 'john[at]example[dot]com'],
  ],
  PHONE_NUMBER: [
    ['Call me at (415) 555-2671 after 5pm.', '(415) 555-2671'],
    ['Office: +1 415-555-2671', '+1 415-555-2671'],
    ['UK: +44 20 7946 0958', '+44 20 7946 0958'],
    ['London 020 7946 0958.', '020 7946 0958'],
    ['Appelez le +33 6 12 34 56 78', '+33 6 12 34 56 78'],
    ['Berlin: +49 30 901820', '+49 30 901820'],
    ['E.164 +14155552671', '+14155552671'],
    ['phone 4155552671', '4155552671'],
    ['Call +1 415 555 2671 2 times', '+1 415 555 2671'],
    ['Tel. 8 (912) 345-67-89', '8 (912) 345-67-89'],
    ['call me on 0912 345 6789 x123 today', '0912 345 6789 x123'],
    ['Mon numéro: 06.12.34.56.78', '06.12.34.56.78'],
    ['Llámame al 612 34 56 78', '612 34 56 78'],
    ['mobile (11) 96123-4567', '(11) 96123-4567'],
    ['WhatsApp 0033 6 12 34 56 78 ext. 12', '0033 6 12 34 56 78 ext. 12'],
  ],
  CREDIT_CARD: [
    ['Card 4111 1111 1111 1111 exp 04/27', '4111 1111 1111 1111'],
    ['Charge 5555-5555-5555-4444 please', '5555-5555-5555-4444'],
    ['Amex 3782 822463 10005', '3782 822463 10005'],
    ['number 6011111111111117', '6011111111111117'],
    ['JCB 3530111333300000.', '3530111333300000'],
    ['card 4111.1111.1111.1111 ok', '4111.1111.1111.1111'],
    ['card 4111 11111111 1111', '4111 11111111 1111'],
    ['card 4111\n1111\n1111\n1111', '4111\n1111\n1111\n1111'],
  ],
  IBAN_CODE: [
    ['IBAN DE89 3704 0044 0532 0130 00 OK', 'DE89 3704 0044 0532 0130 00'],
    ['Wire to GB82WEST12345698765432.', 'GB82WEST12345698765432'],
    ['FR14 2004 1010 0505 0001 3M02 606', 'FR14 2004 1010 0505 0001 3M02 606'],
    ['NO9386011117947', 'NO9386011117947'],
    ['iban de89 3704 0044 0532 0130 00', 'de89 3704 0044 0532 0130 00'],
    ['IBAN DE89-3704-0044-0532-0130-00.', 'DE89-3704-0044-0532-0130-00'],
    ['DE 89 370400440532013000', 'DE 89 370400440532013000'],
  ],
  US_SSN: [
    ['My SSN is 219-09-9998.', '219-09-9998'],
    ['Employee 536-22-1234 onboarding form', '536-22-1234'],
    ['ssn: 536 22 1234', '536 22 1234'],
    ['Social Security 536221234', '536221234'],
  ],
  IP_ADDRESS: [
    ['The server at 203.0.113.42 is down.', '203.0.113.42'],
    ['Whitelist 192.168.1.20/32 please', '192.168.1.20'],
    ['Source 2001:db8::8a2e:370:7334 failed', '2001:db8::8a2e:370:7334'],
    ['link fe80::1%eth0 up', 'fe80::1%eth0'],
    ['full 2001:0db8:85a3:0000:0000:8a2e:0370:7334', '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
  ],
  CLOUD_ACCESS_KEY: [
    ['AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE', 'AKIAIOSFODNN7EXAMPLE'],
    ['aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
    ['key = "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"', 'AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe'],
    [`AccountName=a;AccountKey=${'Ab1+'.repeat(21)}xy==;EndpointSuffix=core.windows.net`, `${'Ab1+'.repeat(21)}xy==`],
  ],
  API_KEY: [
    ['export GITHUB_TOKEN=ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R', 'ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R'],
    [
      'OPENAI_API_KEY=sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a',
      'sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a',
    ],
    ['stripe sk_live_51H8x9yZ2aBcDeFgHiJkLmNoP', 'sk_live_51H8x9yZ2aBcDeFgHiJkLmNoP'],
    [
      'slack xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx',
      'xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx',
    ],
    ['gateway key gw_Q2xhc3NpYy1nYXRld2F5LWtleS0wMTIzNDU2Nzg5YWJ', 'gw_Q2xhc3NpYy1nYXRld2F5LWtleS0wMTIzNDU2Nzg5YWJ'],
    ['gitlab glpat-x8Zk2Lm9Qw3Er5Ty7Ui1', 'glpat-x8Zk2Lm9Qw3Er5Ty7Ui1'],
    ['npm npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8', 'npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'],
    ['HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678', 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz12345678'],
    [`SG.${'aB3'.repeat(7)}x.${'Zy9'.repeat(14)}w`, `SG.${'aB3'.repeat(7)}x.${'Zy9'.repeat(14)}w`],
    ['stripe whsec_4eC39HqLyjWDarjtT1zdp7dcABCDEFGH', 'whsec_4eC39HqLyjWDarjtT1zdp7dcABCDEFGH'],
  ],
  PERSON: [
    ['Dear Ms. Okafor, thanks for writing.', 'Okafor'],
    ['Meeting notes by Jennifer Lopez for the team', 'Jennifer Lopez'],
    ['Dear Dr. Lopez-Garcia,', 'Lopez-Garcia'],
    ['Herr Pieter de Vries ruft an', 'Pieter de Vries'],
    ['Patient: Müller, Hannah, referred by the clinic', 'Müller, Hannah'],
    ['Kind regards,\nSinéad', 'Sinéad'],
    ['Hi, this is Haruto Tanabe-Okonkwo.', 'Haruto Tanabe-Okonkwo'],
  ],
  LOCATION: [
    ['She lives in Porto Alegre now.', 'Porto Alegre'],
    ['I am from Deutschland.', 'Deutschland'],
    ['Flight to Addis Ababa on Friday', 'Addis Ababa'],
    ['née à Aix-en-Provence', 'Aix-en-Provence'],
    ['moved from Côte d’Ivoire last year', 'Côte d’Ivoire'],
    ['She moved to the Netherlands.', 'the Netherlands'],
  ],
  ORGANIZATION: [
    ['Invoice from Nordlicht Logistik GmbH attached.', 'Nordlicht Logistik GmbH'],
    ['Contract with Rossi & Figli S.p.A. and Blue Harbor Ltd.', 'Rossi & Figli S.p.A.'],
    ['Contract with Rossi & Figli S.p.A. and Blue Harbor Ltd.', 'Blue Harbor Ltd.'],
    ['Supplier: Sunrise Foods Co., Ltd. (Osaka)', 'Sunrise Foods Co., Ltd.'],
    ['Kestrel Partners GmbH & Co. KG, Hamburg', 'Kestrel Partners GmbH & Co. KG'],
    ['She works for Siemens in Munich.', 'Siemens'],
    ['Engineering at Hooli Technologies since May', 'Hooli Technologies'],
    ['Employer: Wayne Enterprises', 'Wayne Enterprises'],
    ['a grant from the Umbrella Group', 'Umbrella Group'],
  ],
  STREET_ADDRESS: [
    [
      'Ship to 1234 N Maple Avenue, Apt 5B, Springfield, IL 62704 please',
      '1234 N Maple Avenue, Apt 5B, Springfield, IL 62704',
    ],
    ['He lives at 221B Baker Street.', '221B Baker Street'],
    ['Anschrift: Lindenweg 3a, 10115 Berlin', 'Lindenweg 3a, 10115 Berlin'],
    ['Neue Adresse Berliner Straße 12', 'Berliner Straße 12'],
    ['Livraison au 12 rue de la Paix, 75002 Paris', '12 rue de la Paix, 75002 Paris'],
    ['Dirección: Calle Mayor 15, 3º B, 28013 Madrid', 'Calle Mayor 15, 3º B, 28013 Madrid'],
    ['indirizzo Via Roma 10', 'Via Roma 10'],
    ['Corso Vittorio Emanuele 19', 'Corso Vittorio Emanuele 19'],
    ['Kerkstraat 25, 3511 AB Utrecht', 'Kerkstraat 25, 3511 AB Utrecht'],
  ],
  DATE_OF_BIRTH: [
    ['DOB: 12/03/1985', '12/03/1985'],
    ['Date of birth 1985-03-12, blood type A', '1985-03-12'],
    ['She was born on March 12, 1985 in Lyon.', 'March 12, 1985'],
    ['Geboren am 12. März 1985 in Köln', '12. März 1985'],
    ['Je suis née le 3 mars 1990.', '3 mars 1990'],
    ['fecha de nacimiento: 3 de marzo de 1990', '3 de marzo de 1990'],
  ],
  PASSWORD: [
    ['DATABASE_URL=postgres://app:S3cr3t-pw@db.example:5432/app', 'S3cr3t-pw'],
    ['password=hunter2!', 'hunter2!'],
    ['{"password": "Tr0ub4dor&3"}', 'Tr0ub4dor&3'],
    ['curl -u admin:letmein123 https://api.example.com', 'letmein123'],
  ],
  PRIVATE_KEY: [
    [`Why does this fail?\n${pem}\nthanks`, pem],
    [
      `{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----\\n"}`,
      '-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\n-----END PRIVATE KEY-----',
    ],
  ],
  BEARER_TOKEN: [
    ['Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543', '8f14e45fceea167a5a36dedd4bea2543'],
    ['curl -H "Authorization: bearer abc.DEF-123_xyz~456+789/000=" https://x', 'abc.DEF-123_xyz~456+789/000='],
  ],
  JWT: [
    [`token=${jwt}`, jwt],
    [`Authorization: Bearer ${jwt}`, jwt],
  ],
};

const LOOK_ALIKES: Record<RecognizedEntityType, readonly string[]> = {
  EMAIL_ADDRESS: [
    'meet me at noon at the office dot com',
    'postgres://app:pw@db.example.com/x',
    'Use logo@2x.png for retina.',
    'ping @jane on Slack',
    'npm i @scope/pkg@1.2.3',
    'user@localhost',
    'a..b@example.com',
    'x@.com',
  ],
  PHONE_NUMBER: [
    'Dial (123) 456-7890',
    '555-555-5555',
    '+1 123 456 7890',
    'order 4155552671',
    'Order 415-555-2671 shipped',
    'Meeting 2024-03-15',
    '15.03.2024',
    'ZIP 94105-1234',
    'ISBN 978-3-16-148410-0',
    'Total $1,234,567.89',
    'ts 1718000000000',
    '612 34 56 78',
    'invoice no. 8349250604',
    'card 4111 1111 1111 1112',
    'build 2024.10.12',
    '1 234 567 units',
  ],
  CREDIT_CARD: [
    'Card 4111 1111 1111 1112',
    '4111-1111-1111-1111-1111',
    'Tracking 9400 1000 0000 0000 0000 00',
    'order 1234567890123456',
    'id 12345678901234567890',
  ],
  IBAN_CODE: [
    'IBAN DE88 3704 0044 0532 0130 00',
    'XX89370400440532013000',
    'SKU AB12 CDEF GHIJ KLM',
    'DE8937040044053201300',
  ],
  US_SSN: [
    'SSN 000-12-3456',
    'SSN 666-12-3456',
    'SSN 912-34-5678',
    'SSN 536-00-1234',
    'SSN 536-22-0000',
    'sample 078-05-1120',
    'Part 536-22-1234',
    'id 536221234',
    'date 2024-03-15',
  ],
  IP_ADDRESS: [
    'Upgrade to version 1.2.3.4',
    'see section 3.1.4.1',
    'localhost 127.0.0.1',
    'bind 0.0.0.0',
    'loopback ::1',
    '999.1.1.1',
    'at 12:30:45',
    'MAC 00:1A:2B:3C:4D:5E',
    'std::vector<int>',
    'Cafe::Bad',
    'v1.2.3.4',
    '2001:db8:::1',
  ],
  CLOUD_ACCESS_KEY: [
    'AKIA1234',
    'akiaiosfodnn7example',
    'aws_secret_access_key = os.environ["AWS_SECRET_ACCESS_KEY"]',
    'AIzaShort',
  ],
  API_KEY: [
    'pip install scikit-learn sk-learn',
    'ghp_short',
    'gw_config_reload',
    'sk_live_mode',
    'sk-this-is-not-a-real-key-at-all-ok',
  ],
  PRIVATE_KEY: [
    '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----',
    '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    'the private key is in the vault',
  ],
  BEARER_TOKEN: [
    'The bearer of this letter is a friend.',
    'Bearer authentication is required everywhere',
    'Authorization: Bearer <token>',
    'Authorization: Bearer $API_TOKEN',
  ],
  JWT: ['eyJub3Rqc29u.eyJhbHNvbm90.c2ln', `eyJhbGciOiJIUzI1NiJ9`],
  PERSON: [
    'Will you deploy on Monday?',
    'Grace Hopper would approve of Java and Rust',
    'Call Jordan about the Paris office',
    'Hi Team, the Customer Portal is down',
    'Error: Python raised in March',
    'Dear Customer,',
  ],
  LOCATION: [
    'Jordan approved the pull request',
    'We use Java and Rust',
    'Santiago said the build is green',
    'The Orange plan costs more',
    'Chicago-style pizza',
  ],
  ORGANIZATION: [
    'PROVIDED AS IS, WITHOUT WARRANTY',
    'The Inc. magazine article',
    'Ltd edition print',
    'our company policy says so',
    'Sales grew in Q3 AG',
    'The Research Group met on Monday',
  ],
  STREET_ADDRESS: [
    'I came 2 place in the race',
    'Spring 2024 release',
    'see section 4 Street Fighter',
    'Version 12 Way',
    'room 101, floor 3',
  ],
  DATE_OF_BIRTH: [
    'Invoice dated 12/03/2024',
    'The meeting is on March 12, 2025.',
    'Release 1985-03-12 of the firmware',
    'version 1.2.30',
    'Born to run: 5 tips (2024)',
  ],
  PASSWORD: [
    'password=${DB_PASSWORD}',
    'password: os.environ["DB_PASSWORD"]',
    'https://example.com:8443/path',
    'reset your password: click here',
    'curl -u admin https://x',
  ],
};

describe('recognizers at the default threshold', () => {
  for (const [entity, cases] of Object.entries(POSITIVES)) {
    describe(entity, () => {
      it.each(cases)('finds %j', (text, value) => {
        expect(found(text)).toContainEqual(expect.objectContaining({ entity, value }));
      });
      it.each(LOOK_ALIKES[entity as RecognizedEntityType].map((t) => [t]))('skips the look-alike %j', (text) => {
        expect(found(text).filter((f) => f.entity === entity)).toEqual([]);
      });
    });
  }

  it('finds people only when DLP_ENTITIES asks: PERSON is opt-in', () => {
    const text = 'Dear Ms. Okafor, thanks for writing.';
    expect(new DlpEngine().entities.has('PERSON')).toBe(false);
    expect(new DlpEngine().analyze(text)).toEqual([]);
    expect(new DlpEngine({ entities: ['PERSON'] }).analyze(text).map((f) => f.entity)).toEqual(['PERSON']);
  });

  it('finds places, organisations, addresses and birth dates only when DLP_ENTITIES asks', () => {
    const text = 'Born on 12/03/1985 in Lyon, lives at 12 rue de la Paix, 75002 Paris, works for Nordlicht GmbH.';
    const optIn = ['LOCATION', 'ORGANIZATION', 'STREET_ADDRESS', 'DATE_OF_BIRTH'] as const;
    for (const entity of optIn) expect(new DlpEngine().entities.has(entity)).toBe(false);
    expect(new DlpEngine().analyze(text)).toEqual([]);
    expect(new DlpEngine({ entities: optIn }).analyze(text).map((f) => [f.entity, text.slice(f.start, f.end)])).toEqual(
      [
        ['DATE_OF_BIRTH', '12/03/1985'],
        ['LOCATION', 'Lyon'],
        ['STREET_ADDRESS', '12 rue de la Paix, 75002 Paris'],
        ['ORGANIZATION', 'Nordlicht GmbH'],
      ],
    );
  });

  it('reports nothing in plain prose with numbers, dates, versions and code', () => {
    const text =
      'We shipped v2.14.3 on 2024-10-12 and fixed 37 bugs; revenue grew 12.5% to $1,234,567.89. See section 4.2.1 and ' +
      'https://wiki.example.com/q3. `const total = items.reduce((a, b) => a + b.price * b.qty, 0);` std::vector<int> v; ' +
      'Order #20240312-0042, invoice INV-2024-000123, ticket 4512, at 12:30:45 UTC, commit 9fceb02d0ae598e95dc970b74767f19372d61af8.';
    expect(found(text)).toEqual([]);
  });
});

describe('scores', () => {
  const score = (text: string, entity: EntityType, threshold = 0) =>
    engine.analyze(text, { threshold }).find((f) => f.entity === entity)?.score;

  it('keeps a date, or a city or a country that is also a name or a word, alone below the threshold and raises it with words that place or date a person', () => {
    expect(score('Invoice dated 12/03/1985', 'DATE_OF_BIRTH')).toBe(0.5);
    expect(score('DOB 12/03/1985', 'DATE_OF_BIRTH')).toBeCloseTo(0.85);
    expect(score('ist am 12.03.1985 geboren', 'DATE_OF_BIRTH')).toBeCloseTo(0.85);
    expect(score('Invoice dated 31/31/1985', 'DATE_OF_BIRTH')).toBeUndefined();
    expect(score('Jordan approved it', 'LOCATION')).toBe(0.6);
    expect(score('She is from Jordan', 'LOCATION')).toBeCloseTo(0.95);
    expect(score('Turkey for dinner', 'LOCATION')).toBe(0.6);
    expect(score('Santiago said the build is green', 'LOCATION')).toBe(0.5);
    expect(score('Sevilla is rainy', 'LOCATION')).toBe(0.5);
    expect(score('met her in Sevilla', 'LOCATION')).toBeCloseTo(0.85);
    expect(score('Siemens reported', 'ORGANIZATION')).toBe(0.55);
    // A coined name before a word only organisations' names end in is one; English words before it need context.
    expect(score('Palantir Technologies reported', 'ORGANIZATION')).toBe(0.85);
    expect(score('Stark Labs reported', 'ORGANIZATION')).toBe(0.5);
    expect(score('She joined Stark Labs', 'ORGANIZATION')).toBeCloseTo(0.85);
    // A place that is neither a name nor a common word stands alone, unless it is part of a longer name.
    expect(score('Lyon is rainy', 'LOCATION')).toBe(0.85);
    expect(score('Nigeria won the match', 'LOCATION')).toBe(0.85);
    expect(score('Buenos Aires is large', 'LOCATION')).toBe(0.85);
    expect(score('el Real Madrid ganó', 'LOCATION')).toBe(0.5);
    expect(score('the New York Times said', 'LOCATION')).toBe(0.5);
    expect(score('Chicago-style pizza', 'LOCATION')).toBe(0.5);
    // In capitals, as in a dateline or a heading, only such a place is read as one.
    expect(score('NEW YORK 1996-08-22', 'LOCATION')).toBe(0.85);
    expect(score('SOCCER - JAPAN GET LUCKY WIN', 'LOCATION')).toBe(0.85);
    expect(score('TURKEY SANDWICH', 'LOCATION')).toBeUndefined();
    // After a title or a known first name, a place that does not stand alone is a surname.
    expect(score('transmitted to Mr. Moore via secure channel', 'LOCATION')).toBeUndefined();
    expect(score('To: Laura Cook <laura@example.com>', 'LOCATION')).toBeUndefined();
    expect(score('a pass from Michael Jordan', 'LOCATION')).toBeUndefined();
    expect(score('a tornado hit Moore', 'LOCATION')).toBe(0.5);
    expect(score('moved to Moore last year', 'LOCATION')).toBe(0.85);
    // A first name before such a word is a company, not a person.
    expect(engine.analyze('Employer: Wayne Enterprises').map((f) => f.entity)).toEqual(['ORGANIZATION']);
    expect(score('12 rue de la Paix, 75002 Paris', 'STREET_ADDRESS')).toBe(1);
    // The address outranks a name with context inside it, so no part of it is left behind.
    expect(engine.analyze('Invoice from Corso Vittorio Emanuele 19').map((f) => f.entity)).toEqual(['STREET_ADDRESS']);
    expect(engine.analyze('Invoice dated 12/03/1985', { threshold: 0.5 }).map((f) => f.entity)).toEqual([
      'DATE_OF_BIRTH',
    ]);
  });

  it('gives checksum-validated values 1.0 and rejects broken checksums outright', () => {
    expect(score('4111 1111 1111 1111', 'CREDIT_CARD')).toBe(1);
    expect(score('4111 1111 1111 1112', 'CREDIT_CARD')).toBeUndefined();
    expect(score('DE89370400440532013000', 'IBAN_CODE')).toBe(1);
    expect(score('DE88370400440532013000', 'IBAN_CODE')).toBeUndefined();
  });

  it('keeps a Luhn-valid number outside the card networks below the threshold unless "card" is near', () => {
    expect(score('ref 9111111111111110', 'CREDIT_CARD')).toBe(0.5);
    expect(score('card 9111111111111110', 'CREDIT_CARD')).toBeCloseTo(0.85);
  });

  it('scores SSNs by layout and lifts them with context', () => {
    expect(score('x 536-22-1234', 'US_SSN')).toBe(0.85);
    expect(score('x 536 22 1234', 'US_SSN')).toBe(0.6);
    expect(score('x 536221234', 'US_SSN')).toBe(0.45);
    expect(score('SSN 536221234', 'US_SSN')).toBeCloseTo(0.8);
    expect(score('order 536-22-1234', 'US_SSN')).toBeCloseTo(0.5);
  });

  it('scores phone numbers by how they are written', () => {
    expect(score('x (415) 555-2671', 'PHONE_NUMBER')).toBe(0.85);
    expect(score('x 4155552671', 'PHONE_NUMBER')).toBe(0.5);
    expect(score('mobile 4155552671', 'PHONE_NUMBER')).toBeCloseTo(0.85);
    expect(score('invoice 415-555-2671', 'PHONE_NUMBER')).toBeCloseTo(0.5);
  });

  it('scores secrets 1.0, so no threshold lets them through', () => {
    expect(score('AKIAIOSFODNN7EXAMPLE', 'CLOUD_ACCESS_KEY')).toBe(1);
    expect(score('ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R', 'API_KEY')).toBe(1);
    expect(score('Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543', 'BEARER_TOKEN')).toBe(1);
    expect(score(pem, 'PRIVATE_KEY')).toBe(1);
    expect(score(jwt, 'JWT')).toBe(1);
  });

  it('keeps loopback addresses and JWT look-alikes low', () => {
    expect(score('x 127.0.0.1', 'IP_ADDRESS')).toBe(0.3);
    expect(score('x ::1 y', 'IP_ADDRESS')).toBeUndefined(); // one group: not even a candidate
    expect(score('eyJub3Rqc29u.eyJhbHNvbm90.c2ln', 'JWT')).toBe(0.4);
  });
});
