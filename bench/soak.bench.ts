import { runLoad } from './support/load.ts';
import { rssMiB, startStack } from './support/stack.ts';

/**
 * Memory over a soak: steady mixed traffic (cache misses sync and streamed,
 * exact hits) through the gateway for BENCH_SOAK_MS (default 10 minutes;
 * 20 s with BENCH_SMOKE=1), sampling the resident memory of the API and the
 * worker. Flat means the last third's average is within 10% of the first
 * third's (after warm-up).
 */
const smoke = process.env.BENCH_SMOKE === '1';
const soakMs = Number(process.env.BENCH_SOAK_MS ?? (smoke ? 20_000 : 600_000));
const sampleMs = smoke ? 2_000 : 15_000;
const connections = Number(process.env.BENCH_SOAK_CONNECTIONS ?? 8);

const stack = await startStack({ env: { SEMANTIC_CACHE_ENABLED: 'false' } });
const apiPid = stack.gateway.api.child.pid;
const workerPid = stack.gateway.workers.get('provider_a')?.[0]?.child.pid;
const samples: { t: number; api: number; worker: number }[] = [];
const started = Date.now();
// The sample in flight is awaited before the processes stop, so the last one never reads a process that has just exited.
let sampling: Promise<void> = Promise.resolve();
const sampler = setInterval(() => {
  sampling = (async () => {
    samples.push({ t: Date.now() - started, api: await rssMiB(apiPid), worker: await rssMiB(workerPid) });
  })();
}, sampleMs);

let total: number;
let failures: number;
try {
  const result = await runLoad({
    url: `${stack.gateway.baseUrl}/v1/chat/completions`,
    headers: { 'x-api-key': stack.key },
    // One request in four repeats a small set of prompts (exact hits); the rest are unique misses.
    body: (i) =>
      JSON.stringify({
        model: 'a-4o',
        stream: i % 2 === 0,
        messages: [{ role: 'user', content: i % 4 === 0 ? `repeated prompt ${i % 50}` : `soak ${i} ${Math.random()}` }],
      }),
    connections,
    durationMs: soakMs,
    warmupMs: 0,
  });
  total = result.requests;
  failures = result.errors + Object.values(result.statuses).reduce((a, b) => a + b, 0);
} finally {
  clearInterval(sampler);
  await sampling;
  await stack.stop();
}

const third = Math.max(1, Math.floor(samples.length / 3));
const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const report = (name: 'api' | 'worker') => {
  // The first sample is warm-up (JIT, pools); compare the first and last thirds after it.
  const values = samples.slice(1).map((s) => s[name]);
  const first = avg(values.slice(0, third));
  const last = avg(values.slice(-third));
  const growth = (last - first) / first;
  // Under two minutes the curve is still warm-up (JIT, pools): report it, judge nothing.
  const verdict = soakMs < 120_000 ? 'too short to judge' : Math.abs(growth) <= 0.1 ? 'flat' : 'GROWING';
  return `| ${name} | ${first.toFixed(1)} | ${last.toFixed(1)} | ${Math.max(...values).toFixed(1)} | ${(100 * growth).toFixed(1)}% | ${verdict} |`;
};
console.log(
  `soak ${(soakMs / 60_000).toFixed(1)} min, ${connections} connections, ${total} requests (${(total / (soakMs / 1000)).toFixed(0)} req/s), ${failures} failed; RSS in MiB, sampled every ${sampleMs / 1000} s\n`,
);
console.log('| process | first third | last third | max | change | verdict |');
console.log('|---|---|---|---|---|---|');
console.log(report('api'));
console.log(report('worker'));
// The whole curve, so a climb that levels off (heap sizing) can be told from steady growth.
console.log(
  `\nRSS samples, MiB (api / worker): ${samples.map((s) => `${s.api.toFixed(0)}/${s.worker.toFixed(0)}`).join(' ')}`,
);
