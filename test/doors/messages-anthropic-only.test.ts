import { describe, expect, it } from 'vitest';
import { exactKeyOf } from '../../src/cache/cache-key.ts';
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
const endpoint = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k' };
const geminiBody = (req: Untyped): Untyped =>
  JSON.parse(geminiAdapter.buildRequest(req, endpoint, { stream: false }).body);

const PNG = 'iVBORw0KGgo=';
const clientTool = (name: string) => ({ name, input_schema: { type: 'object', properties: {} } });

/** A tool call answered with an image, a search result and a text, then a question. */
const richResultTurns = [
  { role: 'user', content: 'Look at the chart.' },
  {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 't1', name: 'read', input: { path: 'chart.png' } },
      { type: 'tool_use', id: 't2', name: 'read', input: { path: 'notes.txt' } },
    ],
  },
  {
    role: 'user',
    content: [
      {
        type: 'tool_result',
        tool_use_id: 't1',
        content: [
          { type: 'text', text: 'chart.png:' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        ],
      },
      { type: 'tool_result', tool_use_id: 't2', content: 'plain notes' },
      { type: 'text', text: 'What does it show?' },
    ],
  },
];

describe('Messages door: what only Anthropic reads', () => {
  it("carries Anthropic's own tools whole and in their places, and a tool_choice that forces one", () => {
    const webSearch = {
      type: 'web_search_20250305',
      name: 'web_search',
      max_uses: 3,
      user_location: { type: 'approximate', city: 'Paris' },
    };
    const mcp = { type: 'mcp_toolset', mcp_server_name: 'docs' };
    const tools = [clientTool('f'), webSearch, clientTool('g'), mcp];
    const req = decode({
      ...base,
      messages: [{ role: 'user', content: 'news?' }],
      tools,
      tool_choice: { type: 'tool', name: 'web_search' },
    });
    expect(req.tools?.map((t) => t.function.name)).toEqual(['f', 'g']);
    expect(req.anthropic_fields).toEqual(['web_search_20250305', 'mcp_toolset']);
    const body = buildAnthropicBody(req, false) as Untyped;
    expect(body.tools).toEqual(tools);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'web_search' });
    expect(anthropicAdapter.unsupportedParams(req)).toEqual([]);
    // Only server tools: still sent, with the client's choice.
    const only = decode({
      ...base,
      messages: [{ role: 'user', content: 'x' }],
      tools: [webSearch],
      tool_choice: { type: 'any' },
    });
    expect(buildAnthropicBody(only, false) as Untyped).toMatchObject({
      tools: [webSearch],
      tool_choice: { type: 'any' },
    });
    // Elsewhere: refused naming the tool types and the forced choice.
    for (const adapter of [openAiAdapter, geminiAdapter])
      expect(adapter.unsupportedParams(req)).toEqual(expect.arrayContaining(['anthropic_fields', 'extra_body']));
    expect(paramNames('anthropic_fields', req)).toEqual(['web_search_20250305', 'mcp_toolset']);
    expect(paramNames('extra_body', req)).toEqual(['tool_choice']);
    // Dropped: the function tools remain and nothing of the server tools is written.
    const { anthropic_fields: _f, extra_body: _e, ...dropped } = req;
    const openAi = buildOpenAiBody(dropped, false) as Untyped;
    expect(openAi.tools.map((t: Untyped) => t.function.name)).toEqual(['f', 'g']);
    expect(openAi.tool_choice).toBeUndefined();
    expect(JSON.stringify(openAi)).not.toContain('web_search');
  });

  it('has server tools read by DLP, keyed by the exact cache and counted by count_tokens', () => {
    const webSearch = { type: 'web_search_20250305', name: 'web_search', user_location: { city: 'Paris' } };
    const req = decode({ ...base, messages: [{ role: 'user', content: 'x' }], tools: [webSearch] });
    expect(requestTexts(req)).toContain('Paris');
    const redacted = mapRequestTexts(req, (text) => (text === 'Paris' ? '<LOCATION_1>' : text));
    expect(buildAnthropicBody(redacted, false) as Untyped).toMatchObject({
      tools: [{ ...webSearch, user_location: { city: '<LOCATION_1>' } }],
    });
    const plain = decode({ ...base, messages: [{ role: 'user', content: 'x' }] });
    expect(exactKeyOf('p', req)).not.toBe(exactKeyOf('p', plain));
    const count = (body: unknown) => estimateInputTokens(countTokensRequestSchema.parse(body));
    const counted = { model: base.model, messages: [{ role: 'user', content: 'x' }] };
    expect(count({ ...counted, tools: [webSearch] })).toBeGreaterThan(count(counted));
  });

  it('sends a tool result made of blocks to an Anthropic upstream exactly as sent', () => {
    const searchResult = {
      type: 'search_result',
      source: 'https://docs.x/a',
      title: 'A',
      content: [{ type: 'text', text: 'found it' }],
      citations: { enabled: true },
    };
    const messages = structuredClone(richResultTurns) as Untyped[];
    messages[2].content[0].content.push(searchResult, {
      type: 'document',
      source: { type: 'file', file_id: 'file_011' },
    });
    messages[2].content[0].content[0].cache_control = { type: 'ephemeral' };
    const req = decode({ ...base, messages, tools: [clientTool('read')] });
    expect((buildAnthropicBody(req, false) as Untyped).messages).toEqual(messages);
    expect(anthropicAdapter.validate(req)).toBeUndefined();
    expect(req.anthropic_fields).toEqual(['search_result', 'messages.2.content.0.content.3.source.file_id']);
    for (const adapter of [openAiAdapter, geminiAdapter])
      expect(adapter.unsupportedParams(req)).toContain('anthropic_fields');
  });

  it("puts a tool result's images after the turn's results for OpenAI, and beside the responses for Gemini", () => {
    const req = decode({ ...base, messages: richResultTurns, tools: [clientTool('read')] });
    expect(req.anthropic_fields).toBeUndefined();
    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } };
    expect((buildOpenAiBody(req, false) as Untyped).messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'chart.png:' },
      { role: 'tool', tool_call_id: 't2', content: 'plain notes' },
      { role: 'user', content: [image] },
      { role: 'user', content: 'What does it show?' },
    ]);
    expect(openAiAdapter.validate(req)).toBeUndefined();
    const contents = geminiBody(req).contents as Untyped[];
    expect(contents[2].parts).toEqual([
      { functionResponse: { name: 'read', response: { output: 'chart.png:' } } },
      { functionResponse: { name: 'read', response: { output: 'plain notes' } } },
      { inlineData: { mimeType: 'image/png', data: PNG } },
      { text: 'What does it show?' },
    ]);
    expect(geminiAdapter.validate(req)).toBeUndefined();
    // A result of texts only stays one text for every format.
    const texts = structuredClone(richResultTurns) as Untyped[];
    texts[2].content[0].content = [
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ];
    expect(decode({ ...base, messages: texts, tools: [clientTool('read')] }).messages[2]).toMatchObject({
      role: 'tool',
      content: 'a\nb',
    });
  });

  it("has DLP read a tool result's texts and an unmodelled system field", () => {
    const req = decode({
      ...base,
      system: [{ type: 'text', text: 'Be brief.', note: 'for Ann Smith' }],
      messages: richResultTurns,
      tools: [clientTool('read')],
    });
    const texts = requestTexts(req);
    expect(texts).toEqual(expect.arrayContaining(['chart.png:', 'for Ann Smith']));
    const redacted = mapRequestTexts(req, (text) => text.replace('Ann Smith', '<PERSON_1>').replace('chart', '<X>'));
    const body = buildAnthropicBody(redacted, false) as Untyped;
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', note: 'for <PERSON_1>' }]);
    expect(body.messages[2].content[0].content[0]).toEqual({ type: 'text', text: '<X>.png:' });
  });

  it('sends system blocks with unmodelled fields unchanged to Anthropic, and names them elsewhere', () => {
    const system = [
      { type: 'text', text: 'One.', future: { a: 1 } },
      { type: 'text', text: 'Two.' },
    ];
    const req = decode({ ...base, system, messages: [{ role: 'user', content: 'x' }] });
    expect(buildAnthropicBody(req, false) as Untyped).toMatchObject({ system });
    expect(req.anthropic_fields).toEqual(['system.0.future']);
    expect(openAiAdapter.unsupportedParams(req)).toContain('anthropic_fields');
    const { anthropic_fields: _f, ...dropped } = req;
    const openAi = buildOpenAiBody(dropped, false) as Untyped;
    expect(openAi.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'One.' },
      { role: 'system', content: 'Two.' },
    ]);
    expect(geminiBody(dropped).systemInstruction).toEqual({ parts: [{ text: 'One.\n\nTwo.' }] });
    const plain = decode({
      ...base,
      system: [system[0]!.text, system[1]!.text].map((text) => ({ type: 'text', text })),
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(exactKeyOf('p', req)).not.toBe(exactKeyOf('p', plain));
  });

  it('sends images and documents from the Files API to Anthropic as sent, and names them elsewhere', () => {
    const content = [
      { type: 'image', source: { type: 'file', file_id: 'file_1' } },
      { type: 'document', source: { type: 'file', file_id: 'file_2' }, title: 'Report' },
      { type: 'text', text: 'Summarize.' },
    ];
    const req = decode({ ...base, messages: [{ role: 'user', content }] });
    expect((buildAnthropicBody(req, false) as Untyped).messages).toEqual([{ role: 'user', content }]);
    expect(req.anthropic_fields).toEqual([
      'messages.0.content.0.source.file_id',
      'messages.0.content.1.source.file_id',
    ]);
    for (const adapter of [openAiAdapter, geminiAdapter])
      expect(adapter.unsupportedParams(req)).toContain('anthropic_fields');
  });
});
