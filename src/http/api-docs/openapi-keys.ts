import { z } from 'zod';
import { keyPolicySchema } from '../../auth/key-policy.ts';
import { keyRecordSchema } from '../../auth/key-record-json.ts';
import { createKeyBodySchema } from '../routes/admin-keys.ts';

/** The `/admin/keys` part of the OpenAPI document (src/docs/openapi.ts). */

const usageFigures = {
  requests: z.int().min(0).describe('Requests sent to a provider (cache hits excluded).'),
  prompt_tokens: z.int().min(0),
  completion_tokens: z.int().min(0),
  cached_tokens: z.int().min(0).describe("Of prompt_tokens, read from the upstream's prompt cache."),
  cache_write_tokens: z.int().min(0).describe("Of prompt_tokens, written to the upstream's prompt cache."),
  reasoning_tokens: z.int().min(0).describe('Of completion_tokens, spent reasoning.'),
  cost_usd: z
    .number()
    .min(0)
    .describe('From config.yaml `prices`, token type by token type; 0 for a model without a price.'),
};

const keyUsageReportSchema = z
  .object({
    id: z.string(),
    key: z.string().describe('Masked key.'),
    owner: z.string(),
    metadata: z.object({ team: z.string().optional(), user: z.string().optional() }),
    total: z.object(usageFigures),
    by_model: z.record(z.string(), z.object(usageFigures)),
    by_day: z
      .array(z.object({ day: z.string().describe('YYYY-MM-DD, UTC.'), model: z.string(), ...usageFigures }))
      .describe('Newest day first.'),
  })
  .meta({ id: 'KeyUsageReport', description: 'Usage and spend of one key, recorded in the key store.' });

const keyListSchema = z.object({ data: z.array(keyRecordSchema) }).meta({ id: 'ApiKeyList' });

const createdKeySchema = keyRecordSchema
  .extend({ key: z.string().describe('The key itself: shown this once, never again.') })
  .meta({ id: 'CreatedApiKey' });

export const KEY_OUTPUT_SCHEMAS: readonly z.ZodType[] = [
  keyRecordSchema,
  keyListSchema,
  createdKeySchema,
  keyUsageReportSchema,
];
export const KEY_INPUT_SCHEMAS: ReadonlyArray<readonly [string, z.ZodType]> = [
  ['CreateKeyRequest', createKeyBodySchema],
  ['KeyPolicy', keyPolicySchema],
];

const KEY_ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Key id (`key_…`).' };
const ref = (id: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${id}` } } });

/** Paths of the key admin API; `errors` renders the shared error responses. */
export function keyPaths(errors: (...statuses: number[]) => Record<string, unknown>): Record<string, unknown> {
  const tags = ['admin'];
  return {
    '/admin/keys': {
      get: {
        operationId: 'listKeys',
        tags,
        summary: 'List issued keys, masked, with their limits (admin key)',
        parameters: [
          {
            name: 'all',
            in: 'query',
            required: false,
            schema: { type: 'string', enum: ['true'] },
            description: 'Include revoked keys.',
          },
        ],
        responses: {
          '200': { description: 'Keys, newest first.', content: ref('ApiKeyList') },
          ...errors(401, 403, 503),
        },
      },
      post: {
        operationId: 'createKey',
        tags,
        summary: 'Issue a key with optional limits, models, expiry, budget and metadata (admin key)',
        requestBody: { required: true, content: ref('CreateKeyRequest') },
        responses: {
          '201': { description: 'Issued; `key` is shown this once.', content: ref('CreatedApiKey') },
          ...errors(400, 401, 403, 503),
        },
      },
    },
    '/admin/keys/{id}': {
      parameters: [KEY_ID],
      get: {
        operationId: 'getKey',
        tags,
        summary: 'One key, masked (admin key)',
        responses: { '200': { description: 'The key.', content: ref('ApiKeyRecord') }, ...errors(401, 403, 404, 503) },
      },
      patch: {
        operationId: 'updateKey',
        tags,
        summary: 'Change a key’s limits; every replica applies them at once (admin key)',
        description: 'Fields left out stay; `null` removes one; `metadata` is merged field by field.',
        requestBody: { required: true, content: ref('KeyPolicy') },
        responses: {
          '200': { description: 'The updated key.', content: ref('ApiKeyRecord') },
          ...errors(400, 401, 403, 404, 503),
        },
      },
      delete: {
        operationId: 'revokeKey',
        tags,
        summary: 'Revoke a key; every replica refuses it at once (admin key)',
        responses: {
          '200': { description: 'The revoked key.', content: ref('ApiKeyRecord') },
          ...errors(401, 403, 404, 503),
        },
      },
    },
    '/admin/keys/{id}/usage': {
      parameters: [KEY_ID],
      get: {
        operationId: 'keyUsage',
        tags,
        summary: 'Requests, tokens and spend of a key per model and day (admin key)',
        parameters: [
          {
            name: 'from',
            in: 'query',
            required: false,
            schema: { type: 'string', format: 'date' },
            description: 'First day (UTC), inclusive.',
          },
          {
            name: 'to',
            in: 'query',
            required: false,
            schema: { type: 'string', format: 'date' },
            description: 'Last day (UTC), inclusive.',
          },
        ],
        responses: {
          '200': { description: 'Usage report.', content: ref('KeyUsageReport') },
          ...errors(400, 401, 403, 404, 503),
        },
      },
    },
  };
}
