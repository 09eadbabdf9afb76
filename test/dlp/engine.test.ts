import { describe, expect, it } from 'vitest';
import { ContextScorer } from '../../src/dlp/context-scoring.ts';
import { DlpEngine } from '../../src/dlp/engine.ts';
import { resolveOverlaps } from '../../src/dlp/overlap.ts';
import type { Candidate, Recognizer } from '../../src/dlp/recognizer.ts';
import { PatternRecognizer } from '../../src/dlp/recognizers/pattern-recognizer.ts';
import { PhoneNumberRecognizer } from '../../src/dlp/recognizers/phone-number.ts';

const candidate = (
  start: number,
  end: number,
  score: number,
  entity: Candidate['entity'] = 'US_SSN',
  recognizer = 'r',
): Candidate => ({
  entity,
  start,
  end,
  score,
  key: `${start}`,
  recognizer,
});

describe('context scoring', () => {
  const scorer = new ContextScorer({ positive: ['ssn', 'phone*'], negative: ['order'] });
  const adjust = (text: string, value: string, score = 0.5) => {
    const start = text.indexOf(value);
    return scorer.adjust(text, start, start + value.length, score);
  };

  it('adds 0.35 for a positive word among the five words before or two after', () => {
    expect(adjust('my ssn is 123', '123')).toBeCloseTo(0.85);
    expect(adjust('ssn one two three four 123', '123')).toBeCloseTo(0.85);
    expect(adjust('ssn one two three four five 123', '123')).toBe(0.5);
    expect(adjust('123 (my ssn)', '123')).toBeCloseTo(0.85);
    expect(adjust('123 is my ssn', '123')).toBe(0.5);
  });

  it('matches prefixes for words ending in *', () => {
    expect(adjust('phones: 123', '123')).toBeCloseTo(0.85);
  });

  it('subtracts 0.35 for a negative word right before, never further away', () => {
    expect(adjust('order 123', '123')).toBeCloseTo(0.15);
    expect(adjust('order no 123', '123')).toBeCloseTo(0.15);
    expect(adjust('order for the customer 123', '123')).toBe(0.5);
  });

  it('lets the nearest context word decide', () => {
    expect(adjust('ssn 1, order 123', '123')).toBeCloseTo(0.15);
    expect(adjust('order 1, ssn 123', '123')).toBeCloseTo(0.85);
  });

  it('clamps to [0, 1]', () => {
    expect(adjust('ssn 123', '123', 0.9)).toBe(1);
    expect(adjust('order 123', '123', 0.1)).toBe(0);
  });

  it('reads words of any script, in any case, as whole words', () => {
    const wide = new ContextScorer({ positive: ['teléfono', 'телефон', 'número*'], negative: ['commande'] });
    const score = (text: string) => {
      const start = text.indexOf('123');
      return wide.adjust(text, start, start + 3, 0.5);
    };
    expect(score('Teléfono: 123')).toBeCloseTo(0.85);
    expect(score('ТЕЛЕФОН 123')).toBeCloseTo(0.85);
    expect(score('123 (Números)')).toBeCloseTo(0.85);
    expect(score('commande 123')).toBeCloseTo(0.15);
    // Five words of other scripts between push the context word out of the window; a word does not end at an accent.
    expect(score('teléfono ünd ßé ça 名前 über 123')).toBe(0.5);
    expect(score('teléfono ünd ßé ça über 123')).toBeCloseTo(0.85);
    expect(score('teléfonos 123')).toBe(0.5);
  });
});

describe('overlap resolution', () => {
  it('keeps the higher score, then the longer span, then the earlier one', () => {
    expect(resolveOverlaps([candidate(0, 10, 0.5), candidate(5, 12, 0.9)])).toEqual([candidate(5, 12, 0.9)]);
    expect(resolveOverlaps([candidate(0, 5, 0.9), candidate(0, 22, 0.9, 'IBAN_CODE')])).toEqual([
      candidate(0, 22, 0.9, 'IBAN_CODE'),
    ]);
    expect(resolveOverlaps([candidate(4, 8, 0.9), candidate(0, 4, 0.9), candidate(2, 6, 0.9)])).toEqual([
      candidate(0, 4, 0.9),
      candidate(4, 8, 0.9),
    ]);
  });

  it('breaks a full tie by recognizer order', () => {
    const first = candidate(0, 10, 0.95, 'JWT', 'jwt');
    const second = candidate(0, 10, 0.95, 'BEARER_TOKEN', 'bearer');
    expect(resolveOverlaps([first, second])).toEqual([first]);
  });

  it('returns disjoint spans sorted by start', () => {
    const many = Array.from({ length: 200 }, (_, i) =>
      candidate((i * 7) % 500, ((i * 7) % 500) + 5 + (i % 9), (i % 10) / 10),
    );
    const kept = resolveOverlaps(many);
    for (let i = 1; i < kept.length; i++) expect(kept[i]!.start).toBeGreaterThanOrEqual(kept[i - 1]!.end);
    expect(kept.length).toBeGreaterThan(10);
  });
});

describe('DlpEngine', () => {
  const text = 'Mail jane@example.com, card 4111 1111 1111 1111, host 127.0.0.1, ssn 536 22 1234.';

  it('applies the threshold after context', () => {
    const entities = (threshold: number) => new DlpEngine().analyze(text, { threshold }).map((f) => f.entity);
    expect(entities(0.8)).toEqual(['EMAIL_ADDRESS', 'CREDIT_CARD', 'US_SSN']);
    expect(entities(0.2)).toEqual(['EMAIL_ADDRESS', 'CREDIT_CARD', 'IP_ADDRESS', 'US_SSN']);
    expect(entities(1)).toEqual(['EMAIL_ADDRESS', 'CREDIT_CARD']);
  });

  it('reports only the configured entity types', () => {
    const engine = new DlpEngine({ entities: ['CREDIT_CARD'] });
    expect(engine.analyze(text).map((f) => f.entity)).toEqual(['CREDIT_CARD']);
    expect([...engine.entities]).toEqual(['CREDIT_CARD']);
  });

  it('runs custom recognizers, with a captured value span', () => {
    const employeeId: Recognizer = new PatternRecognizer({
      name: 'employee-id',
      entity: 'API_KEY',
      patterns: [{ name: 'emp', regex: /EMP-(?<value>\d{6})/dg, score: 0.9 }],
    });
    const findings = new DlpEngine({ recognizers: [employeeId] }).analyze('badge EMP-123456 ok');
    expect(findings).toEqual([expect.objectContaining({ entity: 'API_KEY', start: 10, end: 16, score: 0.9 })]);
  });

  it('rejects a pattern without the g flag', () => {
    expect(
      () => new PatternRecognizer({ name: 'x', entity: 'API_KEY', patterns: [{ name: 'p', regex: /x/, score: 1 }] }),
    ).toThrow(/g flag/);
  });

  it('gives the same value the same key whatever its spelling', () => {
    const keys = new DlpEngine()
      .analyze('call (415) 555-2671 or +1 415 555 2671; card 4111-1111-1111-1111 = 4111111111111111')
      .map((f) => f.key);
    expect(keys).toEqual(['+14155552671', '+14155552671', '4111111111111111', '4111111111111111']);
  });

  it('finds values in national phone formats only for the configured regions', () => {
    const onlyUs = new DlpEngine({ recognizers: [new PhoneNumberRecognizer({ regions: ['US'] })] });
    expect(onlyUs.analyze('London 020 7946 0958')).toEqual([]);
    expect(onlyUs.analyze('London +44 20 7946 0958')).toHaveLength(1);
    expect(() => new PhoneNumberRecognizer({ regions: ['ZZ'] })).toThrow(/ZZ/);
  });

  it('handles empty text, unicode and adversarial inputs without error', () => {
    const engine = new DlpEngine();
    expect(engine.analyze('')).toEqual([]);
    expect(engine.analyze('Grüße, José — 📞 (415) 555-2671 ✉ josé@example.com').map((f) => f.entity)).toContain(
      'PHONE_NUMBER',
    );
    // Inputs that make naive patterns backtrack: long runs of local-part, digit, hex and base64 characters.
    const adversarial = [
      `${'a'.repeat(50_000)}@`,
      `${'1-'.repeat(20_000)}`,
      `${'1 '.repeat(20_000)}x`,
      `${'a:'.repeat(20_000)}`,
      `-----BEGIN PRIVATE KEY-----${'A'.repeat(50_000)}`,
      `Bearer ${'a'.repeat(50_000)}`,
      `${'DE89 '.repeat(10_000)}`,
      `${'eyJ'.repeat(10_000)}.eyJ.`,
    ];
    for (const input of adversarial) expect(Array.isArray(engine.analyze(input))).toBe(true);
  });
});
