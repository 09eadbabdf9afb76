import type { ChatCompletion } from '../src/chat/types.ts';
import { parseConfig } from '../src/config/gateway-config.ts';
import { chatDoor } from '../src/doors/chat/chat-door.ts';
import { messagesDoor } from '../src/doors/messages/messages-door.ts';
import { ResponsesDoor } from '../src/doors/responses/responses-door.ts';
import { ChunkEmitter } from '../src/execution/chunk-emitter.ts';
import type { Door as PipelineDoor } from '../src/pipeline/door.ts';
import { withCpu } from './support/cpu.ts';
import { runLoad, type LoadResult } from './support/load.ts';
import { startStack } from './support/stack.ts';

/**
 * What a request costs the gateway's CPU by the door it comes in through:
 * the same unique prompt (cache misses) to the same OpenAI-format upstream
 * through `POST /v1/chat/completions`, `POST /v1/messages` and
 * `POST /v1/responses` (`store: false`, so no database write), non-streamed
 * and streamed, in interleaved rounds so that every door sees the same
 * machine. Reports the CPU time of the API and worker processes per request
 * (user + system, all threads, from Linux /proc), summed and apart, and each
 * door's ratio to the chat door. CPU time rather than wall time, since the
 * machine is shared: a busy neighbour slows a run down but does not add to
 * what the gateway's processes spend.
 *
 * Every process of the stack shares the machine's cores with the load
 * generator, so a door that runs slower batches less per event-loop wake-up
 * and pays more per request for reasons that are not its own. The second
 * table therefore times, in this process alone, the only work that differs
 * between the doors: parsing the body, decoding it into the canonical
 * request, and encoding the reply (a `chat.completion`, or the chunks the
 * worker writes for a streamed one) in the door's shape.
 *
 * With BENCH_RATE (requests per second) every door is offered the same
 * paced load instead of a closed loop: at a fixed concurrency a door that
 * runs slower batches less per event-loop wake-up, in the worker too, and pays
 * more per request for that alone; at one rate below saturation every door
 * batches alike.
 *
 * BENCH_SMOKE=1: one short round. BENCH_DURATION_MS (per run), BENCH_ROUNDS,
 * BENCH_CONNECTIONS (one count), BENCH_ITERATIONS (in-process, per door and round) tune it.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 800 : 5000));
const rounds = Number(process.env.BENCH_ROUNDS ?? (smoke ? 1 : 3));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const iterations = Number(process.env.BENCH_ITERATIONS ?? (smoke ? 2000 : 50_000));
const rate = process.env.BENCH_RATE ? Number(process.env.BENCH_RATE) : undefined;
const MAX_TOKENS = 256;

const stack = await startStack({ env: { DLP_ENABLED: 'true', SEMANTIC_CACHE_ENABLED: 'false' } });
// Every door reads the key from x-api-key; anthropic-version is what Anthropic's SDKs send.
const headers = { 'x-api-key': stack.key, 'cache-control': 'no-store', 'anthropic-version': '2023-06-01' };
const prompt = (i: number) => `benchmark prompt number ${i} ${Math.random()}`;

interface Door {
  name: string;
  path: string;
  body: (stream: boolean) => (i: number) => string;
}

const doors: Door[] = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    // A Messages or Responses reply always carries its usage, so the same chat completion asks for it too.
    body: (stream) => (i) =>
      JSON.stringify({
        model: 'a-4o',
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        max_tokens: MAX_TOKENS,
        messages: [{ role: 'user', content: prompt(i) }],
      }),
  },
  {
    name: 'messages',
    path: '/v1/messages',
    body: (stream) => (i) =>
      JSON.stringify({
        model: 'a-4o',
        stream,
        max_tokens: MAX_TOKENS,
        messages: [{ role: 'user', content: prompt(i) }],
      }),
  },
  {
    name: 'responses',
    path: '/v1/responses',
    body: (stream) => (i) =>
      JSON.stringify({ model: 'a-4o', stream, store: false, max_output_tokens: MAX_TOKENS, input: prompt(i) }),
  },
];

interface Total {
  apiMs: number;
  workerMs: number;
  requests: number;
  bad: number;
}

const totals = new Map<string, Total>();
const pids: Record<string, number | undefined> = { api: stack.gateway.api.child.pid };
for (const [i, worker] of [...stack.gateway.workers.values()].flat().entries()) pids[`worker${i}`] = worker.child.pid;

function badOf(r: LoadResult): number {
  return r.errors + Object.values(r.statuses).reduce((a, b) => a + b, 0);
}

try {
  // A first short pass compiles every path before anything is counted.
  for (const door of doors) {
    for (const stream of [false, true])
      await runLoad({
        url: `${stack.gateway.baseUrl}${door.path}`,
        headers,
        body: door.body(stream),
        connections,
        durationMs: smoke ? 300 : 1000,
        warmupMs: 0,
      });
  }
  for (let round = 0; round < rounds; round++) {
    for (const stream of [false, true]) {
      // Each round starts with another door, so none always runs on a warmer machine.
      const order = doors.map((_, i) => doors[(i + round) % doors.length] as Door);
      for (const door of order) {
        const { result, cpu } = await withCpu(pids, () =>
          runLoad({
            url: `${stack.gateway.baseUrl}${door.path}`,
            headers,
            body: door.body(stream),
            connections,
            durationMs,
            ...(rate ? { ratePerSecond: rate } : {}),
          }),
        );
        const key = `${door.name}, ${stream ? 'stream' : 'sync'}`;
        const total = totals.get(key) ?? { apiMs: 0, workerMs: 0, requests: 0, bad: 0 };
        total.apiMs += cpu.api ?? NaN;
        total.workerMs += Object.entries(cpu).reduce(
          (sum, [name, ms]) => (name.startsWith('worker') ? sum + ms : sum),
          0,
        );
        // `finished` counts every request of the run, as the CPU does.
        total.requests += result.finished;
        total.bad += badOf(result);
        totals.set(key, total);
      }
    }
  }
} finally {
  await stack.stop();
}

const perRequest = (ms: number, requests: number) => (ms * 1000) / Math.max(1, requests);
const format = (us: number) => (Number.isFinite(us) ? us.toFixed(0) : '-');

console.log(
  `${rounds} interleaved round(s) of ${durationMs} ms per door at ${connections} connections${rate ? `, ${rate} req/s offered` : ''}; CPU per request (user + system, all threads), µs\n`,
);
console.log('| door | requests | API | worker | API + worker | ratio to chat | errors |');
console.log('|---|---|---|---|---|---|---|');
for (const stream of ['sync', 'stream']) {
  const chat = totals.get(`chat, ${stream}`);
  const chatCost = chat ? perRequest(chat.apiMs + chat.workerMs, chat.requests) : NaN;
  for (const door of doors) {
    const t = totals.get(`${door.name}, ${stream}`);
    if (!t) continue;
    const cost = perRequest(t.apiMs + t.workerMs, t.requests);
    const ratio = cost / chatCost;
    console.log(
      `| ${door.name}, ${stream} | ${t.requests} | ${format(perRequest(t.apiMs, t.requests))} | ${format(perRequest(t.workerMs, t.requests))} | ${format(cost)} | ${Number.isFinite(ratio) ? ratio.toFixed(2) : '-'} | ${t.bad} |`,
    );
  }
}

// The door's own work, in this process: body parse, decode, reply encoding.
const config = parseConfig('providers: [{name: provider_a, api_key_env: K, models: [a-4o]}]');
const inProcess: Array<{ name: string; door: PipelineDoor }> = [
  { name: 'chat', door: chatDoor },
  { name: 'messages', door: messagesDoor({ config: () => config }) },
  { name: 'responses', door: new ResponsesDoor() },
];
const answer = 'Echo: benchmark prompt number 123 0.8146392017';
const usage = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
const completion: ChatCompletion = {
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1_764_265_000,
  model: 'a-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop', logprobs: null }],
  usage,
};
const completionJson = JSON.stringify(completion);
// The chunks a worker writes for the same answer, one per word as the fake upstream sends them.
const chunks: string[] = [];
const emitter = new ChunkEmitter('chatcmpl-bench', 1_764_265_000, 'a-4o', true, (json) => chunks.push(json));
emitter.delta(0, { content: '' });
for (const [i, word] of answer.split(' ').entries()) emitter.delta(0, { content: i === 0 ? word : ` ${word}` });
emitter.delta(0, { finish_reason: 'stop' });
emitter.usage(usage);

async function doorWork(door: PipelineDoor, name: string, stream: boolean, i: number): Promise<number> {
  const body = JSON.parse(doors.find((d) => d.name === name)!.body(stream)(i));
  const from = { body, headers, owner: 'bench' };
  const request = await door.decode(from);
  const codec = door.reply(request, from);
  if (!stream) return codec.completion(completionJson).length;
  let bytes = 0;
  for (const chunk of chunks) bytes += codec.chunk(chunk).length;
  return bytes + codec.end().length;
}

const doorCpu = new Map<string, number>();
for (let round = 0; round < rounds + 1; round++) {
  for (const stream of [false, true]) {
    for (const { name, door } of inProcess) {
      const start = process.cpuUsage();
      for (let i = 0; i < iterations; i++) await doorWork(door, name, stream, i);
      const spent = process.cpuUsage(start);
      // Round 0 warms every path up and is not counted.
      if (round > 0)
        doorCpu.set(
          `${name}, ${stream ? 'stream' : 'sync'}`,
          (doorCpu.get(`${name}, ${stream ? 'stream' : 'sync'}`) ?? 0) + spent.user + spent.system,
        );
    }
  }
}
console.log(
  `\nThe door's own work in one process (body parse, decode, reply encoding), ${rounds} round(s) of ${iterations} requests per door, µs per request\n`,
);
console.log('| door | door work µs | difference to chat µs |');
console.log('|---|---|---|');
for (const stream of ['sync', 'stream']) {
  const chat = (doorCpu.get(`chat, ${stream}`) ?? NaN) / (rounds * iterations);
  for (const { name } of inProcess) {
    const us = (doorCpu.get(`${name}, ${stream}`) ?? NaN) / (rounds * iterations);
    console.log(
      `| ${name}, ${stream} | ${us.toFixed(1)} | ${name === 'chat' ? '' : (us - chat >= 0 ? '+' : '') + (us - chat).toFixed(1)} |`,
    );
  }
}

const failed = [...totals.values()].reduce((sum, t) => sum + t.bad, 0);
if (failed > 0) process.exitCode = 1;
