import { describe, expect, it } from 'vitest';
import { adapterFor, defaultFormatFor, isWireFormat } from '../../src/providers/registry.ts';

describe('provider registry', () => {
  it.each(['openai', 'gemini', 'anthropic'] as const)(
    'returns the %s adapter, the same object every time',
    (format) => {
      const adapter = adapterFor(format);
      expect(adapter.format).toBe(format);
      expect(adapterFor(format)).toBe(adapter);
    },
  );

  it('knows the default format of the three default providers only', () => {
    expect(defaultFormatFor('provider_a')).toBe('openai');
    expect(defaultFormatFor('provider_b')).toBe('gemini');
    expect(defaultFormatFor('provider_c')).toBe('anthropic');
    expect(defaultFormatFor('provider_d')).toBeUndefined();
    expect(defaultFormatFor('toString')).toBeUndefined();
  });

  it('recognizes wire format names', () => {
    expect(isWireFormat('gemini')).toBe(true);
    expect(isWireFormat('bedrock')).toBe(false);
    expect(isWireFormat(undefined)).toBe(false);
  });

  it('has fresh stream decoders per call', () => {
    const adapter = adapterFor('anthropic');
    const a = adapter.createStreamDecoder();
    a.push({ event: 'message_stop', data: '{"type":"message_stop"}' });
    expect(a.finished).toBe(true);
    expect(adapter.createStreamDecoder().finished).toBe(false);
  });
});
