import { describe, expect, it } from 'vitest';
import { cacheModeOf } from '../../src/cache/cache-control.ts';
import { exactKeyOf, inflightKeyOf, lastUserIndex, semanticPartitionOf } from '../../src/cache/cache-key.ts';
import { normalizeChatRequest } from '../../src/chat/request-schema.ts';
import type { AnthropicFields as Fields, ChatRequest } from '../../src/chat/types.ts';

function request(body: Record<string, unknown>): ChatRequest {
  return normalizeChatRequest({ model: 'a-4o', messages: [{ role: 'user', content: 'Hi' }], ...body } as never);
}

describe('cache keys', () => {
  it('depend on every generation parameter, the model, all messages and the partition', () => {
    const base = exactKeyOf('owner:a', request({}));
    const variants = [
      exactKeyOf('owner:b', request({})),
      exactKeyOf('owner:a', request({ model: 'a-4' })),
      exactKeyOf('owner:a', request({ temperature: 1 })),
      exactKeyOf('owner:a', request({ top_p: 0.5 })),
      exactKeyOf('owner:a', request({ max_tokens: 10 })),
      exactKeyOf('owner:a', request({ n: 2 })),
      exactKeyOf('owner:a', request({ stop: 'x' })),
      exactKeyOf('owner:a', request({ seed: 1 })),
      exactKeyOf('owner:a', request({ presence_penalty: 1 })),
      exactKeyOf('owner:a', request({ frequency_penalty: 1 })),
      exactKeyOf(
        'owner:a',
        request({
          messages: [
            { role: 'system', content: 'S' },
            { role: 'user', content: 'Hi' },
          ],
        }),
      ),
      exactKeyOf('owner:a', request({ messages: [{ role: 'user', content: 'Hi', name: 'bob' }] })),
      exactKeyOf('owner:a', request({ messages: [{ role: 'user', content: 'hi' }] })),
      exactKeyOf('owner:a', request({ messages: [{ role: 'user', content: 'Hi!' }] })),
      exactKeyOf('owner:a', request({ messages: [{ role: 'user', content: 'Hi  there' }] })),
    ];
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('depend on what a Messages request passes unmodelled to an Anthropic-format upstream, and on nothing more without it', () => {
    const plain = request({});
    const base = exactKeyOf('p', plain);
    const variants = [
      exactKeyOf('p', { ...plain, extra_body: { container: 'c1' } }),
      exactKeyOf('p', { ...plain, extra_body: { container: 'c2' } }),
      exactKeyOf('p', { ...plain, context_management: { edits: [] } }),
      exactKeyOf('p', { ...plain, anthropic_beta: 'b-1' }),
    ];
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
    // The protocol version the client speaks changes nothing the upstream answers.
    expect(exactKeyOf('p', { ...plain, anthropic_version: '2023-06-01' })).toBe(base);
  });

  it("depend on a Messages request's unmodelled block fields and blocks of unmodelled types", () => {
    const messages = (extra: { result?: Fields; blocks?: Fields[]; part?: Fields }): ChatRequest['messages'] => [
      { role: 'user', content: [{ type: 'text', text: 'Hi', ...(extra.part ? { anthropic: extra.part } : {}) }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }],
        ...(extra.blocks ? { anthropic_blocks: extra.blocks } : {}),
      },
      { role: 'tool', tool_call_id: 't', content: 'ok', ...(extra.result ? { anthropic: extra.result } : {}) },
    ];
    const plain = request({});
    const key = (extra: Parameters<typeof messages>[0]) => exactKeyOf('p', { ...plain, messages: messages(extra) });
    const keys = [
      key({}),
      key({ part: { citations: [] } }),
      key({ part: { citations: [{ url: 'u' }] } }),
      key({ blocks: [{ type: 'server_tool_use', id: 's1' }] }),
      key({ blocks: [{ type: 'server_tool_use', id: 's2' }] }),
      key({ result: { future: 1 } }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('ignore the reply shape and equivalent spellings, but coalescing does not', () => {
    const plain = request({});
    const streamed = request({ stream: true, stream_options: { include_usage: true } });
    expect(exactKeyOf('p', plain)).toBe(exactKeyOf('p', streamed));
    expect(exactKeyOf('p', request({ stop: 'x' }))).toBe(exactKeyOf('p', request({ stop: ['x'] })));
    expect(exactKeyOf('p', request({ max_tokens: 5 }))).toBe(exactKeyOf('p', request({ max_completion_tokens: 5 })));
    expect(exactKeyOf('p', request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }] }))).toBe(
      exactKeyOf('p', plain),
    );
    // The one folding the exact key allows: whitespace around the prompt.
    expect(exactKeyOf('p', request({ messages: [{ role: 'user', content: '  Hi\n' }] }))).toBe(exactKeyOf('p', plain));
    const key = exactKeyOf('p', plain);
    expect(inflightKeyOf(key, plain)).not.toBe(inflightKeyOf(key, streamed));
    // A Messages door request's job may carry the upstream's own blocks, which another door must not read.
    const messagesDoor = { ...plain, anthropic_reply_blocks: true as const };
    expect(exactKeyOf('p', messagesDoor)).toBe(key);
    expect(inflightKeyOf(key, messagesDoor)).not.toBe(inflightKeyOf(key, plain));
  });

  it('semantic partitions keep earlier turns and parameters but not the last user message', () => {
    const earlier = [{ role: 'system', content: 'Be brief.' }];
    const a = request({ messages: [...earlier, { role: 'user', content: 'Capital of France?' }] });
    const b = request({ messages: [...earlier, { role: 'user', content: 'France capital?' }] });
    const otherSystem = request({
      messages: [
        { role: 'system', content: 'Be long.' },
        { role: 'user', content: 'Capital of France?' },
      ],
    });
    expect(semanticPartitionOf('p', 'e', a)).toBe(semanticPartitionOf('p', 'e', b));
    expect(semanticPartitionOf('p', 'e', a)).not.toBe(semanticPartitionOf('p', 'e', otherSystem));
    expect(semanticPartitionOf('p', 'e', a)).not.toBe(semanticPartitionOf('q', 'e', a));
    expect(semanticPartitionOf('p', 'e', a)).not.toBe(semanticPartitionOf('p', 'other-embedder', a));
    expect(semanticPartitionOf('p', 'e', a)).not.toBe(semanticPartitionOf('p', 'e', { ...a, temperature: 0 }));
    expect(lastUserIndex(a)).toBe(1);
    expect(
      lastUserIndex(
        request({
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', content: 'y' },
          ],
        }),
      ),
    ).toBe(-1);
  });
});

describe('Cache-Control', () => {
  it('maps no-cache to refresh and no-store to bypass', () => {
    expect(cacheModeOf(undefined)).toBe('use');
    expect(cacheModeOf('max-age=0')).toBe('use');
    expect(cacheModeOf('no-cache')).toBe('refresh');
    expect(cacheModeOf('No-Store')).toBe('bypass');
    expect(cacheModeOf('no-cache, no-store')).toBe('bypass');
    expect(cacheModeOf(['private', 'no-cache'])).toBe('refresh');
  });
});
