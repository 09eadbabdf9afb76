import { GatewayError, InvalidRequestError, ProviderError, ProviderTimeoutError } from '../errors/catalog.ts';
import { scrubUpstreamText } from './upstream-text.ts';

/**
 * Why one upstream attempt failed, and whether another attempt may help.
 * Attempts throw these; the executor decides between retry and a client error.
 *
 * Attempts build them from raw upstream text; every one leaves its attempt
 * through {@link UpstreamFailure.scrubbed} (see `classify` in
 * upstream-attempt.ts), so what the executor logs, writes to Redis and turns
 * into the client's error ({@link clientErrorFor}) is already scrubbed.
 */
export class UpstreamFailure extends Error {
  readonly kind: 'status' | 'network' | 'timeout' | 'protocol' | 'stream';
  readonly retryable: boolean;
  readonly options: { status?: number; retryAfterMs?: number; upstreamMessage?: string };

  constructor(
    message: string,
    kind: UpstreamFailure['kind'],
    retryable: boolean,
    options: { status?: number; retryAfterMs?: number; upstreamMessage?: string } = {},
  ) {
    super(message);
    this.name = 'UpstreamFailure';
    this.kind = kind;
    this.retryable = retryable;
    this.options = options;
  }

  /** The same failure with its message and the upstream's message passed through {@link scrubUpstreamText}. */
  scrubbed(secrets: readonly string[]): UpstreamFailure {
    const options = { ...this.options };
    if (options.upstreamMessage !== undefined)
      options.upstreamMessage = scrubUpstreamText(options.upstreamMessage, secrets);
    return new UpstreamFailure(scrubUpstreamText(this.message, secrets), this.kind, this.retryable, options);
  }
}

/** Reasons passed to `AbortController.abort()` by an attempt's timers. */
export class AttemptTimeout extends Error {
  readonly phase: 'first_byte' | 'idle';

  constructor(phase: 'first_byte' | 'idle') {
    super(phase === 'first_byte' ? 'no answer in time' : 'stream went silent');
    this.name = 'AttemptTimeout';
    this.phase = phase;
  }
}

/** Statuses worth another attempt. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/** `Retry-After` as ms: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The client-facing error for a final failure. */
export function clientErrorFor(failure: UpstreamFailure, provider: string, attempts: number): GatewayError {
  const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
  const detail = failure.options.upstreamMessage ? `: ${failure.options.upstreamMessage}` : '';
  switch (failure.kind) {
    case 'timeout':
      return new ProviderTimeoutError(`${provider} did not answer in time (${failure.message})${tries}.`);
    case 'status': {
      const status = failure.options.status ?? 0;
      if (status === 400 || status === 422) return new InvalidRequestError(`${provider} rejected the request${detail}`);
      if (status === 401 || status === 403) {
        return new ProviderError(
          `${provider} rejected the gateway's credentials (HTTP ${status}); check its configured API key.`,
        );
      }
      if (status === 429)
        return new ProviderError(`${provider} is rate limiting the gateway (HTTP 429)${tries}${detail}`);
      return new ProviderError(`${provider} failed with HTTP ${status}${tries}${detail}`);
    }
    case 'network':
      return new ProviderError(`${provider} could not be reached (${failure.message})${tries}.`);
    case 'protocol':
      return new ProviderError(`${provider} sent a malformed reply: ${failure.message}`);
    case 'stream':
      return new ProviderError(`${provider} ${failure.message}${tries}.`);
  }
}
