import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * What became of one upstream attempt, as counted by
 * gateway_upstream_attempts_total: `ok`; `retryable_status` (429, 408, 5xx),
 * `status` (any other error status); `timeout` (no first byte in time, or a
 * stream gone silent); `connection_error`; `stream_error` (the upstream
 * failed mid-stream or ended it early); `protocol_error` (a reply that does
 * not parse); `cancelled` (the client went away).
 */
export type AttemptOutcome =
  | 'ok'
  | 'retryable_status'
  | 'status'
  | 'timeout'
  | 'connection_error'
  | 'stream_error'
  | 'protocol_error'
  | 'cancelled';

/**
 * The worker's metrics, on a registry of its own: every upstream attempt by
 * outcome and every retry by the outcome that caused it, per provider (names
 * from config.yaml, so the label is bounded), and prom-client's process
 * defaults. Served on WORKER_METRICS_PORT ({@link serveWorkerMetrics}).
 */
export class UpstreamMetrics {
  readonly registry: Registry;
  private readonly attempts: Counter<'provider' | 'outcome'>;
  private readonly retries: Counter<'provider' | 'reason'>;

  constructor(options: { providers: readonly string[]; collectDefaults?: boolean }) {
    this.registry = new Registry();
    if (options.collectDefaults ?? true) collectDefaultMetrics({ register: this.registry });
    this.attempts = new Counter({
      name: 'gateway_upstream_attempts_total',
      help: 'Upstream calls made by workers, one per attempt, by provider and outcome (ok, retryable_status, status, timeout, connection_error, stream_error, protocol_error, cancelled).',
      labelNames: ['provider', 'outcome'] as const,
      registers: [this.registry],
    });
    this.retries = new Counter({
      name: 'gateway_upstream_retries_total',
      help: 'Upstream attempts retried by workers, by provider and the outcome of the attempt that failed.',
      labelNames: ['provider', 'reason'] as const,
      registers: [this.registry],
    });
    // The series that alerts divide by exist from the start.
    for (const provider of options.providers) {
      this.attempts.inc({ provider, outcome: 'ok' }, 0);
      this.retries.inc({ provider, reason: 'retryable_status' }, 0);
    }
  }

  attempt(provider: string, outcome: AttemptOutcome): void {
    this.attempts.inc({ provider, outcome });
  }

  retry(provider: string, reason: AttemptOutcome): void {
    this.retries.inc({ provider, reason });
  }
}
