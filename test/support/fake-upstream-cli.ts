import { parseArgs } from 'node:util';
import { isWireFormat } from '../../src/providers/registry.ts';
import { DEFAULT_FAKE_API_KEY, startFakeUpstream } from './fake-upstream.ts';

/**
 * Runs a fake upstream as its own process, for benchmarks:
 *
 *   node test/support/fake-upstream-cli.ts --format openai --port 0 \
 *     --latency-ms 50 --chunk-delay-ms 5 --key secret
 *
 * Each flag falls back to FAKE_UPSTREAM_FORMAT, _PORT, _HOST, _LATENCY_MS,
 * _CHUNK_DELAY_MS, _KEY. Prints `listening <base url>` once ready; stops on
 * SIGINT/SIGTERM. Requests are not recorded, so memory stays flat.
 */

const { values } = parseArgs({
  options: {
    format: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'latency-ms': { type: 'string' },
    'chunk-delay-ms': { type: 'string' },
    key: { type: 'string' },
  },
});
const env = process.env;

function numberOption(flag: string | undefined, envValue: string | undefined, name: string): number | undefined {
  const raw = flag ?? envValue;
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`fake-upstream: ${name} must be a non-negative number, got '${raw}'`);
    process.exit(2);
  }
  return value;
}

const format = values.format ?? env.FAKE_UPSTREAM_FORMAT;
if (!isWireFormat(format)) {
  console.error(`fake-upstream: --format must be openai, gemini or anthropic, got '${String(format)}'`);
  process.exit(2);
}

const upstream = await startFakeUpstream({
  format,
  port: numberOption(values.port, env.FAKE_UPSTREAM_PORT, 'port') ?? 0,
  host: values.host ?? env.FAKE_UPSTREAM_HOST ?? '127.0.0.1',
  apiKey: values.key ?? env.FAKE_UPSTREAM_KEY ?? DEFAULT_FAKE_API_KEY,
  record: false,
  behavior: {
    latencyMs: numberOption(values['latency-ms'], env.FAKE_UPSTREAM_LATENCY_MS, 'latency-ms'),
    chunkDelayMs: numberOption(values['chunk-delay-ms'], env.FAKE_UPSTREAM_CHUNK_DELAY_MS, 'chunk-delay-ms'),
  },
});
process.stdout.write(`listening ${upstream.url}\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    upstream.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
