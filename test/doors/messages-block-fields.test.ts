import { describe, expect, it } from 'vitest';
import { mapRequestTexts, requestTexts } from '../../src/chat/message-texts.ts';
import { parseConfig } from '../../src/config/gateway-config.ts';
import { messagesDoor } from '../../src/doors/messages/messages-door.ts';
import { countTokensRequestSchema } from '../../src/doors/messages/request-schema.ts';
import { estimateInputTokens } from '../../src/doors/messages/token-estimate.ts';
import { anthropicAdapter, buildAnthropicBody } from '../../src/providers/anthropic/adapter.ts';
import { geminiAdapter } from '../../src/providers/gemini/adapter.ts';
import { paramNames } from '../../src/providers/inert-params.ts';
import { buildOpenAiBody, openAiAdapter } from '../../src/providers/openai/adapter.ts';
import type { Untyped } from '../support/untyped.ts';

const config = parseConfig(`
providers:
  - name: provider_c
    api_key_env: C_KEY
    models: [c-sonnet-4-20250514]
`);
const door = messagesDoor({ config: () => config });
const decode = (body: unknown) => door.decode({ body, headers: {}, owner: 'o' });
const base = { model: 'c-sonnet-4-20250514', max_tokens: 100 };

/** A web-search turn as Anthropic's API returns it, sent back by the client, and the next question. */
const serverToolTurn = [
  { role: 'user', content: 'Who won?' },
  {
    role: 'assistant',
    content: [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'winner' } },
      {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_1',
        content: [{ type: 'web_search_result', url: 'https://e.x/a', title: 'A', encrypted_content: 'enc' }],
      },
      { type: 'text', text: 'Ann won.', citations: [{ type: 'web_search_result_location', url: 'https://e.x/a' }] },
      { type: 'text', text: ' Then what?' },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'And then?', citations: null, some_future_field: { x: 1 } },
      { type: 'search_result', source: 'https://s.x', title: 'S', content: [{ type: 'text', text: 'found' }] },
      { type: 'image', source: { type: 'url', url: 'https://i.x/a.png' }, future_image_field: true },
    ],
  },
];

describe('Messages door: unmodelled block fields and block types', () => {
  it('reach an Anthropic-format body exactly as the client sent them, in order', () => {
    const req = decode({
      ...base,
      messages: serverToolTurn,
      tools: [{ name: 'f', input_schema: { type: 'object' }, input_examples: [{ a: 1 }] }],
    });
    expect(req.anthropic_fields).toEqual([
      'server_tool_use',
      'web_search_tool_result',
      'messages.1.content.2.citations',
      'messages.2.content.0.citations',
      'messages.2.content.0.some_future_field',
      'search_result',
      'messages.2.content.2.future_image_field',
      'tools.0.input_examples',
    ]);
    const body = buildAnthropicBody(req, false) as Untyped;
    expect(body.messages).toEqual(serverToolTurn);
    expect(body.tools).toEqual([{ name: 'f', input_schema: { type: 'object' }, input_examples: [{ a: 1 }] }]);
    expect(anthropicAdapter.unsupportedParams(req)).not.toContain('anthropic_fields');
    expect(anthropicAdapter.validate(req)).toBeUndefined();
  });

  it('keeps unmodelled fields of tool_use, tool_result and document blocks on them', () => {
    const messages = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 't1', name: 'f', input: {}, caller: { type: 'direct' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'ok', future: 'x' },
          {
            type: 'document',
            source: { type: 'text', media_type: 'text/plain', data: 'd' },
            citations: { enabled: true },
          },
        ],
      },
    ];
    const req = decode({ ...base, messages, tools: [{ name: 'f', input_schema: { type: 'object' } }] });
    expect((buildAnthropicBody(req, false) as Untyped).messages).toEqual(messages);
  });

  it('sends the cache marks of images, tool calls and tool results, counted among the breakpoints, without naming them', () => {
    const mark = { type: 'ephemeral' };
    const messages = [
      {
        role: 'user',
        content: [{ type: 'image', source: { type: 'url', url: 'https://i.x/a.png' }, cache_control: mark }],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {}, cache_control: mark }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok', cache_control: mark }] },
    ];
    const tools = [{ name: 'f', input_schema: { type: 'object' } }];
    const req = decode({ ...base, messages, tools });
    expect(req.anthropic_fields).toBeUndefined();
    expect((buildAnthropicBody(req, false) as Untyped).messages).toEqual(messages);
    expect(anthropicAdapter.validate(req)).toBeUndefined();
    const marked = decode({
      ...base,
      messages,
      tools: [{ ...tools[0], cache_control: mark }],
      system: [{ type: 'text', text: 's', cache_control: mark }],
    });
    expect(anthropicAdapter.validate(marked)).toMatch(/^5 parts and tools carry 'cache_control'/);
    expect(JSON.stringify(buildOpenAiBody(req, false))).not.toContain('cache_control');
  });

  it('are refused by the OpenAI and Gemini formats by name, and never written there when dropped', () => {
    const req = decode({ ...base, messages: serverToolTurn });
    for (const adapter of [openAiAdapter, geminiAdapter])
      expect(adapter.unsupportedParams(req)).toContain('anthropic_fields');
    expect(paramNames('anthropic_fields', req)).toEqual(req.anthropic_fields);
    const many = { ...req, anthropic_fields: Array.from({ length: 20 }, (_, i) => `messages.0.content.${i}.a b`) };
    expect(paramNames('anthropic_fields', many)).toHaveLength(17);
    expect(paramNames('anthropic_fields', many)[0]).toBe('messages.0.content.0.a?b');
    expect(paramNames('anthropic_fields', many).at(-1)).toBe('4 more fields');
    // With drop_unsupported_params the dispatcher deletes the list; the data itself is never written there.
    const { anthropic_fields: _dropped, ...dropped } = req;
    const text = JSON.stringify(buildOpenAiBody(dropped, false));
    for (const word of ['server_tool_use', 'search_result', 'citations', 'some_future_field', 'future_image_field'])
      expect(text).not.toContain(word);
    expect((buildOpenAiBody(dropped, false) as Untyped).messages[1]).toEqual({
      role: 'assistant',
      content: 'Ann won.\n Then what?',
    });
    expect(geminiAdapter.validate(dropped)).toBeUndefined();
    expect(
      JSON.stringify(geminiAdapter.buildRequest(dropped, { baseUrl: 'http://g', apiKey: 'k' }, { stream: false }).body),
    ).not.toContain('srvtoolu_1');
  });

  it('has every string DLP scans, and a redaction reaches the Anthropic body', () => {
    const req = decode({
      ...base,
      messages: serverToolTurn,
      tools: [{ name: 'f', input_schema: { type: 'object' }, input_examples: [{ note: 'ann@x.io' }] }],
    });
    const texts = requestTexts(req);
    for (const text of ['winner', 'enc', 'https://e.x/a', 'found', 'ann@x.io', 'Ann won.'])
      expect(texts).toContain(text);
    const redacted = mapRequestTexts(req, (t) => t.replaceAll('Ann', '<PERSON>').replace('ann@x.io', '<EMAIL>'));
    const body = JSON.stringify(buildAnthropicBody(redacted, false));
    expect(body).not.toMatch(/Ann|ann@x\.io/);
    expect(body).toContain('<PERSON> won.');
    expect(body).toContain('<EMAIL>');
  });

  it('leaves reasoning signatures unscanned when a turn goes verbatim', () => {
    const thinking = { type: 'thinking', thinking: 'secret plan', signature: 'sig' };
    const req = decode({
      ...base,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [thinking, { type: 'text', text: 'a', citations: [] }] },
        { role: 'user', content: 'q2' },
      ],
    });
    const body = buildAnthropicBody(
      mapRequestTexts(req, (t) => t.replaceAll('a', 'A')),
      false,
    ) as Untyped;
    expect(body.messages[1].content).toEqual([thinking, { type: 'text', text: 'A', citations: [] }]);
  });

  it('count_tokens accepts unknown top-level fields and new blocks, and estimates without them', () => {
    const body = { model: base.model, messages: serverToolTurn, container: 'ctr_1', future: { x: 1 } };
    const parsed = countTokensRequestSchema.parse(body);
    expect(estimateInputTokens(parsed)).toBeGreaterThan(0);
  });
});
