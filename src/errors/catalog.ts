/**
 * The one error catalog of the gateway. Every error a client can see is a
 * {@link GatewayError}; the HTTP error handler renders it as the envelope
 * `{error:{code,message,type}, timestamp, request_id}`.
 *
 * Workers send errors to the API as `{code, message}` over the response stream
 * (see `src/streams/protocol.ts`); {@link errorFromCode} turns them back into
 * the same classes, so the status and type always come from this table.
 */

/** Stable error codes (docs/api.md lists them). */
export type ErrorCode =
  | 'invalid_api_key'
  | 'admin_required'
  | 'model_not_allowed'
  | 'invalid_request'
  | 'model_not_found'
  | 'pii_detected'
  | 'request_too_large'
  | 'headers_too_large'
  | 'request_timeout'
  | 'not_found'
  | 'job_lost'
  | 'rate_limit_exceeded'
  | 'too_many_failed_auth'
  | 'budget_exceeded'
  | 'provider_error'
  | 'provider_timeout'
  | 'service_unavailable'
  | 'internal_error';

/** `error.type` values of the envelope. */
export type ErrorType =
  | 'authentication_error'
  | 'permission_error'
  | 'invalid_request_error'
  | 'rate_limit_error'
  | 'provider_error'
  | 'api_error';

/**
 * Status and type of each code. `final`: the gateway has already retried
 * (upstream failures after its own retries, per provider `max_retries`), so
 * the reply tells SDKs not to retry again (`x-should-retry: false`, which the
 * official OpenAI SDKs obey); one client call then costs at most
 * `1 + max_retries` upstream calls.
 */
export const ERROR_TABLE: Readonly<Record<ErrorCode, { status: number; type: ErrorType; final?: true }>> = {
  invalid_api_key: { status: 401, type: 'authentication_error' },
  admin_required: { status: 403, type: 'permission_error' },
  model_not_allowed: { status: 403, type: 'permission_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  model_not_found: { status: 400, type: 'invalid_request_error' },
  pii_detected: { status: 400, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  not_found: { status: 404, type: 'invalid_request_error' },
  // The gateway's store failed, not the client: a 410 so that no SDK retries a read that cannot succeed.
  job_lost: { status: 410, type: 'api_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  too_many_failed_auth: { status: 429, type: 'rate_limit_error' },
  // Retrying cannot help before the period ends: SDKs are told not to.
  budget_exceeded: { status: 429, type: 'rate_limit_error', final: true },
  provider_error: { status: 502, type: 'provider_error', final: true },
  provider_timeout: { status: 504, type: 'provider_error', final: true },
  service_unavailable: { status: 503, type: 'api_error' },
  internal_error: { status: 500, type: 'api_error' },
};

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_TABLE, value);
}

/** Base class: carries the code; status and type are derived from {@link ERROR_TABLE}. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  /** Extra response headers, e.g. `Retry-After` on 429. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, options: { headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }

  get type(): ErrorType {
    return ERROR_TABLE[this.code].type;
  }
}

export class InvalidApiKeyError extends GatewayError {
  constructor(
    message = 'Missing or invalid API key. Send it in the X-API-Key header or as "Authorization: Bearer <key>".',
  ) {
    super('invalid_api_key', message);
  }
}

export class AdminRequiredError extends GatewayError {
  constructor(message = 'This endpoint requires an admin API key.') {
    super('admin_required', message);
  }
}

/** The key's `allowed_models` do not include the requested model (src/auth/key-policy.ts). */
export class ModelNotAllowedError extends GatewayError {
  constructor(model: string) {
    super(
      'model_not_allowed',
      `This API key may not use the model '${model}'. Ask the gateway's operator to add it to the key's allowed models.`,
    );
  }
}

export class InvalidRequestError extends GatewayError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

export class ModelNotFoundError extends GatewayError {
  constructor(model: string) {
    super(
      'model_not_found',
      `The model '${model}' is not supported by this gateway. GET /v1/models lists the models it serves.`,
    );
  }
}

export class PiiDetectedError extends GatewayError {
  /** `source` says whose text held it: the client's request, or the provider's reply (DLP_SCAN_REPLIES). */
  constructor(entityTypes: readonly string[], source: 'request' | 'reply' = 'request') {
    super('pii_detected', `The ${source} contains personal data and was blocked: ${entityTypes.join(', ')}.`);
  }
}

export class RequestTooLargeError extends GatewayError {
  constructor(limitBytes: number) {
    super('request_too_large', `The request body exceeds the limit of ${limitBytes} bytes.`);
  }
}

export class HeadersTooLargeError extends GatewayError {
  constructor(message = 'The request headers are too large.') {
    super('headers_too_large', message);
  }
}

export class RequestTimeoutError extends GatewayError {
  constructor(message = 'The request did not arrive in time.') {
    super('request_timeout', message);
  }
}

export class NotFoundError extends GatewayError {
  constructor(message: string) {
    super('not_found', message);
  }
}

/**
 * An asynchronous job the gateway accepted (its id proves it, see
 * `src/queue/async-job-id.ts`) whose row in the key-store database is gone
 * before its time: the database was restored from an older backup, or the
 * API processes do not share one database.
 */
export class JobLostError extends GatewayError {
  constructor(id: string, createdAt: Date) {
    super(
      'job_lost',
      `The asynchronous job '${id}', accepted at ${createdAt.toISOString()}, is not in the gateway's database (restored from an older backup, or API processes on different databases); its status and result cannot be recovered: resubmit the request.`,
    );
  }
}

export class RateLimitExceededError extends GatewayError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}, limit = 'Rate limit') {
    super('rate_limit_exceeded', `${limit} exceeded. Retry after ${retryAfterSeconds} seconds.`, {
      headers: { ...headers, 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

/** The key spent its budget for the period (src/usage/key-governor.ts). */
export class BudgetExceededError extends GatewayError {
  constructor(budgetUsd: number, period: 'day' | 'month', resetsAt: Date) {
    const retryAfter = Math.max(1, Math.ceil((resetsAt.getTime() - Date.now()) / 1000));
    super(
      'budget_exceeded',
      `This API key has used its budget of ${budgetUsd} USD for this ${period}; it resets at ${resetsAt.toISOString()}.`,
      {
        headers: { 'Retry-After': String(retryAfter) },
      },
    );
  }
}

/** Too many failed authentications from one client address (src/auth/failed-auth-throttle.ts). */
export class TooManyFailedAuthError extends GatewayError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(
      'too_many_failed_auth',
      `Too many failed authentication attempts from this address. Retry after ${retryAfterSeconds} seconds.`,
      {
        headers: { ...headers, 'Retry-After': String(retryAfterSeconds) },
      },
    );
  }
}

export class ProviderError extends GatewayError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('provider_error', message, options);
  }
}

export class ProviderTimeoutError extends GatewayError {
  constructor(message: string) {
    super('provider_timeout', message);
  }
}

export class ServiceUnavailableError extends GatewayError {
  constructor(message: string, options: { headers?: Record<string, string>; cause?: unknown } = {}) {
    super('service_unavailable', message, options);
  }
}

export class InternalError extends GatewayError {
  constructor(message = 'Internal server error.', options: { cause?: unknown } = {}) {
    super('internal_error', message, options);
  }
}

/** Rebuilds an error that crossed a process boundary as `{code, message}`. */
export function errorFromCode(code: string, message: string): GatewayError {
  return new GatewayError(isErrorCode(code) ? code : 'internal_error', message);
}

/** The envelope every endpoint uses for errors. */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; type: ErrorType };
  timestamp: string;
  request_id: string;
}

export function toEnvelope(err: GatewayError, requestId: string, now: Date = new Date()): ErrorEnvelope {
  return {
    error: { code: err.code, message: err.message, type: err.type },
    timestamp: now.toISOString(),
    request_id: requestId,
  };
}
