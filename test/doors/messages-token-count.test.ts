import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type ProviderConfig } from '../../src/config/gateway-config.ts';
import { countTokensRequestSchema } from '../../src/doors/messages/request-schema.ts';
import { TokenCounter } from '../../src/doors/messages/token-count.ts';
import { estimateInputTokens } from '../../src/doors/messages/token-estimate.ts';
import { DlpGuard } from '../../src/dlp/dlp-guard.ts';
import { ModelNotFoundError } from '../../src/errors/catalog.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import type { Untyped } from '../support/untyped.ts';

/**
 * The token counter against loopback upstreams of the Anthropic and Gemini
 * formats (their counting endpoints), with the real DLP guard screening
 * what is sent.
 */

let anthropic: FakeUpstream;
let gemini: FakeUpstream;
let counter: TokenCounter;
const estimated: Array<{ provider: string; reason: string }> = [];

beforeAll(async () => {
  [anthropic, gemini] = await Promise.all([
    startFakeUpstream({ format: 'anthropic' }),
    startFakeUpstream({ format: 'gemini' }),
  ]);
  const config = parseConfig(`
providers:
  - { name: provider_c, format: anthropic, api_key_env: C_KEY, base_url: '${anthropic.url}', models: [c-sonnet], upstream_models: { c-sonnet: claude-sonnet-4-5 } }
  - { name: provider_b, format: gemini, api_key_env: B_KEY, base_url: '${gemini.url}', models: [b-flash] }
  - { name: provider_nokey, format: anthropic, api_key_env: NO_KEY, base_url: '${anthropic.url}', models: [c-nokey] }
model_aliases: { 'claude-*': c-sonnet }
`);
  const keys: Record<string, string | undefined> = { C_KEY: anthropic.apiKey, B_KEY: gemini.apiKey };
  const dlp = new DlpGuard();
  counter = new TokenCounter({
    config: () => config,
    endpointOf: (provider: ProviderConfig) => {
      const key = keys[provider.api_key_env];
      if (key === undefined) throw new Error(`${provider.name} has no key`);
      return { baseUrl: provider.base_url!, apiKey: key };
    },
    screen: (request) => dlp.screenAsync(request, {}),
    onEstimate: (provider, reason) => estimated.push({ provider, reason }),
  });
});

afterAll(async () => {
  await Promise.all([anthropic?.close(), gemini?.close()]);
});

const body = (model: string, text: string, extra: object = {}) =>
  countTokensRequestSchema.parse({ model, messages: [{ role: 'user', content: text }], ...extra });

describe('Messages token counter', () => {
  it("asks an Anthropic-format upstream under its own model id, through an alias, with DLP's redaction applied", async () => {
    const counted = await counter.count(body('claude-haiku-4', 'Mail ann.smith@example.com about the four reports'), {
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'token-counting-2024-11-01',
    });
    const call = anthropic.requests.at(-1)!;
    expect(call.path).toBe('/v1/messages/count_tokens');
    expect(call.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
    const sent = call.body as Untyped;
    expect(sent.model).toBe('claude-sonnet-4-5');
    expect(JSON.stringify(sent)).not.toContain('ann.smith@example.com');
    expect(sent.messages[0].content).toMatch(/^Mail <EMAIL_ADDRESS_1> about the four reports$/);
    expect(counted).toEqual({ tokens: 6, source: 'upstream' });
  });

  it('asks a Gemini-format upstream with the generateContent request the adapter would send', async () => {
    const counted = await counter.count(body('b-flash', 'one two three', { system: 'Be terse.' }), {});
    expect(counted).toEqual({ tokens: 5, source: 'upstream' });
    const sent = gemini.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/b-flash:countTokens');
    expect((sent.body as Untyped).generateContentRequest).toMatchObject({
      model: 'models/b-flash',
      contents: [{ role: 'user', parts: [{ text: 'one two three' }] }],
      systemInstruction: { parts: [{ text: 'Be terse.' }] },
    });
  });

  it('estimates when the upstream cannot count: no key, a part the format does not read, a failure', async () => {
    const cases: Array<[ReturnType<typeof body>, string, RegExp]> = [
      [body('c-nokey', 'hello there'), 'provider_nokey', /has no key/],
      [
        body('b-flash', 'hello there', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
        'provider_b',
        /anthropic_fields/,
      ],
    ];
    for (const [request, provider, reason] of cases) {
      const before = gemini.requests.length + anthropic.requests.length;
      expect(await counter.count(request, {})).toEqual({ tokens: estimateInputTokens(request), source: 'estimate' });
      expect(estimated.at(-1)).toMatchObject({ provider, reason: expect.stringMatching(reason) });
      expect(gemini.requests.length + anthropic.requests.length).toBe(before);
    }
    anthropic.setBehavior({ failNext: { count: 1, status: 529 } });
    const request = body('c-sonnet', 'hello there');
    expect(await counter.count(request, {})).toEqual({ tokens: estimateInputTokens(request), source: 'estimate' });
    expect(estimated.at(-1)).toMatchObject({ provider: 'provider_c', reason: 'provider_c answered 529' });
  });

  it('refuses an unknown model with the not-found error', async () => {
    await expect(counter.count(body('nope', 'x'), {})).rejects.toBeInstanceOf(ModelNotFoundError);
  });
});
