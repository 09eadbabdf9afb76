import type { IncomingHttpHeaders } from 'node:http';
import type { WireFormat } from '../../../src/providers/types.ts';
import { anthropicDialect } from './anthropic-dialect.ts';
import { isRecord } from './dialect.ts';
import { geminiDialect } from './gemini-dialect.ts';

/**
 * Fakes of the upstreams' token-counting endpoints, counting as the fake
 * counts a generation's prompt tokens (its input words), so a count equals
 * the `input_tokens` of the same request's reply:
 * - Anthropic `POST /v1/messages/count_tokens`: the Messages request without
 *   its generation-only fields (a `max_tokens` there is "Extra inputs are not
 *   permitted", as the API answers), checked as a generation is;
 *   `{"input_tokens": n}`.
 * - Gemini `POST /v1beta/models/{model}:countTokens` with a
 *   `generateContentRequest` (or bare `contents`); `{"totalTokens": n}`.
 * The OpenAI format has no such endpoint.
 */

const COUNT_FIELDS = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'context_management',
  'mcp_servers',
]);

const GEMINI_COUNT = /^\/v1beta\/models\/([^/:]+):countTokens$/;

/** The reply to a counting request: status and body, or undefined when the path is not a counting endpoint. */
export function tokenCountReply(
  format: WireFormat,
  method: string,
  url: URL,
  headers: IncomingHttpHeaders,
  apiKey: string,
  body: unknown,
): { status: number; body: unknown } | undefined {
  if (method !== 'POST') return undefined;
  if (format === 'anthropic' && url.pathname === '/v1/messages/count_tokens') {
    const fail = (status: number, message: string) => ({ status, body: anthropicDialect.errorBody(status, message) });
    if (!anthropicDialect.isAuthorized(headers, apiKey)) return fail(401, 'invalid x-api-key');
    const header = anthropicDialect.headerProblem?.(headers);
    if (header !== undefined) return fail(400, header);
    if (!isRecord(body)) return fail(400, 'The body is not JSON.');
    const extra = Object.keys(body).find((key) => !COUNT_FIELDS.has(key));
    if (extra !== undefined) return fail(400, `${extra}: Extra inputs are not permitted`);
    const prompt = anthropicDialect.readPrompt({ ...body, max_tokens: 1 }, { stream: false });
    if (typeof prompt === 'string') return fail(400, prompt);
    return { status: 200, body: { input_tokens: prompt.inputWords } };
  }
  const gemini = format === 'gemini' ? GEMINI_COUNT.exec(url.pathname) : null;
  if (gemini) {
    const fail = (status: number, message: string) => ({ status, body: geminiDialect.errorBody(status, message) });
    if (!geminiDialect.isAuthorized(headers, apiKey)) return fail(401, 'API key not valid.');
    if (!isRecord(body)) return fail(400, 'The body is not JSON.');
    const request = isRecord(body.generateContentRequest) ? body.generateContentRequest : body;
    const { model: _model, ...generate } = request;
    const prompt = geminiDialect.readPrompt(generate, { stream: false, model: decodeURIComponent(gemini[1]!) });
    if (typeof prompt === 'string') return fail(400, prompt);
    return { status: 200, body: { totalTokens: prompt.inputWords } };
  }
  return undefined;
}
