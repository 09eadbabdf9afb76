import { PatternRecognizer } from './pattern-recognizer.ts';

/**
 * Passwords written next to what announces them: inside a URL
 * (`postgres://app:<password>@db…`), after a password keyword
 * (`password=…`, `DB_PASSWORD: …`, `"passwd": "…"`, `pwd=…`) and in curl's
 * `-u user:<password>`. Only the password is the span, so the line still
 * reads. References rather than values (`${DB_PASSWORD}`, `os.environ[…]`,
 * `process.env.X`, `<password>`, `****`) are not passwords and are skipped.
 *
 * Score 1.0; 0.5 after a keyword when the value is a plain lower-case word
 * ("password: click here" is prose more often than a password).
 */
const REFERENCE = /^(?:[$%<{*]|os\.|process\.|getenv|env\(|secrets?\.|vault:|null$|none$|true$|false$|x{3,}$|\.{3})/i;

export function passwordRecognizer(): PatternRecognizer {
  return new PatternRecognizer({
    name: 'password',
    entity: 'PASSWORD',
    patterns: [
      // Starts at the literal "://", which the engine finds fast; the scheme before it does not matter.
      {
        name: 'url-userinfo',
        regex: /:\/\/[^\s:/@]{1,64}:(?<value>[^\s@/]{1,128})@[\w.-]/dg,
        score: 1,
        requires: ['://'],
      },
      {
        name: 'keyword',
        regex: /(?:passw(?:or)?[dt]|pwd|pass_?phrase)["']?\s*[:=]\s*["']?(?<value>[^\s"',;`]{3,128})/dgi,
        score: 1,
        requires: ['assw', 'ASSW', 'Assw', 'wd', 'WD', 'hrase', 'HRASE'],
      },
      {
        name: 'curl-user',
        regex: /(?<!\S)(?:-u|--user)\s+["']?[^\s:"']{1,64}:(?<value>[^\s"']{1,128})/dg,
        score: 1,
        requires: ['-u'],
      },
    ],
    validate(value, pattern) {
      if (REFERENCE.test(value)) return 0;
      return pattern.name === 'keyword' && /^\p{Ll}+$/u.test(value) ? 0.5 : pattern.score;
    },
  });
}
