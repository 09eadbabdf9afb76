import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import {
  presidioPython,
  reportAnalyzerMissing,
  startPresidioAnalyzer,
  type PresidioAnalyzer,
} from '../support/presidio-analyzer.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, keysUnder, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * DLP_ANALYZER_URL through running processes with the real Presidio analyzer
 * (presidio-analyzer and spaCy's English and Spanish pipelines from PyPI, served by
 * analyzer/presidio_server.py on loopback), the official openai client and a
 * loopback upstream: names and places the in-process recognizers do not look
 * for are redacted in requests, replies and tool-call arguments; the
 * analyzer is then killed in the middle of traffic, and each failure policy
 * does what it says, with no request hanging and nothing the analyzer saw in a log.
 */

const KEY = 'gw_dlp_analyzer_key_0123456789abcdef';
const UPSTREAM_KEY = 'up-dlp-analyzer';
// Names and places outside the in-process dictionaries' reach or not asked of them (DLP_ENTITIES is the default).
const PERSON = 'Sarah Johnson';
const CITY = 'Chicago';
const REPLY_PERSON = 'Priya Raghunathan';
const REPLY_CITY = 'Belo Horizonte';
const EMAIL = 'sarah.j.analyzer@example.com';
// A deployment that screens Spanish (DLP_ANALYZER_LANGUAGE=es): the English pipeline reads this name as an organisation
// and misses the city; the Spanish one finds both.
const ES_PERSON = 'Guadalupe Etxeberria';
const ES_CITY = 'Sevilla';
const ES_EMAIL = 'lupe.analyzer@example.com';
const NEEDLES = [PERSON, CITY, REPLY_PERSON, REPLY_CITY, EMAIL, 'Olusegun', 'Adeyemi', ES_PERSON, ES_CITY, ES_EMAIL];
const PROMPT = `Please email ${PERSON} in ${CITY} at ${EMAIL} about the invoice.`;
const ES_PROMPT = `Por favor, escriba a ${ES_PERSON} en ${ES_CITY} a la dirección ${ES_EMAIL} sobre la factura.`;

const python = presidioPython();
const redis = testRedis();
const closedPrefix = uniquePrefix('dlp-analyzer-closed');
const openPrefix = uniquePrefix('dlp-analyzer-open');
const spanishPrefix = uniquePrefix('dlp-analyzer-es');
let analyzer: PresidioAnalyzer;
let upstream: FakeUpstream;
let closedGw: Gateway;
let openGw: Gateway;
let spanishGw: Gateway;
let closedClient: OpenAI;
let openClient: OpenAI;

const env = (prefix: string, policy: string) => ({
  REDIS_KEY_PREFIX: prefix,
  API_KEYS: KEY,
  PROVIDER_A_API_KEY: UPSTREAM_KEY,
  DLP_ANALYZER_URL: analyzer.url,
  // Generous: two cores are shared by the test files running beside this one.
  DLP_ANALYZER_TIMEOUT_MS: '3000',
  DLP_ANALYZER_FAILURE: policy,
  DLP_SCAN_REPLIES: 'true',
  SEMANTIC_CACHE_ENABLED: 'false',
  CACHE_ENABLED: 'false',
  RATE_LIMIT_REQUESTS: '100000',
  // Verbose logs make the "nothing the analyzer saw is logged" check meaningful.
  LOG_LEVEL: 'debug',
});
const config = () => ({
  providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] }],
});
const sentBodies = () => upstream.requests.map((r) => JSON.stringify(r.body));
const leaks = (text: string) => NEEDLES.filter((n) => text.includes(n));

if (!python) reportAnalyzerMissing('test/dlp/dlp-analyzer.e2e.test.ts (DLP_ANALYZER_URL end to end)');

describe.runIf(python)('DLP_ANALYZER_URL with the real Presidio analyzer', () => {
  beforeAll(async () => {
    analyzer = await startPresidioAnalyzer(python!);
    upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
    [closedGw, openGw, spanishGw] = await Promise.all([
      startGateway({ env: env(closedPrefix, 'closed'), config: config(), providers: ['provider_a'] }),
      startGateway({ env: env(openPrefix, 'open'), config: config(), providers: ['provider_a'] }),
      startGateway({
        env: { ...env(spanishPrefix, 'closed'), DLP_ANALYZER_LANGUAGE: 'es' },
        config: config(),
        providers: ['provider_a'],
      }),
    ]);
    closedClient = new OpenAI({ baseURL: `${closedGw.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
    openClient = new OpenAI({ baseURL: `${openGw.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
  }, 180_000);

  afterAll(async () => {
    await Promise.all([closedGw?.stop(), openGw?.stop(), spanishGw?.stop()]);
    await analyzer?.stop();
    await upstream?.close();
    await deletePrefix(redis, closedPrefix);
    await deletePrefix(redis, openPrefix);
    await deletePrefix(redis, spanishPrefix);
    redis.disconnect();
  });

  it('redacts a name and a city the analyzer finds, with the e-mail the engine finds, in one pass', async () => {
    const completion = await closedClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: PROMPT }],
    });
    const sent = (upstream.requests.at(-1)?.body as { messages: { content: string }[] }).messages[0]!.content;
    expect(sent).toBe('Please email <PERSON_1> in <LOCATION_1> at <EMAIL_ADDRESS_1> about the invoice.');
    expect(completion.choices[0]!.message.content).toBe(`Echo: ${sent}`);
  });

  it('screens Spanish with the Spanish pipeline where DLP_ANALYZER_LANGUAGE is es', async () => {
    const client = new OpenAI({ baseURL: `${spanishGw.baseUrl}/v1`, apiKey: KEY, maxRetries: 0, timeout: 20_000 });
    await client.chat.completions.create({ model: 'a-4o', messages: [{ role: 'user', content: ES_PROMPT }] });
    const sent = (upstream.requests.at(-1)?.body as { messages: { content: string }[] }).messages[0]!.content;
    expect(sent).toBe(
      'Por favor, escriba a <PERSON_1> en <LOCATION_1> a la dirección <EMAIL_ADDRESS_1> sobre la factura.',
    );
  });

  it('redacts streamed requests and the arguments of earlier tool calls', async () => {
    const stream = await closedClient.chat.completions.create({
      model: 'a-4o',
      stream: true,
      messages: [
        { role: 'user', content: 'Send the welcome pack.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'send_pack', arguments: `{"recipient": "${PERSON}", "city": "${CITY}"}` },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sent' },
        { role: 'user', content: `Now tell ${PERSON} it is done.` },
      ],
    });
    for await (const _chunk of stream) {
      // drained
    }
    const body = upstream.requests.at(-1)?.body as {
      messages: { content: string | null; tool_calls?: { function: { arguments: string } }[] }[];
    };
    expect(body.messages[1]!.tool_calls![0]!.function.arguments).toBe(
      '{"recipient": "<PERSON_1>", "city": "<LOCATION_1>"}',
    );
    expect(body.messages[3]!.content).toBe('Now tell <PERSON_1> it is done.');
  });

  it('scans replies with the analyzer too, JSON and streamed', async () => {
    upstream.setBehavior({ replyText: `Sure, I will write to ${REPLY_PERSON} in ${REPLY_CITY} today.` });
    try {
      const completion = await closedClient.chat.completions.create({
        model: 'a-4o',
        messages: [{ role: 'user', content: 'Who should I write to?' }],
      });
      expect(completion.choices[0]!.message.content).toMatch(
        /^Sure, I will write to <PERSON_1> in <LOCATION_1> <DATE_TIME_1>\.$|^Sure, I will write to <PERSON_1> in <LOCATION_1> today\.$/,
      );
      const stream = await closedClient.chat.completions.create({
        model: 'a-4o',
        stream: true,
        messages: [{ role: 'user', content: 'Again, streamed.' }],
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toContain('Sure, I will write to <PERSON_1> in <LOCATION_1>');
      expect(leaks(text)).toEqual([]);
    } finally {
      upstream.setBehavior({ replyText: undefined });
    }
  });

  it('keeps every value it screened out of Redis', async () => {
    for (const prefix of [closedPrefix, openPrefix, spanishPrefix]) {
      for (const key of await keysUnder(redis, prefix)) {
        const type = await redis.type(key);
        const value =
          type === 'string'
            ? await redis.get(key)
            : type === 'hash'
              ? JSON.stringify(await redis.hgetall(key))
              : type === 'stream'
                ? JSON.stringify(await redis.xrange(key, '-', '+'))
                : '';
        expect(leaks(value ?? '')).toEqual([]);
      }
    }
  });

  it('applies each failure policy when the analyzer is killed in the middle of traffic, and recovers when it is back', async () => {
    const outcomes = { closed: [] as string[], open: [] as string[] };
    let stopped = false;
    const traffic = async (client: OpenAI, into: string[]) => {
      // Bounded in count and time: at most 40 requests or 90 s per gateway.
      const deadline = Date.now() + 90_000;
      for (let i = 0; i < 40 && Date.now() < deadline; i++) {
        const started = Date.now();
        const outcome = await client.chat.completions
          .create({ model: 'a-4o', messages: [{ role: 'user', content: `${PROMPT} (#${i})` }] })
          .then(
            (c) => (leaks(c.choices[0]!.message.content ?? '').length > 0 ? 'leaked' : 'redacted'),
            (err: unknown) =>
              err instanceof OpenAI.APIError
                ? `${err.status} ${(err as { code?: string }).code}`
                : `error ${String(err)}`,
          );
        // No request hangs: the analyzer's budget plus the upstream round trip.
        expect(Date.now() - started).toBeLessThan(10_000);
        into.push(`${stopped ? 'after' : 'before'}:${outcome}`);
        if (stopped && into.filter((o) => o.startsWith('after')).length >= 8) return;
      }
    };
    const running = [traffic(closedClient, outcomes.closed), traffic(openClient, outcomes.open)];
    const { waitFor } = await import('../support/processes.ts');
    await waitFor(() => outcomes.closed.length >= 4 && outcomes.open.length >= 4, 60_000, 'traffic before the stop');
    await analyzer.stop();
    stopped = true;
    await Promise.all(running);

    const before = (list: string[]) => list.filter((o) => o.startsWith('before'));
    const after = (list: string[]) => list.filter((o) => o.startsWith('after')).slice(1); // one may have been in flight at the stop
    expect(
      before(outcomes.closed).every((o) => o === 'before:redacted' || o === 'before:503 service_unavailable'),
    ).toBe(true);
    expect(before(outcomes.open).every((o) => o === 'before:redacted' || o === 'before:leaked')).toBe(true);
    // Closed: refused with 503 service_unavailable; the upstream never saw the name.
    expect(after(outcomes.closed).length).toBeGreaterThanOrEqual(5);
    expect(new Set(after(outcomes.closed))).toEqual(new Set(['after:503 service_unavailable']));
    // Open: answered, with the pattern types (the e-mail) still redacted and the names through.
    expect(new Set(after(outcomes.open))).toEqual(new Set(['after:leaked']));
    const openSent = sentBodies().filter((b) => b.includes(PERSON));
    expect(openSent.length).toBeGreaterThanOrEqual(5);
    for (const body of openSent) expect(body).toContain('<EMAIL_ADDRESS_1>');
    for (const body of openSent) expect(body).not.toContain(EMAIL);

    // Open failures are counted and logged (reason and policy, never the text); closed ones too.
    const metrics = await (await fetch(`${openGw.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } })).text();
    expect(metrics).toMatch(
      /gateway_dlp_analyzer_failures_total\{reason="(unreachable|timeout)",policy="open"\} ([5-9]|\d\d)/,
    );
    expect(openGw.api.output()).toContain('DLP analyzer failed: request screened by the in-process recognizers only');
    const closedMetrics = await (await fetch(`${closedGw.baseUrl}/metrics`, { headers: { 'x-api-key': KEY } })).text();
    expect(closedMetrics).toMatch(
      /gateway_dlp_analyzer_failures_total\{reason="(unreachable|timeout)",policy="closed"\}/,
    );

    // Back: the closed gateway screens again without a restart.
    await analyzer.restart();
    const again = await closedClient.chat.completions.create({
      model: 'a-4o',
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(again.choices[0]!.message.content).toBe(
      'Echo: Please email <PERSON_1> in <LOCATION_1> at <EMAIL_ADDRESS_1> about the invoice.',
    );
  }, 240_000);

  it('logs nothing the analyzer saw, in the analyzer or the gateway (except what the open policy let through to the upstream)', () => {
    expect(leaks(analyzer.output())).toEqual([]);
    expect(analyzer.output()).toContain('POST /analyze');
    expect(leaks(closedGw.api.output())).toEqual([]);
    expect(leaks(openGw.api.output())).toEqual([]);
    expect(leaks(spanishGw.api.output())).toEqual([]);
    for (const gateway of [closedGw, spanishGw])
      for (const worker of [...gateway.workers.values()].flat()) expect(leaks(worker.output())).toEqual([]);
  });
});
