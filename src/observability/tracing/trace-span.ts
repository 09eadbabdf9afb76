import type { TraceIds } from '../logger.ts';

/**
 * The gateway's view of tracing: a small interface the request path and the
 * worker call whether tracing is on or off. Off, every call lands on
 * {@link NOOP_SPAN} and {@link NO_TRACING} (no SDK is loaded, nothing is
 * allocated per span); on, `otel-tracing.ts` backs it with OpenTelemetry.
 *
 * Attributes carry identifiers and outcomes only (route, status, error code,
 * provider, model name, cache status, counts), never a prompt, a key, a
 * header value or upstream text.
 */

/** W3C trace context (`traceparent`, `tracestate`) as carried in a job or a request's headers. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

export type SpanKind = 'server' | 'client' | 'producer' | 'consumer' | 'internal';
export type SpanAttributes = Record<string, string | number | boolean>;

/** Options of a new span. */
export interface SpanOptions {
  /** @defaultValue `internal` */
  kind?: SpanKind;
  /** Epoch ms; a span that began before it was known (queue wait). @defaultValue now */
  startTime?: number;
  attributes?: SpanAttributes;
}

export interface TraceSpan {
  /** False for the no-op span. */
  readonly recording: boolean;
  /** A span under this one. */
  child(name: string, options?: SpanOptions): TraceSpan;
  set(name: string, value: string | number | boolean): void;
  /** Renames it (a server span learns its route pattern only once routed). */
  rename(name: string): void;
  /** Marks the span failed with a gateway error code (never a message: it may quote upstream text). */
  fail(code: string): void;
  /** Ends it; `endTime` in epoch ms. Ending twice is harmless. */
  end(endTime?: number): void;
  /** Its W3C trace context, to hand to a job; undefined for the no-op span. */
  carrier(): TraceCarrier | undefined;
  /** Its ids, for log lines; undefined for the no-op span. */
  ids(): TraceIds | undefined;
}

export interface Tracing {
  readonly enabled: boolean;
  /** A span whose parent is `parent`: a span, a carrier (a job's, a client's `traceparent`), or none (a new trace). */
  start(name: string, parent: TraceSpan | TraceCarrier | undefined, options?: SpanOptions): TraceSpan;
  /** Runs `fn` with `span` current: log lines written meanwhile carry its ids ({@link currentIds}). */
  within<T>(span: TraceSpan, fn: () => T): T;
  /** Ids of the current span, for the logger. */
  currentIds(): TraceIds | undefined;
  /** Exports what is pending and stops. */
  shutdown(): Promise<void>;
}

/**
 * Ends `span` once `work` settles, failed with the error's code when it
 * rejects, or with the code `failure` names for a value that is a failure
 * (a key that matched nothing). Without tracing it returns `work` itself:
 * nothing is chained.
 */
export function traced<T>(span: TraceSpan, work: Promise<T>, failure?: (value: T) => string | undefined): Promise<T> {
  if (!span.recording) return work;
  return work.then(
    (value) => {
      const code = failure?.(value);
      if (code) span.fail(code);
      span.end();
      return value;
    },
    (err: unknown) => {
      span.fail(errorCodeOf(err));
      span.end();
      throw err;
    },
  );
}

/** A gateway error's code (`rate_limit_exceeded`), or `error`: never a message. */
export function errorCodeOf(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? code : 'error';
}

/** The span of a process without tracing: every call does nothing. */
export const NOOP_SPAN: TraceSpan = {
  recording: false,
  child: () => NOOP_SPAN,
  set: () => {},
  rename: () => {},
  fail: () => {},
  end: () => {},
  carrier: () => undefined,
  ids: () => undefined,
};

/** Tracing off. */
export const NO_TRACING: Tracing = {
  enabled: false,
  start: () => NOOP_SPAN,
  within: (_span, fn) => fn(),
  currentIds: () => undefined,
  shutdown: async () => {},
};
