import type { Candidate, Recognizer } from '../recognizer.ts';

/**
 * E-mail addresses. Instead of a regex over the whole text (which would try
 * a local part at every character), the scan jumps from `@` to `@` and reads
 * the local part backwards and the domain forwards.
 *
 * Score 1.0 for a well-formed address whose top-level domain is alphabetic
 * and not a file extension; `icon@2x.png`, `user@localhost` and `a..b@x.io`
 * are rejected.
 */

const MAX_LOCAL = 64;
const DOMAIN = /(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?![A-Za-z0-9-])/y;

/** Suffixes that end file names far more often than addresses (`logo@2x.png`, `pkg@1.0.tgz`). */
const FILE_EXTENSIONS = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'ico', 'bmp', 'tif', 'tiff', 'avif', 'heic',
  'js', 'mjs', 'cjs', 'ts', 'tsx', 'jsx', 'css', 'scss', 'less', 'html', 'htm', 'json', 'yaml', 'yml', 'toml',
  'txt', 'pdf', 'zip', 'gz', 'tgz', 'tar', 'bz', 'xz', 'exe', 'dll', 'map', 'lock', 'xml', 'csv', 'log', 'php', 'vue',
  'mp3', 'mp4', 'wav', 'mov', 'avi', 'woff', 'woff2', 'ttf', 'otf', 'eot', 'wasm',
]);

function isLocalChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || // a-z
    (code >= 65 && code <= 90) || // A-Z
    (code >= 48 && code <= 57) || // 0-9
    code === 46 || code === 95 || code === 37 || code === 43 || code === 45 // . _ % + -
  );
}

export class EmailRecognizer implements Recognizer {
  readonly name = 'email';
  readonly entities = ['EMAIL_ADDRESS'] as const;

  analyze(text: string, out: Candidate[]): void {
    let at = text.indexOf('@');
    while (at !== -1) {
      let start = at;
      while (start > 0 && at - start < MAX_LOCAL && isLocalChar(text.charCodeAt(start - 1))) start--;
      // Too long to be a local part, or glued to more local characters: not an address.
      const glued = start > 0 && isLocalChar(text.charCodeAt(start - 1));
      while (start < at && text.charCodeAt(start) === 46) start++; // a sentence's "." is not part of the address
      DOMAIN.lastIndex = at + 1;
      const domain = DOMAIN.exec(text);
      if (!glued && domain && start < at) {
        const local = text.slice(start, at);
        const tld = (domain[1] ?? '').toLowerCase();
        const end = at + 1 + domain[0].length;
        if (!local.endsWith('.') && !local.includes('..') && !FILE_EXTENSIONS.has(tld)) {
          out.push({ entity: 'EMAIL_ADDRESS', start, end, score: 1, key: text.slice(start, end).toLowerCase(), recognizer: this.name });
        }
      }
      at = text.indexOf('@', at + 1);
    }
  }
}
