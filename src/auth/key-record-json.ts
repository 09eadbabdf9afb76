import { z } from 'zod';
import type { ApiKeyRecord } from './key-store.ts';
import { keyPolicySchema } from './key-policy.ts';

/**
 * One issued key as the CLI's `--json` and the admin API show it: masked,
 * with its policy fields at the top level. The key itself appears only in
 * the answer to a creation.
 */
export function keyRecordJson(record: ApiKeyRecord) {
  return {
    id: record.id,
    key: record.maskedKey,
    owner: record.owner,
    admin: record.admin,
    revoked: record.revoked,
    created_at: record.createdAt.toISOString(),
    revoked_at: record.revokedAt?.toISOString() ?? null,
    ...record.policy,
  };
}

/** The record's schema, for the OpenAPI document. */
export const keyRecordSchema = keyPolicySchema
  .extend({
    id: z.string().describe('Public id (`key_` + 16 hex).'),
    key: z.string().describe('Masked key (`gw_abc…wxyz`); the full key only in the reply to a creation.'),
    owner: z.string(),
    admin: z.boolean(),
    revoked: z.boolean(),
    created_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKeyRecord' });
