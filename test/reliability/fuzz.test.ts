import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * At least 10,000 malformed or hostile requests (bad JSON, wrong types, huge
 * values, unicode, header abuse, wrong methods, raw protocol garbage) against a
 * running gateway: zero 5xx, zero hangs, and every JSON error in the envelope.
 * FUZZ_SEED reproduces a run; FUZZ_COUNT changes its size.
 */

const COUNT = Number(process.env.FUZZ_COUNT ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const KEY = 'gw_fuzz_key_0123456789abcdef';
const prefix = uniquePrefix('fuzz');
const redis = testRedis();
let gateway: Gateway;
let upstream: FakeUpstream;

/** mulberry32: small, seedable. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
const int = (max: number) => Math.floor(rand() * max);

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\udfff\ud800',
  '\u202e\u202dreversed',
  '😀'.repeat(500),
  'x'.repeat(200_000),
  '<script>alert(1)</script>',
  "'; DROP TABLE keys; --",
  '${jndi:ldap://127.0.0.1/a}',
  '../../../../etc/passwd',
  '%00%ff',
  'a-4o',
  'a-4o\n',
  'A-4O',
  '__proto__',
  'constructor',
  '\r\nX-Injected: 1',
  'ｆｕｌｌｗｉｄｔｈ',
  'Z̷̢̛a̶̡l̴g̸o̵',
];
const NASTY_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 64,
  [],
  {},
  [null],
  { role: 'user' },
  ...NASTY_STRINGS,
];

function nasty(): unknown {
  const r = rand();
  if (r < 0.4) return pick(NASTY_VALUES);
  if (r < 0.6) return pick(NASTY_STRINGS);
  if (r < 0.75) return Array.from({ length: int(5) }, () => pick(NASTY_VALUES));
  if (r < 0.85) return { [pick(NASTY_STRINGS)]: pick(NASTY_VALUES) };
  return int(10) - 5;
}

function validBody(): Record<string, unknown> {
  return { model: 'a-4o', messages: [{ role: 'user', content: `fuzz ${rand()}` }] };
}

/** Percent-encodes the UTF-8 bytes (lone surrogates become U+FFFD, as on the wire). */
function percentEncode(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}

function deepNesting(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

interface FuzzCase {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Sent over a raw socket, bypassing Node's client-side header checks. */
  raw?: string;
}

function makeCase(): FuzzCase {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': KEY };
  const path = '/v1/chat/completions';
  const r = int(19);
  switch (r) {
    case 0: {
      const bytes = Buffer.from(Array.from({ length: int(300) }, () => int(256)));
      return { kind: 'random bytes', method: 'POST', path, headers, body: bytes };
    }
    case 1:
      return {
        kind: 'truncated json',
        method: 'POST',
        path,
        headers,
        body: JSON.stringify(validBody()).slice(0, int(40)),
      };
    case 2:
      return { kind: 'wrong top-level type', method: 'POST', path, headers, body: JSON.stringify(nasty()) };
    case 3: {
      const body = validBody();
      body[
        pick([
          'model',
          'messages',
          'max_tokens',
          'temperature',
          'top_p',
          'n',
          'stream',
          'stop',
          'stream_options',
          'seed',
          'user',
          'service_tier',
        ])
      ] = nasty();
      return { kind: 'field mutation', method: 'POST', path, headers, body: JSON.stringify(body) };
    }
    case 4: {
      const body = validBody();
      (body.messages as unknown[])[0] = { role: nasty(), content: nasty(), [pick(NASTY_STRINGS)]: nasty() };
      return { kind: 'message mutation', method: 'POST', path, headers, body: JSON.stringify(body) };
    }
    case 5: {
      const body = validBody();
      body.messages = Array.from({ length: pick([0, 1001, 5000]) }, () => ({ role: 'user', content: 'x' }));
      return { kind: 'message count', method: 'POST', path, headers, body: JSON.stringify(body) };
    }
    case 6:
      return {
        kind: 'proto pollution',
        method: 'POST',
        path,
        headers,
        body: `{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"model":"a-4o","messages":[{"role":"user","content":"p"}]}`,
      };
    case 7:
      return {
        kind: 'deep nesting',
        method: 'POST',
        path,
        headers,
        body: `{"model":"a-4o","messages":${deepNesting(pick([100, 5000, 100_000]))}}`,
      };
    case 8: {
      const ct = pick([
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        '',
        'application/json, text/html',
      ]);
      const h = { ...headers, 'content-type': ct };
      if (ct === '') delete (h as Record<string, string>)['content-type'];
      return { kind: 'content-type abuse', method: 'POST', path, headers: h, body: JSON.stringify(validBody()) };
    }
    case 9: {
      const h: Record<string, string> = { 'content-type': 'application/json' };
      const variant = int(6);
      if (variant === 0) h['x-api-key'] = 'x'.repeat(int(10_000));
      if (variant === 1) h.authorization = `Bearer  ${KEY}  extra`;
      if (variant === 2) h.authorization = `Basic ${Buffer.from('a:b').toString('base64')}`;
      if (variant === 3) h['x-api-key'] = `${KEY}, ${KEY}`;
      if (variant === 4) h['x-request-id'] = '../../' + 'r'.repeat(int(2000));
      if (variant === 5) h['content-encoding'] = pick(['gzip', 'br', 'deflate', 'identity, gzip']);
      return {
        kind: 'header abuse',
        method: 'POST',
        path,
        headers: { ...headers, ...h },
        body: JSON.stringify(validBody()),
      };
    }
    case 10:
      return {
        kind: 'wrong method or path',
        method: pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']),
        path: pick([
          path,
          '/v1/chat',
          '/v1/chat/completions/jobs/%00',
          '/%2e%2e/%2e%2e/etc',
          '/v1/models/' + percentEncode(pick(NASTY_STRINGS).slice(0, 100)),
        ]),
        headers,
      };
    case 11:
      return {
        kind: 'oversized',
        method: 'POST',
        path,
        headers,
        body: JSON.stringify({ ...validBody(), user: 'u'.repeat(1_100_000) }),
      };
    case 12: {
      const garbage = pick([
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{"a":',
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nX-API-Key: ' +
          KEY +
          '\r\n\r\nzz\r\n',
        'GET / HTTP/1.1\r\nHost: x\r\nX-API-Key: \u00ff\u00fe\r\n\r\n',
        'BREW /coffee HTCPCP/1.0\r\n\r\n',
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: ' + 'h'.repeat(20_000) + '\r\n\r\n',
      ]);
      return { kind: 'raw protocol', method: 'RAW', path, headers, raw: garbage };
    }
    case 13: {
      const body: Record<string, unknown> = { model: 'a-4o', input: `fuzz ${rand()}` };
      body[
        pick([
          'model',
          'input',
          'instructions',
          'tools',
          'tool_choice',
          'text',
          'max_output_tokens',
          'previous_response_id',
          'reasoning',
          'metadata',
          'store',
          'include',
          'stream',
        ])
      ] = nasty();
      return {
        kind: 'responses field mutation',
        method: 'POST',
        path: '/v1/responses',
        headers,
        body: JSON.stringify(body),
      };
    }
    case 14: {
      const item = {
        type: pick(['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference', nasty()]),
        role: nasty(),
        content: nasty(),
        call_id: nasty(),
        output: nasty(),
        [pick(NASTY_STRINGS)]: nasty(),
      };
      return {
        kind: 'responses item mutation',
        method: 'POST',
        path: '/v1/responses',
        headers,
        body: JSON.stringify({ model: 'a-4o', input: [item] }),
      };
    }
    case 15: {
      const body: Record<string, unknown> = { model: 'a-embed', input: ['fuzz'] };
      body[pick(['model', 'input', 'dimensions', 'encoding_format', 'user'])] = nasty();
      return {
        kind: 'embeddings mutation',
        method: 'POST',
        path: '/v1/embeddings',
        headers,
        body: JSON.stringify(body),
      };
    }
    case 16:
      return {
        kind: 'stored response lookup',
        method: pick(['GET', 'DELETE']),
        path: `/v1/responses/${percentEncode(String(pick(NASTY_STRINGS)).slice(0, 100))}${pick(['', '/input_items', '/input_items?limit=0', '/input_items?order=sideways&after=%00'])}`,
        headers,
      };
    case 17:
      // A well-formed Responses request now and then: answered normally.
      return {
        kind: 'valid',
        method: 'POST',
        path: '/v1/responses',
        headers,
        body: JSON.stringify({ model: 'a-4o', input: `fuzz ${rand()}`, stream: rand() < 0.5 }),
      };
    default: {
      // A well-formed request now and then: must be answered normally.
      const body = validBody();
      if (rand() < 0.5) body.stream = true;
      return { kind: 'valid', method: 'POST', path, headers, body: JSON.stringify(body) };
    }
  }
}

interface Result {
  kind: string;
  status: number;
  body: string;
  contentType: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 32 });

function send(c: FuzzCase, baseUrl: URL): Promise<Result> {
  return new Promise((resolve) => {
    const done = (status: number, body = '', contentType = '') => {
      clearTimeout(timer);
      resolve({ kind: c.kind, status, body, contentType });
    };
    const timer = setTimeout(() => done(-1), 10_000);
    if (c.raw !== undefined) {
      const socket = connect(Number(baseUrl.port), baseUrl.hostname);
      let data = '';
      socket.on('data', (d) => (data += d.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), data));
      socket.end(c.raw);
      socket.setTimeout(3000, () => socket.destroy());
      return;
    }
    try {
      const req = request(
        { agent, host: baseUrl.hostname, port: baseUrl.port, path: c.path, method: c.method, headers: c.headers },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            if (body.length < 20_000) body += d;
          });
          res.on('end', () => done(res.statusCode ?? 0, body, String(res.headers['content-type'] ?? '')));
          res.on('error', () => done(0));
        },
      );
      req.on('error', () => done(0));
      req.end(c.body);
    } catch {
      // Node refused to send it (invalid header characters): nothing reached the server.
      done(0);
    }
  });
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: 'up', record: false });
  gateway = await startGateway({
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: 'up',
      RATE_LIMIT_REQUESTS: '100000000',
      // Hundreds of wrong keys from one address would get it throttled, valid requests included (test/security/key-guessing.e2e.test.ts).
      AUTH_FAILURE_LIMIT: '0',
      SEMANTIC_CACHE_ENABLED: 'false',
    },
    config: {
      providers: [
        {
          name: 'provider_a',
          api_key_env: 'PROVIDER_A_API_KEY',
          base_url: upstream.url,
          models: ['a-4o'],
          embedding_models: ['a-embed'],
        },
      ],
    },
    providers: ['provider_a'],
  });
}, 60_000);

afterAll(async () => {
  agent.destroy();
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

describe(`fuzz: ${COUNT} hostile requests (FUZZ_SEED=${SEED})`, () => {
  it('never answers 5xx, never hangs, always uses the envelope for JSON errors', async () => {
    const base = new URL(gateway.baseUrl);
    const cases = Array.from({ length: COUNT }, makeCase);
    const results: Result[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < cases.length) results.push(await send(cases[next++] as FuzzCase, base));
      }),
    );
    const byKind: Record<string, Record<number, number>> = {};
    for (const r of results) {
      byKind[r.kind] ??= {};
      (byKind[r.kind] as Record<number, number>)[r.status] =
        ((byKind[r.kind] as Record<number, number>)[r.status] ?? 0) + 1;
    }
    console.log(`fuzz seed ${SEED}:`, JSON.stringify(byKind));

    expect(results).toHaveLength(COUNT);
    const hangs = results.filter((r) => r.status === -1);
    expect(hangs, `hung: ${hangs.map((h) => h.kind).join(', ')}`).toHaveLength(0);
    const serverErrors = results.filter((r) => r.status >= 500);
    expect(serverErrors.map((r) => `${r.kind} ${r.status} ${r.body.slice(0, 200)}`)).toEqual([]);
    for (const r of results) {
      if (r.status >= 400 && r.contentType.startsWith('application/json')) {
        const body = JSON.parse(r.body) as {
          error?: { code?: string; type?: string; message?: string };
          request_id?: string;
          timestamp?: string;
        };
        expect(typeof body.error?.code, r.body.slice(0, 200)).toBe('string');
        expect(typeof body.error?.type).toBe('string');
        expect(typeof body.error?.message).toBe('string');
        expect(typeof body.request_id).toBe('string');
        expect(typeof body.timestamp).toBe('string');
      }
    }
    // Well-formed requests among the noise were served normally.
    const valid = results.filter((r) => r.kind === 'valid');
    expect(valid.length).toBeGreaterThan(COUNT / 20);
    expect(valid.every((r) => r.status === 200)).toBe(true);
    // The gateway is still healthy afterwards.
    const after = await send(
      {
        kind: 'valid',
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', 'x-api-key': KEY },
        body: JSON.stringify(validBody()),
      },
      base,
    );
    expect(after.status).toBe(200);
  });
});
