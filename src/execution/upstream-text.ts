/**
 * The one scrubber of upstream-derived text. An upstream's error body, a
 * mid-stream error event or the message of a failed call may quote the
 * request the upstream received, headers included (a proxy's debug page, an
 * upstream that echoes `authorization=Bearer <key>`). Such text reaches a
 * client, a log line or Redis only through {@link scrubUpstreamText}: every
 * provider key the process knows is removed, then anything shaped like a
 * credential, then control characters, and only then is the text clipped, so
 * a clip can never leave half a secret that no pattern recognises.
 */

/** What a removed secret or credential is replaced with. */
const REDACTED = '[redacted]';

/** Longest upstream text shown to a client, in characters. */
export const MAX_UPSTREAM_TEXT = 300;

/** Configured secrets shorter than this are not searched for: they would blank ordinary words. */
const MIN_SECRET_LENGTH = 4;

/**
 * Credential shapes, in order. Names of credential-bearing headers and
 * parameters keep their name and lose their value (`authorization=[redacted]`,
 * also in JSON and JSON-in-a-string), so the message still says what was there.
 */
const CREDENTIAL_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /\b((?:proxy-)?authorization|x-goog-api-key|x-api-key|api[-_]?key|access[-_]?token|refresh[-_]?token|id[-_]?token|client[-_]?secret|secret|password|token|key|cookie|set-cookie)(\\?["']?\s*[:=]\s*\\?["']?)(?:(?:bearer|basic|token)\s+)?[^\s"'\\,;&)}\]]+/gi,
    `$1$2${REDACTED}`,
  ],
  [/\b(bearer|basic)\s+[\w\-.~+/]{6,}=*/gi, `$1 ${REDACTED}`],
  // Keys by their prefix: OpenAI and Anthropic `sk-`, Google `AIza`, this gateway's `gw_`, GitHub, Slack, `key-`/`key_`.
  [
    /(?<![\w-])(?:sk-[\w-]{8,}|AIza[\w-]{16,}|gw_[\w-]{8,}|gh[pousr]_\w{16,}|xox[abposr]-[\w-]{8,}|key[-_][\w-]{12,})/g,
    REDACTED,
  ],
  // JSON Web Tokens.
  [/\beyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g, REDACTED],
  // Credentials in a URL (`redis://user:password@host`): the user stays, the password goes.
  [/\b([a-z][\w+.-]*:\/\/[^\s/@:]*):[^\s/@]+@/gi, `$1:${REDACTED}@`],
];

const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]+/g;

/** Options of {@link scrubUpstreamText}. */
export interface ScrubOptions {
  /**
   * Characters kept; longer text is cut and ends with `…`.
   * @defaultValue {@link MAX_UPSTREAM_TEXT}
   */
  maxLength?: number;
}

/**
 * Makes text that came from an upstream safe to show or store: `secrets`
 * (every provider key the process knows, as sent and URL-encoded) and
 * anything shaped like a credential are replaced by `[redacted]`, control
 * characters by a space, and the result is clipped.
 */
export function scrubUpstreamText(text: string, secrets: readonly string[], options: ScrubOptions = {}): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    out = out.replaceAll(secret, REDACTED);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) out = out.replaceAll(encoded, REDACTED);
  }
  for (const [pattern, replacement] of CREDENTIAL_PATTERNS) out = out.replace(pattern, replacement);
  out = out.replace(CONTROL_CHARACTERS, ' ');
  const max = options.maxLength ?? MAX_UPSTREAM_TEXT;
  return out.length > max ? `${out.slice(0, max)}…` : out;
}
