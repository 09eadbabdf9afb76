import { z } from 'zod';
import { describeIssues } from '../chat/request-schema.ts';
import { InvalidRequestError } from '../errors/catalog.ts';

/** Most inputs in one `POST /v1/embeddings` (OpenAI's limit). */
const MAX_EMBEDDING_INPUTS = 2048;

/**
 * `POST /v1/embeddings` bodies: OpenAI's shape. Token-id inputs (arrays of
 * integers) are refused with a clear 400: they mean one tokenizer, and the
 * gateway serves several upstream formats.
 */
export const embeddingsRequestSchema = z
  .strictObject({
    model: z.string().min(1).max(256),
    input: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(MAX_EMBEDDING_INPUTS)]),
    dimensions: z.int().positive().max(65_536).nullish(),
    encoding_format: z.enum(['float', 'base64']).nullish(),
    // Accepted and not forwarded: abuse monitoring at OpenAI only.
    user: z.string().max(256).nullish(),
  })
  .meta({ id: 'EmbeddingsRequest' });

/** What an embeddings request asks besides its model and texts: the shape of the vectors. */
export interface EmbeddingsShape {
  dimensions?: number;
  encoding_format: 'float' | 'base64';
}

/** A validated embeddings request. */
export interface EmbeddingsRequest extends EmbeddingsShape {
  model: string;
  input: string[];
}

function tokenIds(input: unknown): boolean {
  return Array.isArray(input) && input.length > 0 && (typeof input[0] === 'number' || Array.isArray(input[0]));
}

/** Validates a body; a 400 naming the bad fields otherwise. */
export function parseEmbeddingsRequest(body: unknown): EmbeddingsRequest {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
  }
  if (tokenIds((body as { input?: unknown }).input)) {
    throw new InvalidRequestError(
      'input: token ids are not accepted by this gateway; send the text as a string or a list of strings.',
    );
  }
  const parsed = embeddingsRequestSchema.safeParse(body);
  if (!parsed.success) throw new InvalidRequestError(`Invalid request: ${describeIssues(parsed.error)}`);
  const data = parsed.data;
  const request: EmbeddingsRequest = {
    model: data.model,
    input: typeof data.input === 'string' ? [data.input] : data.input,
    encoding_format: data.encoding_format ?? 'float',
  };
  if (data.dimensions != null) request.dimensions = data.dimensions;
  return request;
}
