import { faker } from '@faker-js/faker';

/**
 * The kinds of prompt the peer benchmark sends, each request a new one so no
 * cache can answer: what users send costs the gateway differently (the DLP
 * scan reads every digit run, the cache's canonical form treats code apart,
 * a long prompt costs the embedding and the scan in proportion).
 *
 * Prompts come from a fixed vocabulary and a cheap generator whose state runs
 * on across calls, never restarting: the load generator shares its core with
 * the upstream, and a prompt sent twice in one run would be an exact-cache hit.
 */
export interface PromptKind {
  /** Short name, for `BENCH_PROMPTS` and the tables. */
  name: string;
  /** What it is, for the tables. */
  label: string;
  /** A new prompt. */
  next(): string;
}

/** Options of {@link promptKinds}. */
export interface PromptKindOptions {
  /**
   * Where the word generator starts.
   * @defaultValue a random start, so two runs against one Redis do not repeat each other's prompts
   */
  seed?: number;
  /**
   * Words of the long prompt.
   * @defaultValue 2000
   */
  longWords?: number;
}

export function promptKinds(options: PromptKindOptions = {}): PromptKind[] {
  faker.seed(40);
  const vocabulary = Array.from(new Set(Array.from({ length: 6000 }, () => faker.word.sample()))).filter((w) =>
    /^[a-z]+$/.test(w),
  );
  let state = (options.seed ?? Math.floor(Math.random() * 2 ** 31)) >>> 0 || 1;
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state;
  };
  const word = () => vocabulary[next() % vocabulary.length] as string;
  const words = (n: number) => Array.from({ length: n }, word).join(' ');
  const digits = (n: number) => String(next() % 10 ** n).padStart(n, '0');
  const pad2 = (n: number) => String(n).padStart(2, '0');
  const date = () => `${2020 + (next() % 8)}-${pad2(1 + (next() % 12))}-${pad2(1 + (next() % 28))}`;
  const longWords = options.longWords ?? 2000;

  return [
    // About 30 tokens of English words, no digit: what the table was measured with.
    { name: 'plain', label: '~30 tokens, plain words', next: () => words(22) },
    {
      name: 'numbers',
      label: '~40 tokens, numbers and dates',
      next: () =>
        `${words(4)} order ${digits(6)} on ${date()} for ${digits(3)}.${digits(2)} dollars, ${words(3)} ${pad2(next() % 24)}:${pad2(next() % 60)} on ${pad2(1 + (next() % 12))}/${pad2(1 + (next() % 28))}/${2020 + (next() % 8)}, ref ${digits(4)}-${digits(4)} ${words(3)}`,
    },
    {
      name: 'code',
      label: '~60 tokens, with code',
      next: () => {
        const fn = `${word()}_${word()}`;
        return `${words(5)}:\n\`\`\`ts\nfunction ${fn}(items: number[]): number {\n  const ${word()} = items.filter((x) => x > ${next() % 100});\n  return items.reduce((a, b) => a + b * ${next() % 1000}, 0);\n}\n\`\`\`\n${words(6)}?`;
      },
    },
    { name: 'long', label: `~${longWords.toLocaleString('en-US')} words`, next: () => words(longWords) },
  ];
}
