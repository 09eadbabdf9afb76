import { jwtValid } from '../validators/jwt.ts';
import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * JSON Web Tokens: `eyJ…` (base64url of `{"`) header and payload and a
 * signature. 1.0 when the header decodes to JSON naming an `alg`, else 0.4.
 */
export function jwtRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'jwt',
    entity: 'JWT',
    patterns: [
      {
        name: 'jws-compact',
        regex: /(?<![\w-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*(?![\w-])/g,
        score: 0.4,
        requires: ['eyJ'],
      },
    ],
    validate: (value, pattern) => (jwtValid(value) ? 1 : pattern.score),
  });
}
