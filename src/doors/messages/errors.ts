import type { ErrorCode, GatewayError } from '../../errors/catalog.ts';

/**
 * Gateway errors in Anthropic's error shape,
 * `{type: 'error', error: {type, message}, request_id}`, with the status
 * Anthropic uses for the same kind of failure, so the Anthropic SDKs raise
 * their matching typed error (and Claude Code shows its matching message).
 */

/** Anthropic's `error.type` values the gateway's codes map to (the SDK's `ErrorType`). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/**
 * Status and type per code. The statuses are the gateway's own (so the
 * request log, metrics and `x-should-retry` agree across doors) except an
 * unknown model, which Anthropic answers 404 `not_found_error`.
 */
const ANTHROPIC_ERRORS: Readonly<Record<ErrorCode, { status: number; type: AnthropicErrorType }>> = {
  invalid_api_key: { status: 401, type: 'authentication_error' },
  admin_required: { status: 403, type: 'permission_error' },
  model_not_allowed: { status: 403, type: 'permission_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  model_not_found: { status: 404, type: 'not_found_error' },
  pii_detected: { status: 400, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'request_too_large' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'timeout_error' },
  not_found: { status: 404, type: 'not_found_error' },
  job_lost: { status: 410, type: 'api_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  too_many_failed_auth: { status: 429, type: 'rate_limit_error' },
  budget_exceeded: { status: 429, type: 'rate_limit_error' },
  provider_error: { status: 502, type: 'api_error' },
  provider_timeout: { status: 504, type: 'timeout_error' },
  service_unavailable: { status: 503, type: 'overloaded_error' },
  internal_error: { status: 500, type: 'api_error' },
};

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
  request_id: string;
}

export function errorBodyOf(err: GatewayError, requestId: string): AnthropicErrorBody {
  return {
    type: 'error',
    error: { type: ANTHROPIC_ERRORS[err.code].type, message: err.message },
    request_id: requestId,
  };
}

export function messagesError(err: GatewayError, requestId: string): { status: number; body: AnthropicErrorBody } {
  return { status: ANTHROPIC_ERRORS[err.code].status, body: errorBodyOf(err, requestId) };
}
