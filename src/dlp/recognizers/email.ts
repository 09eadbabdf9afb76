import type { Candidate, Recognizer } from '../recognizer.ts';

/**
 * E-mail addresses, internationalised ones included (`jörg.müller@example.de`,
 * `用户@例子.广告`: letters and digits of any script in the local part and the
 * domain labels). Instead of a regex over the whole text (which would try a
 * local part at every character), the scan jumps from `@` to `@` and reads
 * the local part backwards and the domain forwards.
 *
 * Score 1.0 for a well-formed address whose top-level domain is alphabetic
 * and not a file extension; `icon@2x.png`, `user@localhost`, `a..b@x.io` and
 * the `user:password@host` of a URL are rejected.
 */

const MAX_LOCAL = 64;
const DOMAIN =
  /(?:[\p{L}\p{N}](?:[\p{L}\p{N}\p{M}-]{0,61}[\p{L}\p{N}\p{M}])?\.)+(\p{L}[\p{L}\p{M}]{1,23})(?![\p{L}\p{N}\p{M}-])/uy;
const NON_ASCII_LOCAL = /[\p{L}\p{N}\p{M}]/u;
/** A URL's `scheme://user:` right before the local part: what follows is a password, not an address. */
const URL_USERINFO = /[a-z][a-z0-9+.-]*:\/\/[^\s/@]*:?$/i;

/** Suffixes that end file names far more often than addresses (`logo@2x.png`, `pkg@1.0.tgz`). */
const FILE_EXTENSIONS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'svg',
  'webp',
  'ico',
  'bmp',
  'tif',
  'tiff',
  'avif',
  'heic',
  'js',
  'mjs',
  'cjs',
  'ts',
  'tsx',
  'jsx',
  'css',
  'scss',
  'less',
  'html',
  'htm',
  'json',
  'yaml',
  'yml',
  'toml',
  'txt',
  'pdf',
  'zip',
  'gz',
  'tgz',
  'tar',
  'bz',
  'xz',
  'exe',
  'dll',
  'map',
  'lock',
  'xml',
  'csv',
  'log',
  'php',
  'vue',
  'mp3',
  'mp4',
  'wav',
  'mov',
  'avi',
  'woff',
  'woff2',
  'ttf',
  'otf',
  'eot',
  'wasm',
]);

function isLocalChar(code: number): boolean {
  return (
    (code >= 97 && code <= 122) || // a-z
    (code >= 65 && code <= 90) || // A-Z
    (code >= 48 && code <= 57) || // 0-9
    code === 46 ||
    code === 95 ||
    code === 37 ||
    code === 43 ||
    code === 45 || // . _ % + -
    (code > 127 && !(code >= 0xd800 && code <= 0xdfff) && NON_ASCII_LOCAL.test(String.fromCharCode(code)))
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
        const inUrl = URL_USERINFO.test(text.slice(Math.max(0, start - 80), start));
        if (!local.endsWith('.') && !local.includes('..') && !FILE_EXTENSIONS.has(tld) && !inUrl) {
          out.push({
            entity: 'EMAIL_ADDRESS',
            start,
            end,
            score: 1,
            key: text.slice(start, end).toLowerCase(),
            recognizer: this.name,
          });
        }
      }
      at = text.indexOf('@', at + 1);
    }
  }
}
