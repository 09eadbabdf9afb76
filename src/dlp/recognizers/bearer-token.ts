import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * The credential after `Bearer` (an Authorization header pasted into a
 * prompt, a curl command). Only the token is replaced, so
 * `Authorization: Bearer <BEARER_TOKEN_1>` still reads. A token of 20 or
 * more token characters with letters and digits scores 1.0; "the bearer of
 * this letter" never matches.
 */
export function bearerTokenRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'bearer-token',
    entity: 'BEARER_TOKEN',
    patterns: [
      {
        name: 'authorization-bearer',
        regex: /(?<![A-Za-z0-9])(?:[Bb]earer|BEARER)\s+(?<value>[A-Za-z0-9\-._~+/]{20,}=*)(?![A-Za-z0-9\-._~+/=])/dg,
        score: 1,
        requires: ['earer', 'EARER'],
      },
    ],
    validate: (value, pattern) => (/\d/.test(value) && /[A-Za-z]/.test(value) ? pattern.score : 0),
  });
}
