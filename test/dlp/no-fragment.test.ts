import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../src/chat/types.ts';
import { DlpGuard } from '../../src/dlp/dlp-guard.ts';
import { DlpEngine } from '../../src/dlp/engine.ts';
import { ENTITY_TYPES } from '../../src/dlp/entities.ts';
import { generateHoldoutSet } from './support/holdout-set.ts';
import * as v from './support/holdout-values.ts';

/**
 * Never a fragment: a detected value is replaced whole (extension, country
 * code, every group, the whole internationalised local part), never cut
 * where a pattern happened to stop.
 */
const engine = new DlpEngine();

describe('redaction never leaves a fragment of a detected value', () => {
  // The default types; and every type, checked on places, organisations, addresses and birth dates
  // (a name's span may stop at a particle or a comma: `de Vries`, `Mukendi, Olga`).
  const places = new Set(['LOCATION', 'ORGANIZATION', 'STREET_ADDRESS', 'DATE_OF_BIRTH']);
  for (const [types, scanner, minimum] of [
    ['default types', engine, 1500],
    ['every type', new DlpEngine({ entities: ENTITY_TYPES }), 600],
  ] as const) {
    for (const split of ['dev', 'test'] as const) {
      it(`${types}: every labelled value the engine touches in the held-out ${split} split is covered whole by one finding`, () => {
        let touched = 0;
        for (const sample of generateHoldoutSet({ split })) {
          const findings = scanner.analyze(sample.text);
          for (const gold of sample.gold) {
            if (scanner !== engine && !places.has(gold.entity)) continue;
            const hits = findings.filter((f) => f.start < gold.end && gold.start < f.end);
            if (hits.length === 0) continue;
            touched++;
            const whole = hits.some((f) => f.start <= gold.start && f.end >= gold.end);
            expect(
              whole,
              `${gold.entity} ${JSON.stringify(sample.text.slice(gold.start, gold.end))} in ${JSON.stringify(sample.text)}`,
            ).toBe(true);
          }
        }
        expect(touched).toBeGreaterThan(minimum);
      });
    }
  }

  const makers: Record<string, (r: v.Rng) => v.Piece> = {
    email: v.email,
    obfuscated: v.obfuscatedEmail,
    phone: (r) => v.phone(r),
    card: v.card,
    iban: v.iban,
    key: v.apiKey,
    password: v.passwordPiece,
  };
  for (const [name, make] of Object.entries(makers)) {
    it(`${name}: the redacted text keeps no three characters of the value`, () => {
      const r = new v.Rng(404);
      const guard = new DlpGuard();
      let detected = 0;
      const runs = 300;
      for (let i = 0; i < runs; i++) {
        const piece = make(r);
        const span = piece.spans[0]!;
        const value = piece.text.slice(span.start, span.end);
        // Mail words lift the lower-scored spellings (national phones, "at"/"dot" e-mails), as in real text.
        const text = `phone / email → ${piece.text} ←`;
        const request: ChatRequest = {
          model: 'm',
          n: 1,
          stream: false,
          include_usage: false,
          messages: [{ role: 'user', content: text }],
        };
        const sent = guard.inspect(request).request.messages[0]!.content as string;
        if (sent === text) continue;
        detected++;
        const left = sent.replace(/<[A-Z_]+_\d+>/g, '');
        const local = span.entity === 'EMAIL_ADDRESS' ? value.split(/@| at | \[at\] |\(at\)/i)[0]! : value;
        // What the text holds besides the value ("password=" around a password) may stay.
        const around = `phone / email → ${piece.text.slice(0, span.start)} ${piece.text.slice(span.end)} ←`;
        for (let k = 0; k + 3 <= local.length; k++) {
          const fragment = local.slice(k, k + 3);
          if (/\s/.test(fragment) || around.includes(fragment)) continue;
          expect(left, `${JSON.stringify(value)} -> ${JSON.stringify(sent)}`).not.toContain(fragment);
        }
      }
      expect(detected / runs, `${name} detected`).toBeGreaterThanOrEqual(0.9);
    });
  }
});
