import { z } from 'zod';

/**
 * What an issued key may do beyond authenticating: its own request rate,
 * tokens per minute, models, expiry, spend budget, metadata and semantic
 * cache switch. Every field is optional; a key with none set is governed by
 * the global settings alone and costs nothing more per request.
 *
 * One zod schema validates the admin API's JSON and the CLI's flags (which
 * the CLI turns into this JSON), and the same JSON is what the key store
 * keeps, so the three cannot disagree.
 */

/** Model patterns: an id, or a `*` wildcard (`gpt-4o*`, `*`). */
const modelPattern = z
  .string()
  .regex(/^[^\s\u0000-\u001f\u007f-\u009f]{1,256}$/, 'must be a model id or a pattern with *');
const metadataText = z.string().regex(/^[^\u0000-\u001f\u007f-\u009f]{1,128}$/, 'must be 1-128 printable characters');

export const keyPolicySchema = z
  .strictObject({
    rate_limit: z
      .strictObject({
        requests: z.int().min(1).max(1_000_000_000).describe('Requests admitted per window.'),
        window_seconds: z.int().min(1).max(86_400).default(60).describe('Window length, seconds. Default 60.'),
      })
      .nullable()
      .optional()
      .describe('Overrides RATE_LIMIT_REQUESTS / RATE_LIMIT_WINDOW for this key.'),
    tokens_per_minute: z
      .int()
      .min(1)
      .max(1_000_000_000_000)
      .nullable()
      .optional()
      .describe('Prompt + completion tokens per sliding minute.'),
    allowed_models: z
      .array(modelPattern)
      .min(1)
      .max(256)
      .nullable()
      .optional()
      .describe('Models this key may call; `*` matches any run of characters.'),
    expires_at: z.iso
      .datetime({ offset: true })
      .nullable()
      .optional()
      .describe('After this instant the key answers 401.'),
    budget: z
      .strictObject({
        amount_usd: z
          .number()
          .positive()
          .max(1_000_000_000)
          .describe('Spend allowed per period, USD (prices from config.yaml `prices`).'),
        period: z.enum(['day', 'month']).describe('Calendar day or month, UTC.'),
      })
      .nullable()
      .optional(),
    metadata: z
      .strictObject({ team: metadataText.nullable().optional(), user: metadataText.nullable().optional() })
      .optional()
      .describe('Free labels, reported with usage; merged field by field on update (`null` removes one).'),
    semantic_cache: z
      .boolean()
      .nullable()
      .optional()
      .describe('false: this key is never answered from the semantic cache.'),
  })
  .meta({ id: 'KeyPolicy' });

/** A stored policy: only the fields that are set. */
export interface KeyPolicy {
  rate_limit?: { requests: number; window_seconds: number };
  tokens_per_minute?: number;
  allowed_models?: string[];
  expires_at?: string;
  budget?: { amount_usd: number; period: 'day' | 'month' };
  metadata?: { team?: string; user?: string };
  semantic_cache?: boolean;
}

/** Thrown for a policy that does not validate; the message names the fields. */
export class InvalidKeyPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidKeyPolicyError';
  }
}

/**
 * `patch` applied to `base`: a field that is absent stays, `null` removes it,
 * a value replaces it. Throws {@link InvalidKeyPolicyError} for bad input.
 */
export function mergeKeyPolicy(base: KeyPolicy, patch: unknown): KeyPolicy {
  const parsed = keyPolicySchema.safeParse(patch ?? {});
  if (!parsed.success) {
    throw new InvalidKeyPolicyError(
      parsed.error.issues.map((i) => `${i.path.join('.') || '(policy)'}: ${i.message}`).join('; '),
    );
  }
  const merged: Record<string, unknown> = { ...base };
  for (const [field, value] of Object.entries(parsed.data)) {
    if (value === undefined || field === 'metadata') continue;
    if (value === null) delete merged[field];
    else merged[field] = value;
  }
  const metadata: Record<string, unknown> = { ...base.metadata };
  for (const [field, value] of Object.entries(parsed.data.metadata ?? {})) {
    if (value === null) delete metadata[field];
    else if (value !== undefined) metadata[field] = value;
  }
  if (Object.keys(metadata).length > 0) merged.metadata = metadata;
  else delete merged.metadata;
  return merged as KeyPolicy;
}

/**
 * Reads a stored policy back, validated again: a row edited by hand into
 * something invalid fails its lookup (503) rather than losing its limits.
 */
export function parseStoredPolicy(json: string | object | null | undefined): KeyPolicy {
  if (json === null || json === undefined) return {};
  const value = typeof json === 'string' ? (JSON.parse(json) as unknown) : json;
  return mergeKeyPolicy({}, value);
}

/** Compiles `allowed_models` once per key lookup: one regex test per request. */
export function modelMatcher(patterns: readonly string[]): (model: string) => boolean {
  const source = patterns.map((p) => p.split('*').map(escapeRegex).join('.*')).join('|');
  const regex = new RegExp(`^(?:${source})$`);
  return (model) => regex.test(model);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
