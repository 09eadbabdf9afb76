import { z } from 'zod';

/** Response records of the Files and Batch endpoints, in OpenAI's shapes (see `src/batches/batch-objects.ts`). */

export const fileSchema = z
  .object({
    id: z.string().describe('`file-` followed by hex digits.'),
    object: z.literal('file'),
    bytes: z.int(),
    created_at: z.int().describe('Unix time, seconds.'),
    expires_at: z
      .int()
      .nullable()
      .describe(
        'Unix time at which an uploaded file is deleted (FILES_TTL); null for output files, and for uploads when FILES_TTL is 0.',
      ),
    filename: z.string(),
    purpose: z.enum(['batch', 'batch_output']),
    status: z.literal('processed'),
    status_details: z.null(),
  })
  .meta({ id: 'File', description: 'An uploaded batch input file, or the output or error file of a batch.' });

export const fileListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(fileSchema),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
    has_more: z.boolean(),
  })
  .meta({ id: 'FileList', description: 'Newest first; pass `last_id` as `after` for the next page.' });

export const fileDeletedSchema = z
  .object({ id: z.string(), object: z.literal('file'), deleted: z.literal(true) })
  .meta({ id: 'FileDeleted' });

const stamp = z.int().nullable().describe('Unix time, seconds; null until it happens.');

export const batchSchema = z
  .object({
    id: z.string().describe('`batch_` followed by hex digits.'),
    object: z.literal('batch'),
    endpoint: z.string(),
    errors: z
      .object({
        object: z.literal('list'),
        data: z.array(
          z.object({
            code: z.string(),
            message: z.string(),
            param: z.string().nullable(),
            line: z.int().nullable().describe('1-based line of the input file.'),
          }),
        ),
      })
      .nullable()
      .describe('Why validation failed, line by line.'),
    input_file_id: z.string(),
    completion_window: z.string(),
    status: z.enum([
      'validating',
      'failed',
      'in_progress',
      'finalizing',
      'completed',
      'expired',
      'cancelling',
      'cancelled',
    ]),
    output_file_id: z
      .string()
      .nullable()
      .describe('JSONL of `{id, custom_id, response: {status_code, request_id, body}, error: null}`, in input order.'),
    error_file_id: z
      .string()
      .nullable()
      .describe(
        'JSONL of the lines that failed (`response` with the error envelope) or never ran (`error`: `batch_expired`).',
      ),
    created_at: z.int(),
    in_progress_at: stamp,
    expires_at: z.int(),
    finalizing_at: stamp,
    completed_at: stamp,
    failed_at: stamp,
    expired_at: stamp,
    cancelling_at: stamp,
    cancelled_at: stamp,
    request_counts: z.object({ total: z.int(), completed: z.int(), failed: z.int() }),
    metadata: z.record(z.string(), z.string()).nullable(),
  })
  .meta({
    id: 'Batch',
    description: 'A batch of chat completions run over the provider queues at the lowest priority.',
  });

export const batchListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(batchSchema),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
    has_more: z.boolean(),
  })
  .meta({ id: 'BatchList', description: 'Newest first; pass `last_id` as `after` for the next page.' });
