import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.ts';
import { openTracing, tracingWanted } from '../../src/observability/tracing/open-tracing.ts';
import { NOOP_SPAN, NO_TRACING, traced } from '../../src/observability/tracing/trace-span.ts';

/** Tracing's switch (the standard OTEL_* variables) and its off path. Spans themselves are tested through the processes (tracing.e2e.test.ts). */

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('OTEL_* settings', () => {
  it('turn tracing on with an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp, and off otherwise', () => {
    const wanted = (env: Record<string, string>) => tracingWanted(loadSettings(env));
    expect(wanted({})).toBe(false);
    expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(wanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(wanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(wanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(wanted({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
  });

  it('reject an exporter or sampler the gateway does not have, naming the variable', () => {
    expect(() => loadSettings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/OTEL_TRACES_EXPORTER/);
    expect(() => loadSettings({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() => loadSettings({ OTEL_TRACES_SAMPLER_ARG: '2' })).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(
      loadSettings({ OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio', OTEL_TRACES_SAMPLER_ARG: '0.25' }),
    ).toMatchObject({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 0.25 });
  });
});

describe('tracing off', () => {
  it('is the shared no-op: every span is the same object, nothing is chained onto a promise', async () => {
    const tracing = await openTracing(loadSettings({}), 'test');
    expect(tracing).toBe(NO_TRACING);
    const span = tracing.start('x', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    expect(span).toBe(NOOP_SPAN);
    expect(span.child('y')).toBe(NOOP_SPAN);
    expect(span.carrier()).toBeUndefined();
    const work = Promise.resolve(1);
    expect(traced(span, work)).toBe(work);
    expect(tracing.within(span, () => 7)).toBe(7);
  });

  it('never loads the SDK: only the dynamic import in open-tracing.ts reaches it', () => {
    const sdk =
      /@opentelemetry\/(sdk-trace|exporter-trace-otlp-http|resources|core|context-async-hooks)|otel-tracing\.ts/;
    const importers = sourceFiles('src')
      .concat(sourceFiles('workers'))
      .filter((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .some((line) => /^\s*(import|export)\b|import\(/.test(line) && sdk.test(line)),
      )
      .map((file) => file.replaceAll('\\', '/'));
    expect(importers.sort()).toEqual([
      'src/observability/tracing/open-tracing.ts',
      'src/observability/tracing/otel-tracing.ts',
    ]);
    expect(readFileSync('src/observability/tracing/open-tracing.ts', 'utf8')).toMatch(
      /await import\('\.\/otel-tracing\.ts'\)/,
    );
    expect(readFileSync('src/observability/tracing/open-tracing.ts', 'utf8')).not.toMatch(/^import .*otel-tracing/m);
  });
});
