import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/chat/types.ts';
import { AnalyzerClient, AnalyzerFailure } from '../../src/dlp/analyzer-client.ts';
import { DlpGuard } from '../../src/dlp/dlp-guard.ts';
import { DlpEngine } from '../../src/dlp/engine.ts';
import { ServiceUnavailableError } from '../../src/errors/catalog.ts';

/**
 * The analyzer client and the guard's merge against a loopback server playing Presidio's REST
 * shape (`POST /analyze`, a list of `{entity_type, start, end, score}` with offsets in code
 * points). The server finds the names of NAMES by searching the text, as a model would, so
 * offsets are computed the way Python counts them. The real analyzer runs in
 * dlp-analyzer.e2e.test.ts.
 */

type Mode = 'ok' | 'hang' | 'status500' | 'garbage' | 'not-a-list';
const NAMES: Record<string, string> = {
  'Ada Lovelace': 'PERSON',
  'Jürgen Weber': 'PERSON',
  Lagos: 'LOCATION',
  'March 3': 'DATE_TIME',
  '4155552671': 'DATE_TIME',
  '05/21/1958': 'DATE_TIME',
};
/** Scores other than 0.85: Presidio lifts a date beside its context words (`Date of Birth`) to 0.95. */
const SCORES: Record<string, number> = { '05/21/1958': 0.95 };

let server: Server;
let url: string;
let mode: Mode = 'ok';
const bodies: { text: string; language: string; entities?: string[]; score_threshold?: number }[] = [];

function codePointIndex(text: string, utf16: number): number {
  return [...text.slice(0, utf16)].length;
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  let raw = '';
  req.on('data', (d: Buffer) => (raw += d.toString()));
  req.on('end', () => {
    if (mode === 'hang') return;
    if (mode === 'status500')
      return void res.writeHead(500, { 'content-type': 'text/plain' }).end('Internal server error');
    if (mode === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
    if (mode === 'not-a-list')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"entities": []}');
    const body = JSON.parse(raw) as (typeof bodies)[number];
    bodies.push(body);
    const results = [];
    for (const [name, entity] of Object.entries(NAMES)) {
      for (let at = body.text.indexOf(name); at >= 0; at = body.text.indexOf(name, at + 1)) {
        results.push({
          entity_type: entity,
          start: codePointIndex(body.text, at),
          end: codePointIndex(body.text, at + name.length),
          score: SCORES[name] ?? 0.85,
        });
      }
    }
    // Below the threshold, and a type nobody asked for: both must be ignored.
    results.push(
      { entity_type: 'PERSON', start: 0, end: 1, score: 0.3 },
      { entity_type: 'US_DRIVER_LICENSE', start: 0, end: 2, score: 0.9 },
    );
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(results));
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((done) => server.close(done));
});

const client = (timeoutMs = 300) => new AnalyzerClient({ url, timeoutMs });
const values = (texts: string[], found: { start: number; end: number; entity: string }[][]) =>
  found.map((list, i) => list.map((f) => `${f.entity}:${texts[i]!.slice(f.start, f.end)}`));

describe('AnalyzerClient', () => {
  it("sends Presidio's request shape once for all texts and maps the findings back to each text", async () => {
    mode = 'ok';
    const texts = ['Write to Ada Lovelace.', '', '12 + 30', 'She lives in Lagos since March 3.'];
    const found = await client().analyze(texts, 0.8);
    expect(values(texts, found)).toEqual([['PERSON:Ada Lovelace'], [], [], ['LOCATION:Lagos', 'DATE_TIME:March 3']]);
    const body = bodies.at(-1)!;
    // Texts without letters are not sent; the others go as one document.
    expect(body.text).toBe('Write to Ada Lovelace.\n\n\nShe lives in Lagos since March 3.');
    expect(body).toMatchObject({
      language: 'en',
      entities: ['PERSON', 'LOCATION', 'ORGANIZATION', 'NRP', 'DATE_TIME'],
      score_threshold: 0.8,
    });
  });

  it('turns code-point offsets into UTF-16 ones after characters outside the BMP', async () => {
    mode = 'ok';
    const texts = ['🎉🎉 party for Jürgen Weber 🎂 in Lagos'];
    expect(values(texts, await client().analyze(texts, 0.8))).toEqual([['PERSON:Jürgen Weber', 'LOCATION:Lagos']]);
  });

  it('reads JSON text member by member, with the key as context, and maps values back into the JSON', async () => {
    mode = 'ok';
    const texts = ['{"recipient": "Jürgen Weber", "city":"Lagos", "n": 3}'];
    const found = await client().analyze(texts, 0.8);
    expect(values(texts, found)).toEqual([['PERSON:Jürgen Weber', 'LOCATION:Lagos']]);
    expect(bodies.at(-1)!.text).toBe('recipient: Jürgen Weber\n\n\ncity: Lagos');
  });

  it('drops a bare number read as a date', async () => {
    mode = 'ok';
    const texts = ['Your order number is 4155552671, see you March 3'];
    expect(values(texts, await client().analyze(texts, 0.8))).toEqual([['DATE_TIME:March 3']]);
  });

  it('sends nothing when no text has a letter', async () => {
    const before = bodies.length;
    expect(await client().analyze(['123', '4 5 6'], 0.8)).toEqual([[], []]);
    expect(bodies.length).toBe(before);
  });

  it.each([
    ['hang', 'timeout'],
    ['status500', 'http_status'],
    ['garbage', 'bad_reply'],
    ['not-a-list', 'bad_reply'],
  ] as const)('fails with a reason, never the text, when the analyzer answers %s', async (m, reason) => {
    mode = m;
    const started = Date.now();
    const err = await client(200)
      .analyze(['secret name Ada Lovelace'], 0.8)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnalyzerFailure);
    expect((err as AnalyzerFailure).reason).toBe(reason);
    expect((err as Error).message).not.toContain('Ada');
    if (m === 'hang') expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('fails as unreachable when nothing listens', async () => {
    const err = await new AnalyzerClient({ url: 'http://127.0.0.1:9', timeoutMs: 300 })
      .analyze(['Ada Lovelace'], 0.8)
      .catch((e: unknown) => e);
    expect((err as AnalyzerFailure).reason).toBe('unreachable');
  });
});

const chat = (...contents: string[]): ChatRequest =>
  ({ model: 'm', messages: contents.map((content) => ({ role: 'user' as const, content })) }) as ChatRequest;

describe('DlpGuard with an analyzer', () => {
  it('merges the analyzer findings with the engine and redacts once, numbering across messages', async () => {
    mode = 'ok';
    const guard = new DlpGuard({ analyzer: client() });
    const context: { dlpFindings?: Record<string, number> } = {};
    const screened = await guard.screenAsync(
      chat('Ada Lovelace (ada@example.com) lives in Lagos.', 'Call Ada Lovelace at +1 415 555 2671.'),
      context,
    );
    expect(screened.messages.map((m) => m.content)).toEqual([
      '<PERSON_1> (<EMAIL_ADDRESS_1>) lives in <LOCATION_1>.',
      'Call <PERSON_1> at <PHONE_NUMBER_1>.',
    ]);
    expect(context.dlpFindings).toEqual({ PERSON: 2, EMAIL_ADDRESS: 1, LOCATION: 1, PHONE_NUMBER: 1 });
    // The synchronous path is the engine alone.
    expect(guard.screen(chat('Ada Lovelace, ada@example.com'), {}).messages[0]!.content).toBe(
      'Ada Lovelace, <EMAIL_ADDRESS_1>',
    );
  });

  it("lets an engine finding win over the analyzer's DATE_TIME on the same text, whatever the scores", async () => {
    mode = 'ok';
    const engine = new DlpEngine({ entities: [...new DlpEngine().entities, 'DATE_OF_BIRTH'] });
    const guard = new DlpGuard({ engine, analyzer: client() });
    const context: { dlpFindings?: Record<string, number> } = {};
    const screened = await guard.screenAsync(chat('Date of Birth: 05/21/1958, seen on March 3.'), context);
    expect(screened.messages[0]!.content).toBe('Date of Birth: <DATE_OF_BIRTH_1>, seen on <DATE_TIME_1>.');
    expect(context.dlpFindings).toEqual({ DATE_OF_BIRTH: 1, DATE_TIME: 1 });
  });

  it('blocks on an analyzer finding in block mode, naming the type only', async () => {
    mode = 'ok';
    const err = await new DlpGuard({ analyzer: client(), action: 'block' })
      .screenAsync(chat('Tell Ada Lovelace'), {})
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('The request contains personal data and was blocked: PERSON.');
  });

  it('fail closed (the default): 503 service_unavailable, and the failure is reported', async () => {
    mode = 'hang';
    const failures: string[] = [];
    const guard = new DlpGuard({
      analyzer: client(150),
      onAnalyzerFailure: (reason, policy) => failures.push(`${reason}/${policy}`),
    });
    const err = await guard.screenAsync(chat('Ada Lovelace, ada@example.com'), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect((err as ServiceUnavailableError).status).toBe(503);
    expect((err as Error).message).toContain('could not be screened for personal data');
    expect((err as Error).message).not.toContain('Ada');
    expect(failures).toEqual(['timeout/closed']);
  });

  it('fail open: the engine findings alone, and the failure is reported', async () => {
    mode = 'status500';
    const failures: string[] = [];
    const guard = new DlpGuard({
      analyzer: client(),
      analyzerFailure: 'open',
      onAnalyzerFailure: (reason, policy) => failures.push(`${reason}/${policy}`),
    });
    const screened = await guard.screenAsync(chat('Ada Lovelace, ada@example.com'), {});
    expect(screened.messages[0]!.content).toBe('Ada Lovelace, <EMAIL_ADDRESS_1>');
    expect(failures).toEqual(['http_status/open']);
  });

  it('scans replies and tool-call arguments with the analyzer too, numbering after the request', async () => {
    mode = 'ok';
    const guard = new DlpGuard({ analyzer: client(), scanReplies: true });
    const { request, reply } = await guard.screenExchangeAsync(chat('Ada Lovelace asks.'), {});
    expect(request.messages[0]!.content).toBe('<PERSON_1> asks.');
    const completion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: 'Jürgen Weber from Lagos.',
            refusal: null,
            tool_calls: [{ id: 't', type: 'function', function: { name: 'send', arguments: '{"to":"Jürgen Weber"}' } }],
          },
        },
      ],
    };
    const filtered = JSON.parse(await reply!.completionAsync(JSON.stringify(completion))) as typeof completion;
    expect(filtered.choices[0]!.message.content).toBe('<PERSON_2> from <LOCATION_1>.');
    expect(filtered.choices[0]!.message.tool_calls[0]!.function.arguments).toBe('{"to":"<PERSON_2>"}');
  });

  it('holds a streamed name until it is whole and redacts it', async () => {
    mode = 'ok';
    const guard = new DlpGuard({ analyzer: client(), scanReplies: true });
    const { reply } = await guard.screenExchangeAsync(chat('hello'), {});
    const chunk = (content: string, finish: string | null = null) =>
      JSON.stringify({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { content }, finish_reason: finish, logprobs: null }],
      });
    let text = '';
    for (const piece of [
      'Please greet Ada Lov',
      'elace',
      ' and the team in La',
      'gos. ',
      ...Array(120).fill('More text. '),
    ]) {
      text +=
        (JSON.parse(await reply!.chunkAsync(chunk(piece))) as { choices: { delta: { content?: string } }[] })
          .choices[0]!.delta.content ?? '';
    }
    text +=
      (JSON.parse(await reply!.chunkAsync(chunk('', 'stop'))) as { choices: { delta: { content?: string } }[] })
        .choices[0]!.delta.content ?? '';
    expect(text.startsWith('Please greet <PERSON_1> and the team in <LOCATION_1>. More text.')).toBe(true);
    expect(text).not.toMatch(/Ada|Lagos|Lov/);
  });
});
