import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/gateway-config.ts';
import { messagesDoor } from '../../src/doors/messages/messages-door.ts';
import { GatewayError } from '../../src/errors/catalog.ts';

const config = parseConfig(`
providers:
  - name: provider_a
    api_key_env: A_KEY
    models: [a-4o]
  - name: provider_c
    api_key_env: C_KEY
    models: [c-sonnet-4-20250514, c-haiku-4-20250514]
model_aliases:
  claude-3-5-haiku-20241022: c-haiku-4-20250514
  claude-*haiku*: a-4o
  claude-*: c-sonnet-4-20250514
`);

const door = messagesDoor({ config: () => config });

function decode(body: unknown) {
  return door.decode({ body, headers: {}, owner: 'o' });
}

function rejection(body: unknown): GatewayError {
  try {
    decode(body);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('decode accepted the body');
}

const base = { model: 'c-sonnet-4-20250514', max_tokens: 100 };

describe('Messages door: decoding', () => {
  it('maps a plain request: max_tokens exactly, usage always asked for, system apart', () => {
    const req = decode({
      ...base,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
      stop_sequences: ['END'],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'u-1' },
    });
    expect(req).toEqual({
      model: 'c-sonnet-4-20250514',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 100,
      n: 1,
      stream: false,
      include_usage: true,
      anthropic_reply_blocks: true,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 40,
      stop: ['END'],
      user: 'u-1',
    });
  });

  it('keeps system blocks one instruction each, with their cache_control', () => {
    const req = decode({
      ...base,
      system: [
        { type: 'text', text: 'You are Claude Code.' },
        { type: 'text', text: 'Rules.', cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(req.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'You are Claude Code.' },
      { role: 'system', content: 'Rules.', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
  });

  it('decodes every user block: text (joined when unmarked), image base64 and URL, document, tool_result with is_error', () => {
    const req = decode({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'let me see', signature: 'sig==' },
            { type: 'redacted_thinking', data: 'opaque' },
            { type: 'text', text: 'Calling.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [
                { type: 'text', text: '21C' },
                { type: 'text', text: 'sunny' },
              ],
            },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: 'clock broken',
              is_error: true,
              cache_control: { type: 'ephemeral' },
            },
            { type: 'text', text: 'and this', cache_control: { type: 'ephemeral' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' },
              title: 'Spec',
            },
            {
              type: 'document',
              source: { type: 'text', media_type: 'text/plain', data: 'plain words' },
              context: 'ctx',
            },
            { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
          ],
        },
      ],
    });
    expect(req.messages).toEqual([
      { role: 'user', content: 'a\nb' },
      {
        role: 'assistant',
        content: 'Calling.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
        ],
        thinking: [
          { type: 'thinking', thinking: 'let me see', signature: 'sig==' },
          { type: 'redacted_thinking', data: 'opaque' },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '21C\nsunny' },
      {
        role: 'tool',
        tool_call_id: 'toolu_2',
        content: 'clock broken',
        is_error: true,
        cache_control: { type: 'ephemeral' },
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and this', cache_control: { type: 'ephemeral' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          {
            type: 'document',
            source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' },
            title: 'Spec',
          },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' }, context: 'ctx' },
          { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
        ],
      },
    ]);
  });

  it('maps tools and every tool_choice, disable_parallel_tool_use as parallel_tool_calls false', () => {
    const tools = [
      { name: 'f', description: 'does f', input_schema: { type: 'object', properties: { x: { type: 'string' } } } },
    ];
    const messages = [{ role: 'user', content: 'go' }];
    const choices: Array<[unknown, unknown]> = [
      [{ type: 'auto' }, 'auto'],
      [{ type: 'any' }, 'required'],
      [{ type: 'none' }, 'none'],
      [
        { type: 'tool', name: 'f' },
        { type: 'function', function: { name: 'f' } },
      ],
    ];
    for (const [choice, expected] of choices) {
      const req = decode({ ...base, messages, tools, tool_choice: choice });
      expect(req.tool_choice).toEqual(expected);
      expect(req.parallel_tool_calls).toBeUndefined();
    }
    const req = decode({ ...base, messages, tools, tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    expect(req.parallel_tool_calls).toBe(false);
    expect(req.tools).toEqual([
      { type: 'function', function: { name: 'f', description: 'does f', parameters: tools[0]?.input_schema } },
    ]);
  });

  it('reads what Claude Code sends: a system message mid-conversation, effort, JSON output format, context editing and tool-loading hints', () => {
    const req = decode({
      ...base,
      max_tokens: 32000,
      messages: [
        { role: 'user', content: 'say hi' },
        { role: 'system', content: [{ type: 'text', text: '# Environment' }] },
      ],
      tools: [
        {
          name: 'Deferred',
          input_schema: { type: 'object' },
          defer_loading: true,
          eager_input_streaming: true,
          strict: true,
        },
      ],
      thinking: { type: 'adaptive', display: 'omitted' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
      metadata: { user_id: JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: 's' }) },
    });
    expect(req.messages).toEqual([
      { role: 'user', content: 'say hi' },
      { role: 'system', content: '# Environment' },
    ]);
    expect(req.thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    expect(req.effort).toBe('high');
    expect(req.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'output', schema: { type: 'object' } },
    });
    expect(req.context_management).toEqual({ edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] });
    expect(req.tools).toEqual([
      {
        type: 'function',
        function: { name: 'Deferred', parameters: { type: 'object' }, strict: true },
        anthropic: { defer_loading: true, eager_input_streaming: true, strict: true },
      },
    ]);
  });

  it('maps thinking configurations', () => {
    const messages = [{ role: 'user', content: 'think' }];
    expect(
      decode({ ...base, max_tokens: 4000, messages, thinking: { type: 'enabled', budget_tokens: 2048 } }).thinking,
    ).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(decode({ ...base, messages, thinking: { type: 'disabled' } }).thinking).toEqual({ type: 'disabled' });
    expect(decode({ ...base, messages, thinking: { type: 'adaptive' } }).thinking).toEqual({ type: 'adaptive' });
  });

  it('resolves aliases: configured names first, then exact aliases, then patterns in file order', () => {
    const messages = [{ role: 'user', content: 'x' }];
    expect(decode({ ...base, model: 'c-haiku-4-20250514', messages }).model).toBe('c-haiku-4-20250514');
    expect(decode({ ...base, model: 'claude-3-5-haiku-20241022', messages }).model).toBe('c-haiku-4-20250514');
    expect(decode({ ...base, model: 'claude-haiku-4-5-20251001', messages }).model).toBe('a-4o');
    expect(decode({ ...base, model: 'claude-sonnet-4-5-20250929', messages }).model).toBe('c-sonnet-4-20250514');
    // Unknown names stay as sent: the pipeline answers not found naming them.
    expect(decode({ ...base, model: 'gpt-9', messages }).model).toBe('gpt-9');
  });

  it('refuses an alias whose target is not configured, naming it', () => {
    expect(() =>
      parseConfig('providers: [{name: provider_a, api_key_env: K, models: [a]}]\nmodel_aliases: {x: nope}'),
    ).toThrow(/model_aliases\.x: 'nope' is not a model/);
  });

  it('keeps unknown top-level fields and the anthropic-* headers as sent, for an Anthropic-format upstream', () => {
    const body = {
      ...base,
      messages: [{ role: 'user', content: 'x' }],
      container: 'ctr_1',
      mcp_servers: [{ type: 'url', url: 'https://m' }],
      context_management: { edits: [] },
    };
    const req = door.decode({
      body,
      headers: { 'anthropic-beta': 'a-2025,b-2026', 'anthropic-version': '2023-06-01' },
      owner: 'o',
    });
    expect(req.extra_body).toEqual({ container: 'ctr_1', mcp_servers: [{ type: 'url', url: 'https://m' }] });
    expect(req.context_management).toEqual({ edits: [] });
    expect(req.anthropic_beta).toBe('a-2025,b-2026');
    expect(req.anthropic_version).toBe('2023-06-01');
    const plain = decode({ ...base, messages: [{ role: 'user', content: 'x' }] });
    expect(
      Object.keys(plain).filter((k) =>
        ['extra_body', 'context_management', 'anthropic_beta', 'anthropic_version'].includes(k),
      ),
    ).toEqual([]);
    expect(() =>
      door.decode({
        body: { ...base, messages: [{ role: 'user', content: 'x' }] },
        headers: { 'anthropic-beta': 'x'.repeat(3000) },
        owner: 'o',
      }),
    ).toThrow(/anthropic-beta header is longer than/);
  });

  it('answers bad input with a 400 naming the field', () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /must be a JSON object/],
      [{ model: 'm', messages: [{ role: 'user', content: 'x' }] }, /max_tokens/],
      [{ ...base, messages: [] }, /messages/],
      [{ ...base, messages: [{ role: 'tool', content: 'x' }] }, /messages\.0\.role/],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'f', input: {} }] }] },
        /messages\.0\.content/,
      ],
      [
        {
          ...base,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'AA==' } }],
            },
          ],
        },
        /messages\.0\.content\.0\.source\.media_type/,
      ],
      [
        {
          ...base,
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'http://x/y.png' } }] }],
        },
        /source\.url: must be an https: URL/,
      ],
      [{ ...base, messages: [{ role: 'user', content: 'x' }], temperature: 1.5 }, /temperature/],
      [
        { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 5, citations: [] }] }] },
        /messages\.0\.content\.0\.text/,
      ],
      [{ ...base, messages: [{ role: 'user', content: [{ type: 'x'.repeat(65) }] }] }, /messages\.0\.content\.0\.type/],
      [
        {
          ...base,
          messages: [{ role: 'user', content: 'x' }],
          tool_choice: { type: 'tool', name: 'f' },
          tools: [{ name: 'g', input_schema: { type: 'object' } }],
        },
        /tool_choice\.name: names 'f'/,
      ],
      [
        { ...base, messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 2000 } },
        /thinking\.budget_tokens: must be less than 'max_tokens'/,
      ],
      [
        { ...base, messages: [{ role: 'assistant', content: [] }] },
        /messages\.0\.content: an assistant message needs at least one block/,
      ],
      [
        {
          ...base,
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: 't',
                  content: [{ type: 'image', source: { type: 'url', url: 'http://x/y.png' } }],
                },
              ],
            },
          ],
        },
        /messages\.0\.content\.0\.content\.0\.source\.url: must be an https: URL/,
      ],
      [
        { ...base, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'custom', name: 'f' }] },
        /tools\.0\.input_schema/,
      ],
      [
        {
          ...base,
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: '' } }] }],
        },
        /messages\.0\.content\.0\.source\.file_id/,
      ],
    ];
    for (const [body, message] of cases) {
      const err = rejection(body);
      expect(err.code).toBe('invalid_request');
      expect(err.message).toMatch(message);
      expect(door.error(err, 'req-1')).toEqual({
        status: 400,
        body: { type: 'error', error: { type: 'invalid_request_error', message: err.message }, request_id: 'req-1' },
      });
    }
  });
});
