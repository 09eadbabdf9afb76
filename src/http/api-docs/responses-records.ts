import { z } from 'zod';

/** Response records of the Responses door and the embeddings endpoint, in OpenAI's shapes. */

const outputItem = z
  .object({
    type: z.enum(['message', 'function_call']),
    id: z.string().describe('`msg_` or `fc_` followed by hex digits.'),
    status: z.enum(['in_progress', 'completed', 'incomplete']),
    role: z.literal('assistant').optional(),
    content: z
      .array(
        z.object({
          type: z.enum(['output_text', 'refusal']),
          text: z.string().optional(),
          refusal: z.string().optional(),
        }),
      )
      .optional(),
    call_id: z.string().optional(),
    name: z.string().optional(),
    arguments: z.string().optional(),
  })
  .describe(
    'A `message` item (its `output_text` or `refusal` parts) or a `function_call` item (`call_id`, `name`, `arguments`).',
  );

export const responseSchema = z
  .object({
    id: z.string().describe('`resp_` followed by 48 hex digits.'),
    object: z.literal('response'),
    created_at: z.int().describe('Unix time, seconds.'),
    status: z.enum(['in_progress', 'completed', 'incomplete', 'failed']),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.object({ reason: z.enum(['max_output_tokens', 'content_filter']) }).nullable(),
    instructions: z.string().nullable(),
    model: z.string(),
    output: z.array(outputItem),
    output_text: z.string().describe("The output's text parts joined."),
    previous_response_id: z.string().nullable(),
    store: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    usage: z
      .object({
        input_tokens: z.int(),
        input_tokens_details: z.object({ cached_tokens: z.int() }),
        output_tokens: z.int(),
        output_tokens_details: z.object({ reasoning_tokens: z.int() }),
        total_tokens: z.int(),
      })
      .nullable(),
  })
  .meta({
    id: 'Response',
    description:
      'A response of the Responses API; the request fields it echoes (tools, text, temperature...) are left out here.',
  });

export const responseDeletedSchema = z
  .object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) })
  .meta({ id: 'ResponseDeleted' });

export const inputItemListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(z.object({ id: z.string(), type: z.enum(['message', 'function_call', 'function_call_output']) })),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
    has_more: z.boolean(),
  })
  .meta({
    id: 'ResponseInputItemList',
    description: "A page of a response's input items, as the upstream saw them (after DLP).",
  });

export const embeddingListSchema = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        object: z.literal('embedding'),
        index: z.int(),
        embedding: z
          .union([z.array(z.number()), z.string()])
          .describe('Floats, or base64 of little-endian float32 with `encoding_format: base64`.'),
      }),
    ),
    model: z.string(),
    usage: z.object({ prompt_tokens: z.int(), total_tokens: z.int() }),
  })
  .meta({ id: 'EmbeddingList' });
