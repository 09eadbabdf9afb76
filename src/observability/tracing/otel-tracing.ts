import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Settings } from '../../config/settings.ts';
import type { TraceIds } from '../logger.ts';
import type { SpanKind as GatewaySpanKind, SpanOptions, TraceCarrier, TraceSpan, Tracing } from './trace-span.ts';

/** Options of {@link OtelTracing}. */
export interface OtelTracingOptions {
  serviceName: string;
  sampler: Settings['OTEL_TRACES_SAMPLER'];
  /** Ratio of the `traceidratio` samplers, 0-1. */
  samplerRatio: number;
  /** Delay between two exports, ms. */
  scheduledDelayMs: number;
}

const KINDS: Record<GatewaySpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
};

/**
 * Tracing with the OpenTelemetry SDK, loaded only when tracing is on
 * (`open-tracing.ts`). Nothing global is registered (no global tracer
 * provider, context manager or propagator), so two roots in one process
 * never share state: parents are passed explicitly, and the span a log line
 * belongs to is kept in this instance's own AsyncLocalStorage. Spans are
 * batched and sent as OTLP/HTTP JSON to the endpoint the standard
 * `OTEL_EXPORTER_OTLP_*` variables name (read by the exporter itself).
 */
export class OtelTracing implements Tracing {
  readonly enabled = true;
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly current = new AsyncLocalStorage<TraceSpan>();

  constructor(options: OtelTracingOptions) {
    const resource = defaultResource()
      .merge(detectResources({ detectors: [hostDetector, envDetector] }))
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName }));
    this.provider = new TracerProvider({
      resource,
      sampler: samplerFor(options.sampler, options.samplerRatio),
      spanProcessors: [
        new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: options.scheduledDelayMs }),
      ],
    });
    this.tracer = this.provider.getTracer('llm-gateway');
  }

  start(name: string, parent: TraceSpan | TraceCarrier | undefined, options: SpanOptions = {}): TraceSpan {
    return this.startIn(this.contextOf(parent), name, options);
  }

  startIn(context: Context, name: string, options: SpanOptions): TraceSpan {
    const span = this.tracer.startSpan(
      name,
      {
        kind: KINDS[options.kind ?? 'internal'],
        ...(options.startTime !== undefined ? { startTime: options.startTime } : {}),
        ...(options.attributes ? { attributes: options.attributes } : {}),
      },
      context,
    );
    return new OtelSpan(this, span);
  }

  within<T>(span: TraceSpan, fn: () => T): T {
    return this.current.run(span, fn);
  }

  currentIds(): TraceIds | undefined {
    return this.current.getStore()?.ids();
  }

  /** The W3C context of a span. */
  inject(span: Span): TraceCarrier | undefined {
    const carrier: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    if (!carrier.traceparent) return undefined;
    return carrier.tracestate
      ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate }
      : { traceparent: carrier.traceparent };
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }

  private contextOf(parent: TraceSpan | TraceCarrier | undefined): Context {
    if (!parent) return ROOT_CONTEXT;
    if (parent instanceof OtelSpan) return trace.setSpan(ROOT_CONTEXT, parent.span);
    if ('traceparent' in parent && typeof parent.traceparent === 'string') {
      // A malformed traceparent is ignored by the propagator: the span starts a new trace.
      return this.propagator.extract(ROOT_CONTEXT, parent, defaultTextMapGetter);
    }
    return ROOT_CONTEXT;
  }
}

class OtelSpan implements TraceSpan {
  readonly recording = true;
  readonly span: Span;
  private readonly tracing: OtelTracing;

  constructor(tracing: OtelTracing, span: Span) {
    this.tracing = tracing;
    this.span = span;
  }

  child(name: string, options: SpanOptions = {}): TraceSpan {
    return this.tracing.startIn(trace.setSpan(ROOT_CONTEXT, this.span), name, options);
  }

  set(name: string, value: string | number | boolean): void {
    this.span.setAttribute(name, value);
  }

  rename(name: string): void {
    this.span.updateName(name);
  }

  fail(code: string): void {
    this.span.setAttribute('error.type', code);
    this.span.setStatus({ code: SpanStatusCode.ERROR });
  }

  end(endTime?: number): void {
    if (this.span.isRecording()) this.span.end(endTime);
  }

  carrier(): TraceCarrier | undefined {
    return this.tracing.inject(this.span);
  }

  ids(): TraceIds {
    const { traceId, spanId } = this.span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  }
}

function samplerFor(name: Settings['OTEL_TRACES_SAMPLER'], ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
