import type { ChatRequest } from '../src/chat/types.ts';
import { DlpGuard } from '../src/dlp/dlp-guard.ts';
import { DlpEngine } from '../src/dlp/engine.ts';
import { ANALYZER_ONLY_ENTITIES, ENTITY_TYPES, OPT_IN_ENTITIES, type EntityType } from '../src/dlp/entities.ts';
import { percentiles } from './support/load.ts';

/**
 * Cost of DLP scanning on the request path (the API process scans every
 * message before the cache and the queue). Budget: a typical 2 KB prompt
 * well under 1 ms. Times single calls with performance.now() after a warm-up
 * and reports p50/p99/max in microseconds.
 *
 * BENCH_SMOKE=1: fewer iterations. BENCH_DLP_ITERATIONS overrides.
 */
const smoke = process.env.BENCH_SMOKE === '1';
const iterations = Number(process.env.BENCH_DLP_ITERATIONS ?? (smoke ? 2_000 : 20_000));

const PROSE = [
  'Please summarise the following meeting notes for the quarterly review. ',
  'We discussed the Q3 roadmap, the migration to the new billing system (ticket 4512, due 2024-10-12) and the hiring plan for 2025. ',
  'Revenue grew 12.5% to $1,234,567.89 while costs stayed at 3.2 million; the team shipped v2.14.3 and fixed 37 bugs. ',
  'Action items: update the runbook in section 4.2.1, rotate the staging certificates, and review order #20240312-0042 with finance. ',
  'The API latency p99 went from 420 ms to 310 ms after the cache change; error rate is 0.02%. See https://wiki.example.com/q3 for charts. ',
  'In code: `const total = items.reduce((a, b) => a + b.price * b.qty, 0); if (total > 10_000) applyDiscount(0.15);` ',
];

function prompt(targetBytes: number, pii: readonly string[]): string {
  let text = '';
  let i = 0;
  while (text.length < targetBytes) {
    text += PROSE[i % PROSE.length];
    if (i < pii.length) text += `${pii[i]} `;
    i++;
  }
  return text.slice(0, targetBytes);
}

const PII = [
  'Contact jane.doe@example.com or call (415) 555-2671.',
  'Card 4111 1111 1111 1111 exp 04/27.',
  'Wire to DE89 3704 0044 0532 0130 00.',
  'Login from 203.0.113.42 failed.',
];

/** A 2 KB prompt full of numbers: phone numbers in every layout, a table, and numbers that are not phones. */
const NUMBERS = [
  '| name | team | office | Phone |\n|---|---|---|---|\n| Ana | ops | B2 | 612 34 56 78 |\n| Raj | dev | C4 | 98765 43210 |\n| Li | qa | A1 | 138 0013 8000 |',
  'Call +44 20 7946 0958, 447911123456 or (415) 555-2671 ext. 12; the desk is 415-555-2671x123 and Berlin is 030 123456.',
  'Order number 4155552671 shipped; invoice 2024-0042-7781 of 1,234.56 EUR; tracking 9400 1000 0000 0000 0000 00.',
  'Meeting 2024-03-15 10:30, room 4.2.1, build 2024.10.12, ISBN 978-3-16-148410-0, ZIP 94105-1234, ts 1718000000000.',
  'Her mobile: 0171 2345678; office 01 42 68 53 00; São Paulo (11) 96123-4567; Mumbai +91 98765 43210; Tokyo 03-1234-5678.',
];

const clean2k = prompt(2048, []);
const numbers2k = prompt(2048, [...NUMBERS, ...NUMBERS]);
const pii2k = prompt(2048, PII);
const doc64k = prompt(64 * 1024, PII);

function time(label: string, fn: () => unknown, n = iterations): string {
  for (let i = 0; i < Math.min(1000, n); i++) fn();
  const samples: number[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn();
    samples[i] = (performance.now() - t) * 1000;
  }
  const p = percentiles(samples);
  return `| ${label} | ${n} | ${p.p50.toFixed(1)} | ${p.p90.toFixed(1)} | ${p.p99.toFixed(1)} | ${p.max.toFixed(0)} |`;
}

const engine = new DlpEngine();
// The opt-in types (DLP_ENTITIES): their dictionaries and layouts cost a scan of every capitalised word.
const allEngine = new DlpEngine({ entities: ENTITY_TYPES });
const withOptIn = (entity: EntityType) =>
  new DlpEngine({ entities: [...ENTITY_TYPES.filter((e) => !OPT_IN_ENTITIES.includes(e)), entity] });
const guard = new DlpGuard({ engine, action: 'redact' });
const namesPii2k = prompt(2048, [
  ...PII,
  'Dear Ms. Okafor, Jennifer Lopez from the Hamburg office will call.',
  'She was born on 12 March 1985 and lives at 1234 N Maple Avenue, Apt 5B, Springfield, IL 62704; she works for Nordlicht Logistik GmbH.',
]);

/** A streamed reply of ~2 KB in 4-character chunks through DLP_SCAN_REPLIES + DLP_RESTORE: the cost per reply. */
function streamReply(): void {
  const { reply } = new DlpGuard({ engine, scanReplies: true, restore: true }).screenExchange(
    { ...chat, stream: true },
    {},
  );
  for (let i = 0; i < pii2k.length; i += 4) {
    reply!.chunk(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { content: pii2k.slice(i, i + 4) }, finish_reason: null, logprobs: null }],
      }),
    );
  }
  reply!.flush();
}
const chat: ChatRequest = {
  model: 'a-4o',
  stream: false,
  include_usage: false,
  n: 1,
  messages: [
    { role: 'system', content: 'You are a helpful assistant for the finance team. Answer briefly.' },
    { role: 'user', content: pii2k },
    { role: 'assistant', content: prompt(512, []) },
    { role: 'user', content: 'Draft a reply to jane.doe@example.com confirming the transfer.' },
  ],
};

const rows = [
  time('2 KB prompt, no personal data', () => engine.analyze(clean2k)),
  time('2 KB prompt, 4 findings (email, phone, card, IBAN, IP)', () => engine.analyze(pii2k)),
  time('2 KB prompt full of numbers (phones in every layout, a table, look-alikes)', () => engine.analyze(numbers2k)),
  time('DlpGuard.inspect, 4 messages (~2.6 KB), redact', () => guard.inspect(chat)),
  time('64 KB document, 4 findings', () => engine.analyze(doc64k), Math.max(100, Math.floor(iterations / 20))),
  time('2 KB prompt with a name, places, an address, a birth date, default types', () => engine.analyze(namesPii2k)),
  time('2 KB prompt, every type incl. the opt-in ones (DLP_ENTITIES)', () => allEngine.analyze(namesPii2k)),
  ...OPT_IN_ENTITIES.filter((entity) => !(ANALYZER_ONLY_ENTITIES as readonly EntityType[]).includes(entity)).map(
    (entity) => {
      const one = withOptIn(entity);
      return time(`2 KB prompt, default types + ${entity}`, () => one.analyze(namesPii2k));
    },
  ),
  time(
    '2 KB streamed reply, 512 chunks, DLP_SCAN_REPLIES + DLP_RESTORE',
    streamReply,
    Math.max(50, Math.floor(iterations / 100)),
  ),
];

/** CPU time per call (user + system, process.cpuUsage over n calls): wall-clock percentiles on a shared machine count its queue too. */
function cpuPerCall(fn: () => unknown, n = Math.max(500, Math.floor(iterations / 4))): string {
  for (let i = 0; i < Math.min(500, n); i++) fn();
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const used = process.cpuUsage(before);
  return ((used.user + used.system) / n).toFixed(1);
}
const cpuRows = [
  `| 2 KB prompt, no personal data | ${cpuPerCall(() => engine.analyze(clean2k))} |`,
  `| 2 KB prompt full of numbers | ${cpuPerCall(() => engine.analyze(numbers2k))} |`,
];

const findings = engine.analyze(pii2k).map((f) => f.entity);
process.stdout.write(`DLP scan cost (microseconds per call), Node ${process.version}\n\n`);
process.stdout.write('| scenario | calls | p50 µs | p90 µs | p99 µs | max µs |\n|---|---:|---:|---:|---:|---:|\n');
process.stdout.write(`${rows.join('\n')}\n\nfindings in the 2 KB PII prompt: ${findings.join(', ')}\n`);
process.stdout.write(
  `\nCPU time per call, default types\n\n| scenario | CPU µs |\n|---|---:|\n${cpuRows.join('\n')}\n`,
);
