import { describe, expect, it } from 'vitest';
import { parseChatRequest } from '../../src/http/routes/chat-completions.ts';
import { InvalidRequestError } from '../../src/errors/catalog.ts';

const base = { model: 'a-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('chat request validation (DECISIONS.md bounds)', () => {
  it('normalizes content parts, stop, max_completion_tokens and defaults', () => {
    const req = parseChatRequest({
      ...base,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
      stop: 'END',
      max_completion_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(req.messages[0]?.content).toBe('a\nb');
    expect(req.stop).toEqual(['END']);
    expect(req.max_tokens).toBe(12);
    expect(req.n).toBe(1);
    expect(req.stream).toBe(true);
    expect(req.include_usage).toBe(true);
  });

  it.each([
    [{ messages: [] }, 'messages'],
    [{ messages: Array.from({ length: 1001 }, () => ({ role: 'user', content: 'x' })) }, 'messages'],
    [{ messages: [{ role: 'tool', content: 'x' }] }, 'role'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ max_tokens: 1.5 }, 'max_tokens'],
    [{ temperature: -0.1 }, 'temperature'],
    [{ top_p: 1.1 }, 'top_p'],
    [{ n: 9 }, 'n'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    [{ model: '' }, 'model'],
    [{ tools: [] }, 'tools'],
    [{ messages: [{ role: 'user' }] }, 'content'],
  ])('rejects %j naming %s', (patch, field) => {
    let error: unknown;
    try {
      parseChatRequest({ ...base, ...patch });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toContain(field);
  });

  it('rejects a body that is not an object', () => {
    expect(() => parseChatRequest(undefined)).toThrowError(/JSON object/);
    expect(() => parseChatRequest([1])).toThrowError(/JSON object/);
  });
});
