/**
 * Deterministic embeddings for tests: what the fake OpenAI upstream's
 * `POST /v1/embeddings` answers (see `fake-upstream.ts`).
 *
 * The vector is a bag of content words hashed into {@link FAKE_EMBEDDING_DIMS}
 * signed buckets, then normalized. So prompts with the same content words in
 * another order or phrasing ("What is the capital of France?" / "France: its
 * capital?") get similarity 1, and unrelated prompts about 0. Digits, quoted
 * strings and negation words are left out on purpose: prompts that differ only
 * by them embed identically, so a test proves that the semantic cache's
 * guards, not the embedding, keep them apart.
 */

export const FAKE_EMBEDDING_DIMS = 256;

const STOP_WORDS = new Set(
  'a an the is are was were be of to in on at for by with and or what whats which who how do does did me tell please its it this that i you your my can could would should will about give explain'.split(' '),
);
const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nothing', 'nobody', 'neither', 'nor', 'nowhere', 'cannot', 'without']);

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The content words the fake embedding is made of. */
export function contentWords(text: string): string[] {
  const unquoted = text.replace(/"[^"]*"|'[^']*'|`[^`]*`|“[^”]*”/g, ' ');
  return (unquoted.toLowerCase().match(/[a-z]+(?:'[a-z]+)?/g) ?? []).filter(
    (word) => !STOP_WORDS.has(word) && !NEGATIONS.has(word) && !word.endsWith("n't") && !word.endsWith("'s"),
  );
}

export function fakeEmbedding(text: string, dims = FAKE_EMBEDDING_DIMS): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const word of contentWords(text)) {
    const hash = fnv1a(word);
    vector[hash % dims] = (vector[hash % dims] as number) + (hash & 0x80000000 ? -1 : 1);
  }
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  // An empty text still gets a unit vector, as real models give one.
  if (norm === 0) {
    vector[0] = 1;
    return vector;
  }
  return vector.map((v) => v / norm);
}

/** The OpenAI embeddings response for a request body, or a message for a 400. */
export function embeddingsReply(body: unknown): object | string {
  if (typeof body !== 'object' || body === null) return 'The body is not JSON.';
  const { model, input } = body as { model?: unknown; input?: unknown };
  if (typeof model !== 'string') return "'model' is required.";
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((t) => typeof t === 'string')) {
    return "'input' must be a string or a non-empty array of strings.";
  }
  const tokens = texts.reduce((sum, t: string) => sum + t.split(/\s+/).filter(Boolean).length, 0);
  return {
    object: 'list',
    model,
    data: texts.map((text: string, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text) })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
