import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { cpuMs, redisPid, withCpu } from './support/cpu.ts';
import { startDesignFloor } from './support/design-floor-server.ts';
import {
  buildEmbeddingModel,
  findEmbeddingModel,
  startGatewayAsStarted,
  type GatewayAsStarted,
} from './support/gateway-as-started.ts';
import { runLoad } from './support/load.ts';
import {
  installPeer,
  peerVersion,
  ROOT,
  startLiteLLM,
  startPortkey,
  type BenchTarget,
  type PeerName,
} from './support/peers.ts';
import { GATEWAY_CORE, LOAD_CORE, pin } from './support/pinning.ts';
import { promptKinds } from './support/prompt-kinds.ts';
import { startUpstreamProcess, UPSTREAM_KEY } from './support/stack.ts';
import { startRedisServer } from '../test/support/redis-server.ts';

/**
 * This gateway next to its peers (issue 40, item 3), in one run, in front of
 * the same fake OpenAI-format upstream answering at once (JSON and SSE):
 * direct to the upstream; Portkey's gateway (npm `@portkey-ai/gateway`, one
 * Node process); LiteLLM's proxy (PyPI `litellm[proxy]`, one worker); the
 * design's floor (the steps the design requires of a miss: rate-limit script,
 * cache read, queue, worker and reply stream, with none of the gateway's
 * code: support/design-floor-server.ts), which bounds what tuning the gateway
 * can reach; and this gateway as `./scripts/start.sh` starts it (API and one
 * worker per provider, spec defaults: DLP and the semantic cache on). Each
 * peer, this gateway's processes, the floor's and their private Redis run on
 * core 0, the load generator and the upstream on core 1 (`taskset`). Every
 * request carries a new prompt, of four kinds, so no cache answers. Figures:
 * req/s at 64 connections, p50 at one connection, time to first token p50
 * (SSE, one connection), CPU per request at 64 connections (the server's
 * processes, with Redis for this gateway and the floor), resident memory
 * after the load, each as a ratio to Portkey's in the same run, with the
 * issue's targets and a verdict. Rounds rotate which server goes first;
 * figures are medians over the rounds.
 *
 * A peer that is not installed, or does not start or answer correctly, is
 * named loudly and left out; the run goes on. Peers install with
 * `bash scripts/install-bench-peers.sh` (pinned versions into .tools/peers/).
 *
 * BENCH_SMOKE=1: one short round (CI), installing Portkey if missing (about
 * 25 MB from npm, bounded) but never LiteLLM (about 750 MB from PyPI).
 * BENCH_DURATION_MS (5000 per run), BENCH_WARMUP_MS (2000, on the run's own
 * connections), BENCH_ROUNDS (3), BENCH_PROMPTS (plain,numbers,code,long),
 * BENCH_PEERS (direct,portkey,litellm,floor,gateway), BENCH_PEERS_INSTALL (1:
 * install missing peers, 0: never; default 1, smoke: Portkey only),
 * BENCH_DRAIN_MS (10000, smoke 2000: how long a run waits past its end for
 * the requests in flight), BENCH_PIN=0 (do not pin).
 */
const smoke = process.env.BENCH_SMOKE === '1';
const durationMs = Number(process.env.BENCH_DURATION_MS ?? (smoke ? 300 : 5000));
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? (smoke ? 100 : 2000));
const rounds = Number(process.env.BENCH_ROUNDS ?? (smoke ? 1 : 3));
const selected = new Set((process.env.BENCH_PEERS ?? 'direct,portkey,litellm,floor,gateway').split(','));
const installSetting = process.env.BENCH_PEERS_INSTALL;
/** How long a run waits past its end for the requests in flight (a peer may take minutes to answer 64 long streams). */
const drainMs = Number(process.env.BENCH_DRAIN_MS ?? (smoke ? 2000 : 10_000));
const MANY = 64;
const ONE = 1;

/** The issue's targets, for this gateway against Portkey and the direct call. */
const TARGETS = { throughput: 2, p50: 1.5, ttftOverDirectMs: 2, apiMiB: 250 };

const banners: string[] = [];
function loud(message: string): void {
  const line = `!!! ${message}`;
  console.log(`\n${line}\n`);
  banners.push(line);
}
const progress = (line: string) => process.stderr.write(`peers: ${line}\n`);

const kinds = promptKinds().filter(
  (k) => !process.env.BENCH_PROMPTS || process.env.BENCH_PROMPTS.split(',').includes(k.name),
);
if (kinds.length === 0)
  throw new Error(`BENCH_PROMPTS names no kind of prompt (plain, numbers, code, long): ${process.env.BENCH_PROMPTS}`);

const tasksetWorks = spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
const pinning = process.env.BENCH_PIN !== '0' && availableParallelism() >= 2 && tasksetWorks;
if (!pinning)
  loud(
    `NOT PINNED (${process.env.BENCH_PIN === '0' ? 'BENCH_PIN=0' : `${availableParallelism()} core(s) available, taskset ${tasksetWorks ? 'works' : 'missing'}`}): every process shares every core, so the figures are not comparable with pinned runs`,
  );
const gatewayCore = pinning ? GATEWAY_CORE : undefined;

const workDir = mkdtempSync(join(tmpdir(), 'gw-bench-peers-'));
const redisServer = await startRedisServer();
const upstream = await startUpstreamProcess(0);
const probe = new Redis({ port: redisServer.port, host: '127.0.0.1' });
const redisServerPid = await redisPid(probe);
probe.disconnect();
if (pinning) {
  await pin(GATEWAY_CORE, [redisServerPid]);
  await pin(LOAD_CORE, [process.pid, upstream.proc.child.pid]);
}

interface Cell {
  rps: number[];
  p50: number[];
  ttft: number[];
  failures: Record<string, number>;
  /** Requests still unanswered `drainMs` after a run's end (not failures: the run stopped waiting). */
  abandoned: number;
  /** CPU µs per request of the server's processes (and the Redis of those that use it), per run. */
  cpu: number[];
}

/** Sum of the known figures (a process that has gone reads as NaN). */
const finiteSum = (xs: number[]) => xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);

/** The rows whose server keeps its state in the bench's Redis: its CPU counts as theirs. */
const usesRedis = (id: Row['id']) => id === 'gateway' || id === 'floor';

interface Row {
  id: 'direct' | PeerName | 'floor' | 'gateway';
  target: BenchTarget;
}
const rows: Row[] = [];
let gateway: GatewayAsStarted | undefined;
let failed = false;

let cacheLine = '';
let stopped: Promise<void> | undefined;
/** Stops everything the bench started, once: the servers run in process groups of their own, which Ctrl-C does not reach. */
function shutdown(): Promise<void> {
  stopped ??= (async () => {
    for (const row of [...rows].reverse()) await row.target.stop();
    if (gateway && !rows.some((r) => r.id === 'gateway')) await gateway.stop();
    await upstream.proc.kill();
    await redisServer.stop();
    rmSync(workDir, { recursive: true, force: true });
  })();
  return stopped;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`peers: ${signal}, stopping the servers\n`);
    void shutdown().finally(() => process.exit(130));
  });
}

try {
  if (selected.has('direct')) {
    rows.push({
      id: 'direct',
      target: {
        label: 'direct to the upstream',
        url: `${upstream.url}/chat/completions`,
        headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
        stop: async () => {},
      },
    });
  }
  for (const peer of ['portkey', 'litellm'] as const) {
    if (!selected.has(peer)) continue;
    const mayInstall = installSetting === '0' ? false : installSetting === '1' ? true : !smoke || peer === 'portkey';
    if (peerVersion(peer) === undefined && mayInstall) installPeer(peer, smoke ? 120 : 1800);
    if (peerVersion(peer) === undefined) {
      loud(
        `${peer.toUpperCase()} IS NOT INSTALLED: its rows are missing and nothing is compared with it (bash scripts/install-bench-peers.sh ${peer}${mayInstall ? '; the install failed, see above' : smoke ? '; smoke runs do not install LiteLLM' : '; BENCH_PEERS_INSTALL=0'})`,
      );
      continue;
    }
    try {
      const options = { upstreamUrl: upstream.url, upstreamKey: UPSTREAM_KEY, core: gatewayCore, workDir };
      rows.push({ id: peer, target: peer === 'portkey' ? await startPortkey(options) : await startLiteLLM(options) });
    } catch (err) {
      loud(`${peer.toUpperCase()} DID NOT START, its rows are missing: ${(err as Error).message}`);
    }
  }
  if (selected.has('floor')) {
    try {
      rows.push({
        id: 'floor',
        target: await startDesignFloor({
          upstreamUrl: upstream.url,
          redisPort: redisServer.port,
          core: gatewayCore,
          workDir,
        }),
      });
    } catch (err) {
      loud(`THE DESIGN'S FLOOR DID NOT START, its rows are missing: ${(err as Error).message}`);
    }
  }
  if (selected.has('gateway')) {
    const modelDir = findEmbeddingModel() ?? (smoke ? undefined : buildEmbeddingModel(1800));
    gateway = await startGatewayAsStarted({
      upstreamUrl: upstream.url,
      upstreamKey: UPSTREAM_KEY,
      redisPort: redisServer.port,
      modelDir,
      core: gatewayCore,
      workDir,
    });
    if (gateway.semantic !== 'ready') {
      loud(
        `THIS GATEWAY RUNS WITHOUT ITS SEMANTIC CACHE (${gateway.semantic}), so NOT at spec defaults${modelDir ? '' : smoke ? ': smoke runs do not build the model; bash scripts/export-minilm-onnx.sh builds it' : ''}`,
      );
    }
    rows.push({ id: 'gateway', target: gateway });
  }

  // Each server must relay the upstream's answer, whole, before its figures mean anything.
  for (const row of [...rows]) {
    const prompt = () => kinds[0]?.next() ?? `hello there ${Math.random()}`;
    const problem = await checkAnswers(row.target, prompt(), prompt());
    if (problem === undefined) continue;
    if (row.id === 'direct' || row.id === 'gateway') failed = true;
    loud(`${row.target.label} DOES NOT ANSWER CORRECTLY, its rows are missing: ${problem}`);
    rows.splice(rows.indexOf(row), 1);
    await row.target.stop();
  }

  /** Per server, prompt kind, reply kind and connections: the figures of each round, and the failed requests by status (or `no reply or cut`). */
  const results = new Map<string, Cell>();
  for (let round = 0; round < rounds; round++) {
    for (const kind of kinds) {
      for (const stream of [false, true]) {
        for (const connections of [MANY, ONE]) {
          for (let i = 0; i < rows.length; i++) {
            const row = rows[(i + round) % rows.length] as Row;
            const pids = [...(row.target.pids?.() ?? []), ...(usesRedis(row.id) ? [redisServerPid] : [])];
            const { result: r, cpu } = await withCpu(Object.fromEntries(pids.map((pid) => [pid, pid])), () =>
              runLoad({
                url: row.target.url,
                headers: row.target.headers,
                body: () =>
                  JSON.stringify({ model: 'a-4o', stream, messages: [{ role: 'user', content: kind.next() }] }),
                connections,
                durationMs,
                warmupMs,
                firstToken: stream,
                drainMs,
              }),
            );
            const key = `${row.id}|${kind.name}|${stream}|${connections}`;
            const cell = results.get(key) ?? { rps: [], p50: [], ttft: [], failures: {}, abandoned: 0, cpu: [] };
            // Warm-up included on both sides: `finished` counts every request the span saw end.
            const spentMs = finiteSum(Object.values(cpu));
            cell.cpu.push(pids.length > 0 && r.finished > 0 ? (spentMs * 1000) / r.finished : NaN);
            // A run in which no request both began and ended inside the measured span has no figure (a smoke run's slow server).
            cell.rps.push(r.requests > 0 ? r.rps : NaN);
            cell.p50.push(r.latency.p50);
            if (r.ttft) cell.ttft.push(r.ttft.p50);
            if (r.errors > 0) cell.failures['no reply or cut'] = (cell.failures['no reply or cut'] ?? 0) + r.errors;
            cell.abandoned += r.abandoned;
            for (const [status, count] of Object.entries(r.statuses))
              cell.failures[status] = (cell.failures[status] ?? 0) + count;
            results.set(key, cell);
            if (r.abandoned > 0) await quiet(row.target, r.abandoned);
            progress(
              `round ${round + 1}/${rounds}, ${kind.name}, ${stream ? 'SSE' : 'JSON'}, ${connections} conn: ${row.id} ${r.rps.toFixed(0)} req/s, p50 ${r.latency.p50.toFixed(2)} ms`,
            );
          }
        }
      }
    }
  }
  const memory = new Map<string, number>();
  for (const row of rows) if (row.target.memory) memory.set(row.id, await row.target.memory());
  const gatewayAll = gateway && rows.some((r) => r.id === 'gateway') ? await gateway.allMemory() : NaN;
  if (gateway && rows.some((r) => r.id === 'gateway')) {
    const { exact, semantic } = await gateway.cacheStats();
    const hits = exact.hits + semantic.hits;
    const line = `this gateway's cache over the run: ${exact.hits} exact and ${semantic.hits} semantic hits, ${exact.misses} exact and ${semantic.misses} semantic misses`;
    // Every prompt is new: a hit means the figures partly measure the cache, not the path to the upstream.
    if (hits > 0.01 * (hits + exact.misses)) loud(`${line}: the cache answered part of the load`);
    cacheLine = line;
  }
  report(results, memory, gatewayAll);
} finally {
  await shutdown();
}
if (failed) process.exit(1);

/**
 * Waits until `target` has stopped working on requests the last run closed
 * unanswered (a server that does not notice a client leaving goes on with
 * them, and would slow the next run down): until its processes spend under
 * 5 % of a core over a second, for at most two minutes.
 */
async function quiet(target: BenchTarget, abandoned: number): Promise<void> {
  if (!target.pids) return;
  const started = Date.now();
  const cpu = async (pids: number[]) => finiteSum(await Promise.all(pids.map(cpuMs)));
  while (Date.now() - started < 120_000) {
    const pids = target.pids();
    const before = await cpu(pids);
    await new Promise((r) => setTimeout(r, 1000));
    if ((await cpu(pids)) - before < 50) break;
  }
  progress(
    `${target.label} was left with ${abandoned} unanswered requests; quiet again after ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
}

/**
 * Sends one JSON and one streamed request, each with its own prompt (the same
 * one twice would be an exact-cache hit the second time); undefined when both
 * came back whole as the upstream's echo, else what was wrong.
 */
async function checkAnswers(target: BenchTarget, jsonPrompt: string, ssePrompt: string): Promise<string | undefined> {
  const post = (stream: boolean, prompt: string) =>
    fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: JSON.stringify({ model: 'a-4o', stream, messages: [{ role: 'user', content: prompt }] }),
      signal: AbortSignal.timeout(30_000),
    });
  try {
    const json = await post(false, jsonPrompt);
    const body = await json.text();
    const content = (JSON.parse(body) as { choices?: Array<{ message?: { content?: string } }> }).choices?.[0]?.message
      ?.content;
    if (json.status !== 200 || content !== `Echo: ${jsonPrompt}`)
      return `JSON: status ${json.status}, body ${body.slice(0, 300)}`;
    const expected = `Echo: ${ssePrompt}`;
    const sse = await post(true, ssePrompt);
    const text = await sse.text();
    const events = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim());
    let streamed = '';
    for (const data of events) {
      if (data === '[DONE]') continue;
      streamed +=
        (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string | null } }> }).choices?.[0]?.delta
          ?.content ?? '';
    }
    if (
      sse.status !== 200 ||
      !sse.headers.get('content-type')?.startsWith('text/event-stream') ||
      streamed !== expected ||
      events.at(-1) !== '[DONE]'
    ) {
      return `SSE: status ${sse.status}, ${sse.headers.get('content-type')}, body ${text.slice(0, 300)}`;
    }
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function report(results: Map<string, Cell>, memory: Map<string, number>, gatewayAll: number): void {
  // Of an even count, the mean of the two middle values: the upper one alone would be the cold first round's CPU.
  const median = (all: number[]) => {
    const xs = all.filter(Number.isFinite).sort((a, b) => a - b);
    const mid = xs.length >> 1;
    if (xs.length === 0) return NaN;
    return xs.length % 2 === 1 ? (xs[mid] as number) : ((xs[mid - 1] as number) + (xs[mid] as number)) / 2;
  };
  const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  const ratio = (x: number, portkey: number) =>
    Number.isFinite(x) && Number.isFinite(portkey) && portkey > 0 ? `${(x / portkey).toFixed(2)}×` : 'n/a';
  const figure = (
    id: string,
    kind: string,
    stream: boolean,
    connections: number,
    what: 'rps' | 'p50' | 'ttft' | 'cpu',
  ) => median(results.get(`${id}|${kind}|${stream}|${connections}`)?.[what] ?? []);
  const has = (id: string) => rows.some((r) => r.id === id);
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();

  console.log(
    `\nnpm run bench -- peers at commit ${commit}, ${new Date().toISOString()}, Node ${process.versions.node}`,
  );
  console.log(
    `${pinning ? "pinned: each server under test, this gateway's processes and their Redis on core 0; the load generator and the fake upstream on core 1" : 'NOT PINNED'}; ${rounds} round(s) of ${durationMs} ms per run after ${warmupMs} ms of warm-up on the run's own connections, medians; every prompt new; times in ms`,
  );
  if (gateway)
    console.log(
      `this gateway: API + one worker per provider (scripts/start.sh), DLP on, exact cache on, semantic cache ${gateway.semantic}; ${cacheLine}`,
    );
  console.log(`ratios (×) are to Portkey in this run${has('portkey') ? '' : ': NO PORTKEY, so none'}\n`);

  for (const kind of kinds) {
    console.log(`### ${kind.label}\n`);
    console.log(
      `| server | JSON req/s, ${MANY} conns | SSE req/s, ${MANY} conns | JSON p50, 1 conn | SSE p50, 1 conn | time to first token p50, 1 conn | over direct | CPU µs per request, JSON / SSE, ${MANY} conns | failed requests |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const row of rows) {
      const cell = (stream: boolean, connections: number, what: 'rps' | 'p50' | 'ttft' | 'cpu', digits: number) => {
        const mine = figure(row.id, kind.name, stream, connections, what);
        return `${fmt(mine, digits)} (${ratio(mine, figure('portkey', kind.name, stream, connections, what))})`;
      };
      const ttft = figure(row.id, kind.name, true, ONE, 'ttft');
      const over = row.id === 'direct' ? '' : `+${fmt(ttft - figure('direct', kind.name, true, ONE, 'ttft'))}`;
      const failures: Record<string, number> = {};
      let abandoned = 0;
      for (const stream of [false, true]) {
        for (const c of [MANY, ONE]) {
          const cell = results.get(`${row.id}|${kind.name}|${stream}|${c}`);
          for (const [what, count] of Object.entries(cell?.failures ?? {}))
            failures[what] = (failures[what] ?? 0) + count;
          abandoned += cell?.abandoned ?? 0;
        }
      }
      const total = Object.values(failures).reduce((a, b) => a + b, 0);
      const details = [
        ...Object.entries(failures).map(([what, count]) => `${what}: ${count}`),
        ...(abandoned > 0 ? [`and ${abandoned} unanswered ${drainMs} ms after the end`] : []),
      ];
      const bad = details.length === 0 ? '0' : `${total} (${details.join(', ')})`;
      console.log(
        `| ${row.target.label} | ${cell(false, MANY, 'rps', 0)} | ${cell(true, MANY, 'rps', 0)} | ${cell(false, ONE, 'p50', 2)} | ${cell(true, ONE, 'p50', 2)} | ${cell(true, ONE, 'ttft', 2)} | ${over} | ${row.id === 'direct' ? '' : `${cell(false, MANY, 'cpu', 0)} / ${cell(true, MANY, 'cpu', 0)}`} | ${bad} |`,
      );
    }
    console.log('');
  }

  console.log('Resident memory after the load, MiB\n');
  console.log('| server | what | RSS | × Portkey |');
  console.log('|---|---|---|---|');
  for (const row of rows) {
    if (!row.target.memory) continue;
    console.log(
      `| ${row.target.label} | ${row.target.memoryOf ?? ''} | ${fmt(memory.get(row.id) ?? NaN, 0)} | ${ratio(memory.get(row.id) ?? NaN, memory.get('portkey') ?? NaN)} |`,
    );
  }
  if (Number.isFinite(gatewayAll))
    console.log(
      `| ${gateway?.label} | every process scripts/start.sh started | ${fmt(gatewayAll, 0)} | ${ratio(gatewayAll, memory.get('portkey') ?? NaN)} |`,
    );

  console.log(`\nThe targets of issue 40 (this gateway, spec defaults; the design's floor against the same bar)\n`);
  console.log("| target | prompts | measured | verdict | the design's floor |");
  console.log('|---|---|---|---|---|');
  const verdict = (ok: boolean | undefined, why?: string) =>
    smoke ? 'n/a (smoke run: not judged)' : ok === undefined ? `n/a (${why})` : ok ? 'pass' : '**FAIL**';
  /** The floor's figure for a target and whether it would meet it: a target the floor misses is out of the gateway's reach. */
  const floorCell = (text: string, ok: boolean) =>
    !has('floor') ? 'n/a' : smoke ? text : `${text}, ${ok ? 'within reach' : 'beyond it'}`;
  for (const kind of kinds) {
    /** The figures of the gateway, the floor and the row compared with. */
    const of = (against: 'portkey' | 'direct', stream: boolean, connections: number, what: 'rps' | 'p50' | 'ttft') =>
      (['gateway', 'floor', against] as const).map((id) => figure(id, kind.name, stream, connections, what)) as [
        number,
        number,
        number,
      ];
    const missing = !has('gateway') ? 'no gateway rows' : !has('portkey') ? 'no Portkey rows' : undefined;
    for (const stream of [false, true]) {
      const [mine, floor, theirs] = of('portkey', stream, MANY, 'rps');
      console.log(
        `| ${stream ? 'SSE' : 'JSON'} req/s at ${MANY} conns >= ${TARGETS.throughput}× Portkey | ${kind.name} | ${ratio(mine, theirs)} (${fmt(mine, 0)} / ${fmt(theirs, 0)}) | ${verdict(missing ? undefined : mine / theirs >= TARGETS.throughput, missing)} | ${floorCell(`${ratio(floor, theirs)} (${fmt(floor, 0)})`, floor / theirs >= TARGETS.throughput)} |`,
      );
    }
    for (const stream of [false, true]) {
      const [mine, floor, theirs] = of('portkey', stream, ONE, 'p50');
      console.log(
        `| ${stream ? 'SSE' : 'JSON'} p50 at 1 conn <= ${TARGETS.p50}× Portkey | ${kind.name} | ${ratio(mine, theirs)} (${fmt(mine)} / ${fmt(theirs)} ms) | ${verdict(missing ? undefined : mine / theirs <= TARGETS.p50, missing)} | ${floorCell(`${ratio(floor, theirs)} (${fmt(floor)} ms)`, floor / theirs <= TARGETS.p50)} |`,
      );
    }
    const [mine, floor, theirs] = of('direct', true, ONE, 'ttft');
    const noDirect = !has('gateway') ? 'no gateway rows' : !has('direct') ? 'no direct rows' : undefined;
    console.log(
      `| time to first token p50 <= direct + ${TARGETS.ttftOverDirectMs} ms | ${kind.name} | +${fmt(mine - theirs)} ms (${fmt(mine)} / ${fmt(theirs)} ms) | ${verdict(noDirect ? undefined : mine - theirs <= TARGETS.ttftOverDirectMs, noDirect)} | ${floorCell(`+${fmt(floor - theirs)} ms`, floor - theirs <= TARGETS.ttftOverDirectMs)} |`,
    );
  }
  const api = memory.get('gateway') ?? NaN;
  const modelLoaded = gateway?.semantic === 'ready';
  console.log(
    `| API RSS after load <= ${TARGETS.apiMiB} MiB, embedding model loaded | all | ${fmt(api, 0)} MiB | ${verdict(!has('gateway') ? undefined : modelLoaded ? api <= TARGETS.apiMiB : undefined, !has('gateway') ? 'no gateway rows' : 'the model was not loaded')} | n/a (no model) |`,
  );
  for (const line of banners) console.log(`\n${line}`);
}
