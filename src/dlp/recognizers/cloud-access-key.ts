import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * Cloud credentials, by their documented formats: AWS access key ids
 * (`AKIA`/`ASIA`… + 16 base32 characters), AWS secret keys where they are
 * assigned (`aws_secret_access_key = …`), Google API keys (`AIza` + 35),
 * Azure storage account keys (`AccountKey=` + 88 base64). The formats are
 * specific enough that a match is a credential: 1.0, like a checksum-validated value.
 */
export function cloudAccessKeyRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'cloud-access-key',
    entity: 'CLOUD_ACCESS_KEY',
    patterns: [
      {
        name: 'aws-access-key-id',
        regex: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?![A-Za-z0-9])/g,
        score: 1,
        requires: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
      },
      {
        name: 'aws-secret-access-key',
        regex:
          /(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key)["']?\s*[:=]\s*["']?(?<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
        score: 1,
        requires: ['secret', 'SECRET', 'Secret'],
      },
      { name: 'google-api-key', regex: /(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])/g, score: 1, requires: ['AIza'] },
      {
        name: 'azure-storage-key',
        regex: /AccountKey=(?<value>[A-Za-z0-9+/]{86}==)/dg,
        score: 1,
        requires: ['AccountKey='],
      },
    ],
  });
}
