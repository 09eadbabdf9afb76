import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * PEM and OpenSSH/PGP private key blocks, from the BEGIN line to the END line
 * (or, when the block is cut short, to the end of its base64 body). The body
 * may be indented or carry JSON's `\n` escapes, as in a pasted service-account
 * file. Score 1.0: nothing else looks like this.
 */
export function privateKeyRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'private-key',
    entity: 'PRIVATE_KEY',
    patterns: [
      {
        name: 'pem-block',
        regex:
          /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:Proc-Type:[^\n]*|DEK-Info:[^\n]*|Version:[^\n]*|Comment:[^\n]*|[A-Za-z0-9+/=\\]|\r?\n[ \t]*)*(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?/g,
        score: 1,
        requires: ['PRIVATE KEY'],
      },
    ],
  });
}
