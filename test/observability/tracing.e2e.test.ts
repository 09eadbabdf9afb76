import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitJob } from '../support/async-jobs.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';
import { startGateway, waitFor, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * OpenTelemetry tracing through the real processes: an API and a worker
 * export OTLP/HTTP JSON to a loopback receiver (OTEL_EXPORTER_OTLP_ENDPOINT).
 * One trace per request, continuing the client's `traceparent`, from the
 * API's server span through the queue to the worker's upstream attempts;
 * no prompt text, key or personal data in any span; log lines carry the
 * trace id.
 */

const KEY = 'gw_tracing_key_0123456789abcdefghijklmnopqr';
const UPSTREAM_KEY = 'sk-upstream-secret-tracing-31415926';
const PII = 'trace.person@example.com';
const PROMPT = 'tracing prompt words';
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

const prefix = uniquePrefix('tracing');
const redis = testRedis();
let receiver: OtlpReceiver;
let upstream: FakeUpstream;
let gateway: Gateway;
let client: OpenAI;

const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 };

function trace(traceId: string): ReceivedSpan[] {
  return receiver.spans.filter((s) => s.traceId === traceId);
}
function one(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}
function childrenOf(spans: ReceivedSpan[], parent: ReceivedSpan): string[] {
  return spans
    .filter((s) => s.parentSpanId === parent.spanId)
    .map((s) => s.name)
    .sort();
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: UPSTREAM_KEY,
      SEMANTIC_CACHE_ENABLED: 'false',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      LOG_LEVEL: 'info',
    },
    apiEnv: { LOG_LEVEL: 'info' },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          max_retries: 1,
        },
      ],
    },
    providers: ['provider_a'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await receiver?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe('a traced chat completion', () => {
  it("continues the client's trace from the API through the queue to the worker's upstream call", async () => {
    const reply = await client.chat.completions.create(
      { model: 'a-4o', messages: [{ role: 'user', content: `${PROMPT}, mail me at ${PII}` }] },
      { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } },
    );
    expect(reply.choices[0]?.message.content).toBeTruthy();
    await waitFor(
      () =>
        trace(CLIENT_TRACE).some((s) => s.name === 'POST /v1/chat/completions') &&
        trace(CLIENT_TRACE).some((s) => s.name === 'chat job'),
      10_000,
      'the spans of both processes',
    );
    const spans = trace(CLIENT_TRACE);

    const server = one(spans, 'POST /v1/chat/completions');
    expect(server).toMatchObject({ service: 'llm-gateway-api', kind: SPAN_KIND.server, parentSpanId: CLIENT_SPAN });
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gateway.model': 'a-4o',
      'gateway.provider': 'provider_a',
      'gateway.cache.status': 'MISS',
    });
    expect(childrenOf(spans, server)).toEqual([
      'auth',
      'cache lookup',
      'dlp',
      'queue publish',
      'rate limit',
      'stream relay',
    ]);
    expect(one(spans, 'dlp').attributes['gateway.dlp.findings']).toBe(1);

    const publish = one(spans, 'queue publish');
    expect(publish.kind).toBe(SPAN_KIND.producer);
    const job = one(spans, 'chat job');
    expect(job).toMatchObject({
      service: 'llm-gateway-worker',
      kind: SPAN_KIND.consumer,
      parentSpanId: publish.spanId,
    });
    expect(childrenOf(spans, job)).toEqual(['queue wait', 'upstream attempt']);
    const attempt = one(spans, 'upstream attempt');
    expect(attempt).toMatchObject({ kind: SPAN_KIND.client, statusCode: 0 });
    expect(attempt.attributes).toMatchObject({
      'gateway.upstream.outcome': 'ok',
      'gateway.attempt': 1,
      'server.address': '127.0.0.1',
    });
    // The queue wait ends where the job's work begins, inside the job span.
    const wait = one(spans, 'queue wait');
    expect(wait.startNs).toBe(job.startNs);
    expect(wait.endNs <= attempt.startNs).toBe(true);
  });

  it('shows each upstream attempt of a retried streamed request, the failed one marked', async () => {
    upstream.setBehavior({ failNext: { count: 1, status: 503 } });
    const stream = await client.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: `${PROMPT} streamed` }],
      stream: true,
    });
    for await (const _chunk of stream) {
      // drained
    }
    const secondAttempt = () =>
      receiver.spans.find((s) => s.name === 'upstream attempt' && s.attributes['gateway.attempt'] === 2);
    // The API exports its spans on its own schedule: wait for both processes' parts of the trace.
    await waitFor(
      () =>
        ['POST /v1/chat/completions', 'stream relay'].every((name) =>
          trace(secondAttempt()?.traceId ?? '').some((s) => s.name === name),
        ),
      10_000,
      'the whole trace',
    );
    const second = secondAttempt()!;
    const spans = trace(second.traceId);
    const attempts = spans
      .filter((s) => s.name === 'upstream attempt')
      .sort((a, b) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']));
    expect(
      attempts.map((a) => [
        a.attributes['gateway.upstream.outcome'],
        a.attributes['http.response.status_code'],
        a.statusCode,
      ]),
    ).toEqual([
      ['retryable_status', 503, 2],
      ['ok', undefined, 0],
    ]);
    const server = one(spans, 'POST /v1/chat/completions');
    expect(server.parentSpanId).toBeUndefined(); // no traceparent sent: a new trace
    expect(one(spans, 'stream relay').attributes['gateway.streamed']).toBe(true);

    // Log lines written for this request carry its trace: the worker's retry warning, the API's access line.
    await waitFor(
      () => gateway.workers.get('provider_a')![0]!.output().includes('retrying upstream call'),
      5_000,
      'the retry log line',
    );
    const workerLines = gateway.workers
      .get('provider_a')![0]!
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(workerLines.find((l) => l.msg === 'retrying upstream call')).toMatchObject({
      trace_id: second.traceId,
      span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    const apiLines = gateway.api
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(apiLines.filter((l) => l.trace_id === second.traceId && l.status === 200)).toHaveLength(1);
  });

  it('ends a refused request with an error-free server span and its error code; a malformed traceparent starts a new trace', async () => {
    const res = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'x-api-key': 'gw_wrong_tracing_key_0000000000',
        'content-type': 'application/json',
        traceparent: '00-not-a-trace-01',
      },
      body: '{}',
    });
    expect(res.status).toBe(401);
    const requestId = res.headers.get('x-request-id');
    await waitFor(
      () => receiver.spans.some((s) => s.attributes['gateway.request_id'] === requestId),
      10_000,
      'the 401 span',
    );
    const server = receiver.spans.find((s) => s.attributes['gateway.request_id'] === requestId)!;
    expect(server.attributes).toMatchObject({
      'http.response.status_code': 401,
      'gateway.error_code': 'invalid_api_key',
    });
    expect(server.statusCode).toBe(0); // a client error is not the server's failure
    expect(server.parentSpanId).toBeUndefined();
    expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(one(trace(server.traceId), 'auth').statusCode).toBe(2);
  });

  it("puts an asynchronous job's worker spans in the trace of the request that queued it", async () => {
    const submitted = await submitJob(gateway.baseUrl, KEY, 'a-4o', `${PROMPT} batch`);
    expect(submitted.status).toBe(202);
    const jobSpan = () => receiver.spans.find((s) => s.name === 'chat job' && s.traceId === serverSpan()?.traceId);
    const serverSpan = () => receiver.spans.find((s) => s.name === 'POST /v1/chat/completions/jobs');
    await waitFor(() => jobSpan() !== undefined, 10_000, 'the job span in the request trace');
    expect(jobSpan()!.parentSpanId).toBe(serverSpan()!.spanId);
    expect(childrenOf(trace(serverSpan()!.traceId), jobSpan()!)).toEqual(['queue wait', 'upstream attempt']);
  });

  it('never exports prompt text, personal data, a gateway key or a provider key', () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    const exported = receiver.bodies.join('\n');
    for (const secret of [PROMPT, PII, 'trace.person', KEY, UPSTREAM_KEY, 'gw_wrong_tracing_key'])
      expect(exported).not.toContain(secret);
  });
});
