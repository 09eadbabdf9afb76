import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/chat/types.ts';
import { DlpGuard } from '../../src/dlp/dlp-guard.ts';
import { DlpEngine } from '../../src/dlp/engine.ts';
import type { DlpAction } from '../../src/dlp/entities.ts';
import { PlaceholderRegistry, redactText } from '../../src/dlp/redaction.ts';
import { PiiDetectedError } from '../../src/errors/catalog.ts';

const EMAIL = 'jane.doe@example.com';
const OTHER_EMAIL = 'bob@example.org';
const CARD = '4111 1111 1111 1111';

function chat(...contents: string[]): ChatRequest {
  return {
    model: 'a-4o',
    n: 1,
    stream: false,
    include_usage: false,
    messages: contents.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content })),
  };
}

describe('placeholders', () => {
  it('numbers values per entity type in order of appearance and reuses them for the same value', () => {
    const registry = new PlaceholderRegistry();
    expect(registry.placeholderFor({ entity: 'EMAIL_ADDRESS', key: 'a' })).toBe('<EMAIL_ADDRESS_1>');
    expect(registry.placeholderFor({ entity: 'PHONE_NUMBER', key: 'a' })).toBe('<PHONE_NUMBER_1>');
    expect(registry.placeholderFor({ entity: 'EMAIL_ADDRESS', key: 'b' })).toBe('<EMAIL_ADDRESS_2>');
    expect(registry.placeholderFor({ entity: 'EMAIL_ADDRESS', key: 'a' })).toBe('<EMAIL_ADDRESS_1>');
  });

  it('replaces spans and keeps the text around them', () => {
    const text = 'a X b YY c';
    const findings = [
      { entity: 'US_SSN' as const, start: 2, end: 3, score: 1, key: 'x', recognizer: 't' },
      { entity: 'US_SSN' as const, start: 6, end: 8, score: 1, key: 'y', recognizer: 't' },
    ];
    expect(redactText(text, findings, new PlaceholderRegistry())).toBe('a <US_SSN_1> b <US_SSN_2> c');
    expect(redactText(text, [], new PlaceholderRegistry())).toBe(text);
  });
});

describe('DlpGuard', () => {
  it('redacts every message with placeholders consistent across the request', () => {
    const request = chat(
      `Mail ${EMAIL} and ${OTHER_EMAIL}`,
      `I will write to ${EMAIL}.`,
      `Also charge ${CARD}, then email ${EMAIL.toUpperCase()}`,
    );
    const outcome = new DlpGuard().inspect(request);
    expect(outcome.request.messages.map((m) => m.content)).toEqual([
      'Mail <EMAIL_ADDRESS_1> and <EMAIL_ADDRESS_2>',
      'I will write to <EMAIL_ADDRESS_1>.',
      'Also charge <CREDIT_CARD_1>, then email <EMAIL_ADDRESS_1>',
    ]);
    expect(outcome.findings).toEqual({ EMAIL_ADDRESS: 4, CREDIT_CARD: 1 });
    expect(outcome.blocked).toBeUndefined();
    // The input is not mutated; everything but the content is kept.
    expect(request.messages[0]!.content).toContain(EMAIL);
    expect(outcome.request).toMatchObject({ model: 'a-4o', n: 1, stream: false });
    expect(outcome.request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('returns the same request object when nothing is found', () => {
    const request = chat('What is the capital of France?');
    const outcome = new DlpGuard().inspect(request);
    expect(outcome.request).toBe(request);
    expect(outcome.findings).toEqual({});
  });

  it('block: returns a pii_detected error naming the entity types, never the values', () => {
    const outcome = new DlpGuard({ action: 'block' }).inspect(chat(`card ${CARD}`, `mail ${EMAIL}`));
    expect(outcome.blocked).toBeInstanceOf(PiiDetectedError);
    expect(outcome.blocked!.status).toBe(400);
    expect(outcome.blocked!.code).toBe('pii_detected');
    expect(outcome.blocked!.message).toContain('CREDIT_CARD, EMAIL_ADDRESS');
    expect(outcome.blocked!.message).not.toContain('4111');
    expect(outcome.blocked!.message).not.toContain(EMAIL);
  });

  it('log: leaves the request untouched and only counts', () => {
    const request = chat(`mail ${EMAIL}`);
    const outcome = new DlpGuard({ action: 'log' }).inspect(request);
    expect(outcome.request).toBe(request);
    expect(outcome.findings).toEqual({ EMAIL_ADDRESS: 1 });
  });

  it('disabled: scans nothing', () => {
    const request = chat(`mail ${EMAIL}`);
    const outcome = new DlpGuard({ enabled: false }).inspect(request);
    expect(outcome.request).toBe(request);
    expect(outcome.findings).toEqual({});
  });

  it('acts only on findings at or above the threshold', () => {
    const request = chat('ssn 536 22 1234'); // spaced SSN 0.6 + context 0.35 = 0.95
    expect(new DlpGuard({ threshold: 0.95 }).inspect(request).findings).toEqual({ US_SSN: 1 });
    expect(new DlpGuard({ threshold: 0.96 }).inspect(request).findings).toEqual({});
    expect(() => new DlpGuard({ threshold: 1.5 })).toThrow(RangeError);
  });

  it('respects the engine entity filter', () => {
    const guard = new DlpGuard({ engine: new DlpEngine({ entities: ['CREDIT_CARD'] }) });
    expect(guard.inspect(chat(`mail ${EMAIL}, card ${CARD}`)).request.messages[0]!.content).toBe(
      `mail ${EMAIL}, card <CREDIT_CARD_1>`,
    );
  });

  it('reports counts and the action to onFindings, once per request with findings', () => {
    for (const action of ['redact', 'block', 'log'] as DlpAction[]) {
      const calls: unknown[] = [];
      const guard = new DlpGuard({ action, onFindings: (counts, a) => calls.push([counts, a]) });
      guard.inspect(chat(`mail ${EMAIL}`, `card ${CARD} and ${EMAIL}`));
      guard.inspect(chat('nothing here'));
      expect(calls).toEqual([[{ EMAIL_ADDRESS: 2, CREDIT_CARD: 1 }, action]]);
    }
  });

  it('does not fail a request when onFindings throws', () => {
    const guard = new DlpGuard({
      onFindings: () => {
        throw new Error('metrics down');
      },
    });
    expect(guard.inspect(chat(`mail ${EMAIL}`)).request.messages[0]!.content).toBe('mail <EMAIL_ADDRESS_1>');
  });

  it('screen: records counts on the request context, throws in block mode, returns the request to send', () => {
    const locals: { dlpFindings?: Record<string, number> } = {};
    const sent = new DlpGuard().screen(chat(`mail ${EMAIL}`), locals);
    expect(sent.messages[0]!.content).toBe('mail <EMAIL_ADDRESS_1>');
    expect(locals.dlpFindings).toEqual({ EMAIL_ADDRESS: 1 });

    const blockedLocals: Record<string, unknown> = {};
    expect(() => new DlpGuard({ action: 'block' }).screen(chat(`card ${CARD}`), blockedLocals)).toThrow(
      PiiDetectedError,
    );
    expect(blockedLocals.dlpFindings).toEqual({ CREDIT_CARD: 1 });
  });

  it('redacts secrets so that only the credential is replaced', () => {
    const outcome = new DlpGuard().inspect(
      chat('curl -H "Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543" -d key=AKIAIOSFODNN7EXAMPLE'),
    );
    expect(outcome.request.messages[0]!.content).toBe(
      'curl -H "Authorization: Bearer <BEARER_TOKEN_1>" -d key=<CLOUD_ACCESS_KEY_1>',
    );
  });

  it('scans text parts, tool-call arguments and tool results, and leaves image parts alone', () => {
    const image = { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    const request: ChatRequest = {
      ...chat('x'),
      messages: [
        { role: 'user', content: [{ type: 'text', text: `mail ${EMAIL}` }, image] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'send', arguments: `{"to":"${EMAIL}"}` } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: `sent to ${EMAIL}` },
      ],
    };
    const outcome = new DlpGuard().inspect(request);
    expect(outcome.findings).toEqual({ EMAIL_ADDRESS: 3 });
    expect(outcome.request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'mail <EMAIL_ADDRESS_1>' }, image] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'send', arguments: '{"to":"<EMAIL_ADDRESS_1>"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sent to <EMAIL_ADDRESS_1>' },
    ]);
    // The redacted arguments are still the JSON the model wrote.
    const call = outcome.request.messages[1];
    expect(call?.role === 'assistant' && JSON.parse(call.tool_calls?.[0]?.function.arguments ?? '')).toEqual({
      to: '<EMAIL_ADDRESS_1>',
    });
  });

  it('scans every other field that reaches a provider or a cache key: stop, names, refusals, user, metadata, tool descriptions', () => {
    const request: ChatRequest = {
      ...chat('x'),
      messages: [
        { role: 'system', content: 'be brief', name: 'ops+jane.doe@example.com' },
        { role: 'user', content: 'hi', name: EMAIL },
        { role: 'assistant', content: null, refusal: `I cannot call +44 20 7946 0958` },
      ],
      stop: [`END ${EMAIL}`, '###'],
      user: EMAIL,
      metadata: { customer: OTHER_EMAIL, tier: 'gold' },
      tools: [{ type: 'function', function: { name: 'notify', description: `Notify ${OTHER_EMAIL}` } }],
    };
    const outcome = new DlpGuard().inspect(request);
    expect(outcome.findings).toEqual({ EMAIL_ADDRESS: 6, PHONE_NUMBER: 1 });
    const sent = outcome.request;
    // Names keep identifier characters only, as providers require.
    expect(sent.messages.map((m) => ('name' in m ? m.name : undefined))).toEqual([
      'EMAIL_ADDRESS_1',
      'EMAIL_ADDRESS_2',
      undefined,
    ]);
    expect(sent.messages[2]).toMatchObject({ refusal: 'I cannot call <PHONE_NUMBER_1>' });
    expect(sent.stop).toEqual(['END <EMAIL_ADDRESS_2>', '###']);
    expect(sent.user).toBe('<EMAIL_ADDRESS_2>');
    expect(sent.metadata).toEqual({ customer: '<EMAIL_ADDRESS_3>', tier: 'gold' });
    expect(sent.tools?.[0]?.function).toEqual({ name: 'notify', description: 'Notify <EMAIL_ADDRESS_3>' });
    expect(JSON.stringify(sent)).not.toMatch(/jane|example\.(com|org)|7946/);
  });
});
