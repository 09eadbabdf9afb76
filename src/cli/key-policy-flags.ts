import { CliUsageError } from './cli-io.ts';

/**
 * The policy flags of `gateway keys create|update`, turned into the JSON the
 * admin API takes (src/auth/key-policy.ts validates both). `none` clears a
 * field on update.
 */
export const POLICY_FLAGS = {
  'rate-limit': { type: 'string' },
  tpm: { type: 'string' },
  models: { type: 'string' },
  expires: { type: 'string' },
  budget: { type: 'string' },
  team: { type: 'string' },
  user: { type: 'string' },
  'semantic-cache': { type: 'string' },
} as const;

export const POLICY_USAGE = `Limits (all optional; on update, 'none' removes one):
  --rate-limit <requests>[/<seconds>]   requests per window (default window 60 s), instead of RATE_LIMIT_REQUESTS
  --tpm <tokens>                        prompt + completion tokens per minute
  --models <pattern,...>                models the key may call; * matches anything (gpt-4o*)
  --expires <ISO time | <n>d | <n>h>    when the key stops working (401)
  --budget <usd>/<day|month>            spend per UTC day or month (prices from config.yaml)
  --team <team> --user <user>           metadata reported with usage
  --semantic-cache <on|off>             off: never answered from the semantic cache`;

type Values = Partial<Record<keyof typeof POLICY_FLAGS, string | boolean | undefined>>;

/** The policy patch the flags describe (fields not given are absent). */
export function policyFromFlags(values: Values, now = Date.now()): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const set = (flag: keyof typeof POLICY_FLAGS, field: string, convert: (text: string) => unknown) => {
    const text = values[flag];
    if (typeof text !== 'string') return;
    patch[field] = text === 'none' ? null : convert(text);
  };
  set('rate-limit', 'rate_limit', (text) => {
    const [requests, seconds] = text.split('/');
    return {
      requests: integer(requests, '--rate-limit'),
      ...(seconds === undefined ? {} : { window_seconds: integer(seconds, '--rate-limit') }),
    };
  });
  set('tpm', 'tokens_per_minute', (text) => integer(text, '--tpm'));
  set('models', 'allowed_models', (text) =>
    text
      .split(',')
      .map((m) => m.trim())
      .filter((m) => m.length > 0),
  );
  set('expires', 'expires_at', (text) => expiry(text, now));
  set('budget', 'budget', (text) => {
    const match = /^(\d+(?:\.\d+)?)\/(day|month)$/.exec(text);
    if (!match) throw new CliUsageError(`--budget takes <usd>/<day|month>, e.g. 25/month (got '${text}')`);
    return { amount_usd: Number(match[1]), period: match[2] };
  });
  set('semantic-cache', 'semantic_cache', (text) => {
    if (text !== 'on' && text !== 'off')
      throw new CliUsageError(`--semantic-cache takes on, off or none (got '${text}')`);
    return text === 'on';
  });
  const metadata: Record<string, string | null> = {};
  for (const field of ['team', 'user'] as const) {
    const text = values[field];
    if (typeof text === 'string') metadata[field] = text === 'none' ? null : text;
  }
  if (Object.keys(metadata).length > 0) patch.metadata = metadata;
  return patch;
}

function integer(text: string | undefined, flag: string): number {
  if (text === undefined || !/^\d+$/.test(text))
    throw new CliUsageError(`${flag} takes a whole number (got '${text ?? ''}')`);
  return Number(text);
}

function expiry(text: string, now: number): string {
  const relative = /^(\d+)([dh])$/.exec(text);
  if (relative)
    return new Date(now + Number(relative[1]) * (relative[2] === 'd' ? 86_400_000 : 3_600_000)).toISOString();
  if (Number.isNaN(Date.parse(text)))
    throw new CliUsageError(`--expires takes an ISO time (2026-12-31T00:00:00Z), <n>d or <n>h (got '${text}')`);
  return new Date(text).toISOString();
}
