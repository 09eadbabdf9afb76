import type { ChatRequest } from '../chat/types.ts';
import { parseChatRequest } from '../chat/request-schema.ts';
import { GatewayError, InvalidRequestError } from '../errors/catalog.ts';
import type { BatchErrorItem } from './batch-objects.ts';
import { TurnSlices } from './turn-slices.ts';

/** Limits and checks of {@link validateBatchInput}. */
export interface BatchInputRules {
  /** The batch's `endpoint`: every line's `url` must be it. */
  endpoint: string;
  /** Most lines in a file (`BATCH_MAX_LINES`). */
  maxLines: number;
  /** Largest line, bytes: the largest request body the gateway takes (`MAX_REQUEST_BYTES`). */
  maxLineBytes: number;
  /** Throws the client's error when the request cannot run for this key (unknown model, unsupported parameters). */
  check: (request: ChatRequest) => void;
}

/** A line ready to run: its custom_id and its body as JSON text. */
export interface BatchInputLine {
  customId: string;
  body: string;
}

/** An input file's text: whole, or in pieces as it is read from its stored chunks. */
export type FileText = string | AsyncIterable<string>;

/** The lines of `content` (split at `\n`), holding one piece and one line at a time. */
async function* linesOf(content: FileText): AsyncGenerator<string> {
  let rest = '';
  for await (const piece of typeof content === 'string' ? [content] : content) {
    const parts = (rest + piece).split('\n');
    rest = parts.pop() ?? '';
    yield* parts;
  }
  yield rest;
}

/** How many problems a failed batch lists (OpenAI lists the first few too). */
const MAX_ERRORS = 100;

/**
 * Checks a whole input file before anything runs, as OpenAI does in
 * `validating`: each line a JSON object `{custom_id, method: "POST", url, body}`,
 * custom_ids unique, bodies valid chat requests for a model the key can use,
 * no line over the body limit, not more lines than allowed. Any problem fails
 * the batch; `errors` names the lines (1-based). Works in slices of a few
 * milliseconds, so a 50,000-line file does not hold up the process's requests.
 */
export async function validateBatchInput(
  content: FileText,
  rules: BatchInputRules,
): Promise<{ lines: BatchInputLine[] } | { errors: BatchErrorItem[] }> {
  const errors: BatchErrorItem[] = [];
  const lines: BatchInputLine[] = [];
  const seen = new Set<string>();
  let count = 0;
  const problem = (line: number, code: string, message: string, param: string | null = null) => {
    if (errors.length < MAX_ERRORS) errors.push({ code, message, param, line });
  };
  const slices = new TurnSlices();
  let n = 0;
  for await (const raw of linesOf(content)) {
    await slices.tick();
    n++;
    const text = raw.trim();
    if (text === '') continue;
    if (++count > rules.maxLines) {
      return {
        errors: [
          {
            code: 'too_many_requests_in_file',
            message: `The file has more than ${rules.maxLines} request lines (BATCH_MAX_LINES).`,
            param: null,
            line: n,
          },
        ],
      };
    }
    if (Buffer.byteLength(text) > rules.maxLineBytes) {
      problem(n, 'request_too_large', `Line ${n} is larger than the ${rules.maxLineBytes}-byte request limit.`);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      problem(n, 'invalid_json_line', `Line ${n} is not valid JSON.`);
      continue;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      problem(n, 'invalid_json_line', `Line ${n} is not a JSON object.`);
      continue;
    }
    const { custom_id: customId, method, url, body } = parsed as Record<string, unknown>;
    if (typeof customId !== 'string' || customId === '') {
      problem(n, 'missing_required_parameter', `Line ${n} has no custom_id string.`, 'custom_id');
      continue;
    }
    if (seen.has(customId)) {
      problem(
        n,
        'duplicate_custom_id',
        `Line ${n}: custom_id '${customId.slice(0, 64)}' is used by an earlier line; each must be unique.`,
        'custom_id',
      );
      continue;
    }
    seen.add(customId);
    if (method !== 'POST') {
      problem(n, 'invalid_method', `Line ${n}: method must be "POST".`, 'method');
      continue;
    }
    if (url !== rules.endpoint) {
      problem(n, 'mismatched_endpoint', `Line ${n}: url must be the batch's endpoint, "${rules.endpoint}".`, 'url');
      continue;
    }
    try {
      const request = parseChatRequest(body);
      if (request.stream) throw new InvalidRequestError('stream: batch requests cannot be streamed.');
      rules.check(request);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      problem(n, err.code, `Line ${n}: ${err.message}`, 'body');
      continue;
    }
    lines.push({ customId, body: JSON.stringify(body) });
  }
  if (errors.length > 0) return { errors };
  if (lines.length === 0)
    return {
      errors: [{ code: 'empty_file', message: 'The input file has no request lines.', param: null, line: null }],
    };
  return { lines };
}

/**
 * Lines of an input file whose `body.model` the creating key may not call
 * (its `allowed_models`), as `errors` items. Checked when the batch is
 * created, while the key is at hand; lines that do not parse are left to
 * {@link validateBatchInput}. In slices, as that one.
 */
export async function disallowedModelLines(
  content: FileText,
  mayUseModel: (model: string) => boolean,
): Promise<BatchErrorItem[]> {
  const errors: BatchErrorItem[] = [];
  const slices = new TurnSlices();
  let n = 0;
  for await (const text of linesOf(content)) {
    await slices.tick();
    n++;
    if (text.trim() === '' || errors.length >= MAX_ERRORS) continue;
    let model: unknown;
    try {
      model = (JSON.parse(text) as { body?: { model?: unknown } })?.body?.model;
    } catch {
      continue;
    }
    if (typeof model === 'string' && !mayUseModel(model)) {
      errors.push({
        code: 'model_not_allowed',
        message: `This key may not use the model '${model}'.`,
        param: 'body.model',
        line: n,
      });
    }
  }
  return errors;
}
