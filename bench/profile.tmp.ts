import { runLoad } from './support/load.ts';
import { startStack } from './support/stack.ts';
const stack = await startStack({ env: { DLP_ENABLED: 'true', SEMANTIC_CACHE_ENABLED: 'false', NODE_OPTIONS: '--cpu-prof --cpu-prof-dir=/tmp/prof' } });
const r = await runLoad({ url: `${stack.gateway.baseUrl}/v1/chat/completions`, headers: { 'x-api-key': stack.key, 'cache-control': 'no-store' }, body: (i) => JSON.stringify({ model: 'a-4o', messages: [{ role: 'user', content: `prompt ${i} ${Math.random()}` }] }), connections: 32, durationMs: 6000 });
console.log(JSON.stringify({ rps: r.rps, p50: r.latency.p50, p99: r.latency.p99, statuses: r.statuses, errors: r.errors }));
await stack.stop();
