import { z } from 'zod';
import { describeIssues, MAX_METADATA_PAIRS, MAX_TOOLS } from '../../chat/request-schema.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';

/**
 * The zod schema of `POST /v1/responses` bodies: OpenAI's Responses request
 * shape with the gateway's bounds, in the style of the chat door's schema.
 * Unknown fields are a 400; fields the gateway accepts but does not forward
 * (`prompt_cache_key`, `safety_identifier`, `include`, `truncation`, ...) are
 * listed here so that they are accepted on purpose, not by accident.
 */

const MAX_INPUT_ITEMS = 1000;

/** Images come inline (`data:`) or as an `https:` URL for the provider to fetch; the gateway never fetches one. */
const IMAGE_URL = /^(?:data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+|https:\/\/\S+)$/;
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const functionName = z.string().regex(FUNCTION_NAME, 'must be 1-64 letters, digits, underscores or dashes');
const itemId = z.string().max(256).nullish();
const itemStatus = z.enum(['in_progress', 'completed', 'incomplete']).nullish();
const callId = z.string().min(1).max(256);

const inputText = z.strictObject({ type: z.literal('input_text'), text: z.string() });
const inputImage = z.strictObject({
  type: z.literal('input_image'),
  image_url: z
    .string()
    .max(20_000_000)
    .regex(IMAGE_URL, 'must be an https: URL or a base64 data:image/(png|jpeg|gif|webp) URL')
    .nullish(),
  file_id: z.string().max(256).nullish(),
  detail: z.enum(['auto', 'low', 'high']).nullish(),
});
/** Documents come inline; PDF is what every upstream format with documents reads. */
const PDF_DATA = /^data:application\/pdf;base64,[A-Za-z0-9+/=\s]+$/;

const inputFile = z.strictObject({
  type: z.literal('input_file'),
  file_id: z.string().max(256).nullish(),
  file_data: z.string().max(20_000_000).regex(PDF_DATA, 'must be a base64 data:application/pdf URL').nullish(),
  file_url: z.string().max(4096).nullish(),
  filename: z.string().max(1024).nullish(),
});
/** What an assistant turn sent back as input carries (the SDKs replay their earlier output items). */
const outputText = z.strictObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.unknown()).nullish(),
  logprobs: z.array(z.unknown()).nullish(),
});
const refusal = z.strictObject({ type: z.literal('refusal'), refusal: z.string() });

const contentPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile, outputText, refusal]);

const message = z.strictObject({
  type: z.literal('message').nullish(),
  id: itemId,
  status: itemStatus,
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPart).max(MAX_INPUT_ITEMS)]),
});

const functionCall = z.strictObject({
  type: z.literal('function_call'),
  id: itemId,
  status: itemStatus,
  call_id: callId,
  name: functionName,
  arguments: z.string(),
});

const functionCallOutput = z.strictObject({
  type: z.literal('function_call_output'),
  id: itemId,
  status: itemStatus,
  call_id: callId,
  output: z.union([z.string(), z.array(contentPart).max(MAX_INPUT_ITEMS)]),
});

/** Reasoning items are accepted (clients replay them) and not forwarded: the canonical model has no place for them. */
const reasoning = z.strictObject({
  type: z.literal('reasoning'),
  id: itemId,
  status: itemStatus,
  summary: z.array(z.unknown()).nullish(),
  content: z.array(z.unknown()).nullish(),
  encrypted_content: z.string().nullish(),
});

/**
 * Any other item type (item_reference, hosted tools' calls and outputs):
 * kept loose here so the decoder can name it in a clear 400 rather than zod
 * listing every union member it did not match.
 */
const otherItem = z
  .looseObject({ type: z.string() })
  .refine((item) => !['message', 'function_call', 'function_call_output', 'reasoning'].includes(item.type), {
    message: 'malformed item',
  });

const inputItemSchema = z.union([functionCall, functionCallOutput, reasoning, message, otherItem]);

const functionTool = z.strictObject({
  type: z.literal('function'),
  name: functionName,
  description: z.string().max(8192).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

/** Hosted tools (web search, file search, computer use, ...) by type: the decoder answers them with a 400 naming the tool. */
const otherTool = z
  .looseObject({ type: z.string() })
  .refine((tool) => tool.type !== 'function', { message: 'malformed function tool' });

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.strictObject({ type: z.literal('function'), name: functionName }),
  z.looseObject({ type: z.string() }),
]);

const textFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    name: functionName,
    description: z.string().max(8192).nullish(),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
  }),
]);

export const responsesRequestSchema = z
  .strictObject({
    model: z.string().min(1).max(256),
    input: z.union([z.string().min(1), z.array(inputItemSchema).max(MAX_INPUT_ITEMS)]),
    instructions: z.string().nullish(),
    tools: z
      .array(z.union([functionTool, otherTool]))
      .max(MAX_TOOLS)
      .nullish(),
    tool_choice: toolChoice.nullish(),
    parallel_tool_calls: z.boolean().nullish(),
    text: z
      .strictObject({ format: textFormat.nullish(), verbosity: z.enum(['low', 'medium', 'high']).nullish() })
      .nullish(),
    max_output_tokens: z.int().positive().max(1_000_000).nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= MAX_METADATA_PAIRS, { message: `at most ${MAX_METADATA_PAIRS} pairs` })
      .nullish(),
    user: z.string().max(256).nullish(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    stream_options: z.strictObject({ include_obfuscation: z.boolean().nullish() }).nullish(),
    previous_response_id: z.string().min(1).max(256).nullish(),
    include: z.array(z.string().max(128)).max(32).nullish(),
    reasoning: z
      .strictObject({
        effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
        summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
        generate_summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
      })
      .nullish(),
    service_tier: z.enum(['auto', 'default', 'flex', 'priority']).nullish(),
    // Accepted and not forwarded: hints for OpenAI's own cache and abuse monitoring, harmless to drop.
    prompt_cache_key: z.string().max(1024).nullish(),
    prompt_cache_retention: z.enum(['in_memory', '24h']).nullish(),
    safety_identifier: z.string().max(256).nullish(),
    // Sent by the Codex CLI (its session and turn ids).
    client_metadata: z.record(z.string().max(256), z.unknown()).nullish(),
    truncation: z.enum(['auto', 'disabled']).nullish(),
    top_logprobs: z.int().min(0).max(20).nullish(),
    max_tool_calls: z.int().positive().nullish(),
    background: z.literal(false).nullish(),
  })
  .meta({ id: 'ResponseCreateRequest' });

export type ResponsesRequestBody = z.infer<typeof responsesRequestSchema>;
export type InputItemBody = z.infer<typeof inputItemSchema>;
export type ContentPartBody = z.infer<typeof contentPart>;

/** Validates a body; a 400 naming the bad fields otherwise. */
export function parseResponsesBody(body: unknown): ResponsesRequestBody {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
  }
  const parsed = responsesRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
