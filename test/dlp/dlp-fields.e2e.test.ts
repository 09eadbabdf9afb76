import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITY_TYPES } from '../../src/dlp/entities.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { startGateway, type Gateway } from '../support/processes.ts';
import { deletePrefix, testRedis, uniquePrefix } from '../support/redis.ts';

/**
 * DLP through running processes, the upstream a loopback server that
 * records what it received: values in every field a client can fill (stop,
 * names, user, metadata, tool descriptions, tool-call arguments, tool
 * results) are redacted, and no three characters of a detected value's
 * local part reach the upstream, whatever spelling the value had.
 */
const KEY = 'gw_dlp_fields_key_0123456789abcdef';
const UPSTREAM_KEY = 'up-dlp-fields';

/** Values with the part that must not leak even in part (an e-mail's local part, else the value). */
const VALUES = [
  { value: 'jörg.müller@beispiel-firma.de', local: 'jörg.müller' },
  { value: '用户名@例子.广告', local: '用户名' },
  { value: 'zacharias dot quimby at mailbox dot org', local: 'zacharias dot quimby' },
  { value: 'xavierquill [at] example [dot] com', local: 'xavierquill' },
  { value: '+49 1512 3456789 ext. 42', local: '1512 3456789 ext. 42' },
  { value: '8 (912) 345-67-89', local: '912) 345-67-89' },
  { value: '4111.1111.1111.1111', local: '4111.1111.1111.1111' },
  { value: 'de89-3704-0044-0532-0130-00', local: 'de89-3704-0044-0532-0130-00' },
  { value: 'glpat-x8Zk2Lm9Qw3Er5Ty7Ui1', local: 'glpat-x8Zk2Lm9Qw3Er5Ty7Ui1' },
  { value: 'Margarethe Kowalczyk', local: 'Margarethe Kowalczyk', lead: 'Dear' },
];

const redis = testRedis();
const prefix = uniquePrefix('dlp-fields-e2e');
let upstream: FakeUpstream;
let gateway: Gateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream({ format: 'openai', apiKey: UPSTREAM_KEY });
  gateway = await startGateway({
    // Every entity type, the opt-in ones (people, places, organisations, addresses, birth dates) included.
    env: {
      REDIS_KEY_PREFIX: prefix,
      API_KEYS: KEY,
      PROVIDER_A_API_KEY: UPSTREAM_KEY,
      SEMANTIC_CACHE_ENABLED: 'false',
      RATE_LIMIT_REQUESTS: '100000',
      DLP_ENTITIES: ENTITY_TYPES.join(','),
    },
    config: {
      providers: [{ name: 'provider_a', api_key_env: 'PROVIDER_A_API_KEY', base_url: upstream.url, models: ['a-4o'] }],
    },
    providers: ['provider_a'],
  });
  client = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: KEY, maxRetries: 0 });
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await deletePrefix(redis, prefix);
  redis.disconnect();
});

/** Every string the upstream received except roles and ids, joined. */
function receivedText(): string {
  const strings: string[] = [];
  const walk = (node: unknown, key: string): void => {
    if (typeof node === 'string') {
      if (!['role', 'model', 'id', 'tool_call_id', 'type'].includes(key)) strings.push(node);
    } else if (Array.isArray(node)) node.forEach((item) => walk(item, key));
    else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, k);
  };
  walk(upstream.requests.at(-1)?.body, '');
  return strings.join('\n');
}

function fragmentsOf(local: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 3 <= local.length; i++) if (!/\s/.test(local.slice(i, i + 3))) out.push(local.slice(i, i + 3));
  return out;
}

describe('DLP on every field, through the gateway', () => {
  it('redacts stop sequences, names, user, metadata, tool descriptions, tool-call arguments and tool results', async () => {
    const mail = VALUES[0]!.value;
    await client.chat.completions.create({
      model: 'a-4o',
      messages: [
        { role: 'system', content: 'Be brief.', name: 'ops-jorg.muller@example.com' },
        { role: 'user', content: 'Who wrote?', name: 'jane.doe@example.com' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ email: mail }) } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: `found ${mail}, phone +49 1512 3456789` },
        { role: 'user', content: 'Summarise.' },
      ],
      stop: [`Regards, ${mail}`],
      user: 'jane.doe@example.com',
      metadata: { customer: mail },
      tools: [
        {
          type: 'function',
          function: {
            name: 'lookup',
            description: `Look up people such as ${mail}`,
            parameters: { type: 'object', properties: {} },
          },
        },
      ],
    });
    const body = upstream.requests.at(-1)!.body as Record<string, unknown> & { messages: Record<string, unknown>[] };
    expect(body.stop).toEqual(['Regards, <EMAIL_ADDRESS_3>']);
    expect(body.user).toBe('<EMAIL_ADDRESS_2>');
    expect(body.messages.map((m) => m.name)).toEqual([
      'EMAIL_ADDRESS_1',
      'EMAIL_ADDRESS_2',
      undefined,
      undefined,
      undefined,
    ]);
    expect(
      JSON.parse((body.messages[2]!.tool_calls as { function: { arguments: string } }[])[0]!.function.arguments),
    ).toEqual({ email: '<EMAIL_ADDRESS_3>' });
    expect(body.messages[3]!.content).toBe('found <EMAIL_ADDRESS_3>, phone <PHONE_NUMBER_1>');
    expect(body.metadata).toEqual({ customer: '<EMAIL_ADDRESS_3>' });
    expect((body.tools as { function: { description: string } }[])[0]!.function.description).toBe(
      'Look up people such as <EMAIL_ADDRESS_3>',
    );
    const text = receivedText();
    for (const needle of ['jane', 'müller', 'muller', '1512']) expect(text).not.toContain(needle);
  });

  it('keeps street addresses and dates of birth from the upstream when DLP_ENTITIES lists them, and lets a plain date through', async () => {
    await client.chat.completions.create({
      model: 'a-4o',
      messages: [
        {
          role: 'user',
          content:
            'Patient born on 14 March 1987, lives at 1234 N Maple Avenue, Apt 5B, Springfield, IL 62704. Invoice of 2024-01-15.',
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c3', type: 'function', function: { name: 'lookup', arguments: '{"id":"p-7"}' } }],
        },
        {
          role: 'tool',
          tool_call_id: 'c3',
          content: 'Geburtsdatum: 03.07.1962, Anschrift: Lindenweg 3a, 10115 Berlin',
        },
        { role: 'user', content: 'Summarise.' },
      ],
      stop: ['DOB 1987-03-14'],
    });
    const body = upstream.requests.at(-1)!.body as { messages: { content: string | null }[]; stop: string[] };
    expect(body.messages[0]!.content).toBe(
      'Patient born on <DATE_OF_BIRTH_1>, lives at <STREET_ADDRESS_1>. Invoice of 2024-01-15.',
    );
    expect(body.messages[2]!.content).toBe('Geburtsdatum: <DATE_OF_BIRTH_2>, Anschrift: <STREET_ADDRESS_2>');
    expect(body.stop).toEqual(['DOB <DATE_OF_BIRTH_3>']);
    const text = receivedText();
    for (const needle of [
      '1987',
      '1962',
      'Maple',
      'Apt 5B',
      'Springfield',
      '62704',
      'Lindenweg',
      '10115',
      'Berlin',
      '03.07',
      '14 March',
    ])
      expect(text).not.toContain(needle);
  });

  for (const { value, local, lead = 'Please email or phone:' } of VALUES as {
    value: string;
    local: string;
    lead?: string;
  }[]) {
    it(`no three characters of ${JSON.stringify(value)} reach the upstream, in any field`, async () => {
      await client.chat.completions.create({
        model: 'a-4o',
        messages: [
          { role: 'user', content: `${lead} ${value}` },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c2', type: 'function', function: { name: 'save', arguments: JSON.stringify({ contact: value }) } },
            ],
          },
          { role: 'tool', tool_call_id: 'c2', content: `saved contact ${value}` },
          { role: 'user', content: `Confirm the contact ${value} by email or phone.` },
        ],
        stop: [`contact ${value}`],
      });
      const text = receivedText();
      expect(text).toContain('<'); // placeholders were sent instead
      // The request's own words ("the contact") may share three letters with a value.
      const filler = `${lead} save {"contact":""} saved contact Confirm the contact by email or phone. a-4o`;
      for (const fragment of fragmentsOf(local).filter((f) => !filler.includes(f))) {
        expect(text, `fragment ${JSON.stringify(fragment)} of ${value}`).not.toContain(fragment);
      }
    });
  }
});
