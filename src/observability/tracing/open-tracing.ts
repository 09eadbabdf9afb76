import type { Settings } from '../../config/settings.ts';
import { NO_TRACING, type Tracing } from './trace-span.ts';

/** The OTEL_* settings tracing reads. */
export type TracingSettings = Pick<
  Settings,
  | 'OTEL_SDK_DISABLED'
  | 'OTEL_TRACES_EXPORTER'
  | 'OTEL_EXPORTER_OTLP_ENDPOINT'
  | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
  | 'OTEL_SERVICE_NAME'
  | 'OTEL_TRACES_SAMPLER'
  | 'OTEL_TRACES_SAMPLER_ARG'
  | 'OTEL_BSP_SCHEDULE_DELAY'
>;

/**
 * Whether traces are exported: `OTEL_TRACES_EXPORTER=otlp`, or, with it
 * unset, an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); never with `OTEL_SDK_DISABLED=true`
 * or `OTEL_TRACES_EXPORTER=none`.
 */
export function tracingWanted(settings: TracingSettings): boolean {
  if (settings.OTEL_SDK_DISABLED) return false;
  if (settings.OTEL_TRACES_EXPORTER !== undefined) return settings.OTEL_TRACES_EXPORTER === 'otlp';
  return (
    settings.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined
  );
}

/**
 * The process's tracing: {@link NO_TRACING} unless {@link tracingWanted}, in
 * which case the OpenTelemetry SDK is loaded (only then) and spans go to the
 * OTLP/HTTP endpoint in JSON. `serviceName` applies when OTEL_SERVICE_NAME is unset.
 */
export async function openTracing(settings: TracingSettings, serviceName: string): Promise<Tracing> {
  if (!tracingWanted(settings)) return NO_TRACING;
  const { OtelTracing } = await import('./otel-tracing.ts');
  return new OtelTracing({
    serviceName: settings.OTEL_SERVICE_NAME ?? serviceName,
    sampler: settings.OTEL_TRACES_SAMPLER,
    samplerRatio: settings.OTEL_TRACES_SAMPLER_ARG,
    scheduledDelayMs: settings.OTEL_BSP_SCHEDULE_DELAY,
  });
}
