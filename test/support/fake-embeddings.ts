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
  'a an the is are was were be of to in on at for by with and or what whats which who how do does did me tell please its it this that i you your my can could would should will about give explain'.split(
    ' ',
  ),
);
const NEGATIONS = new Set([
  'not',
  'no',
  'never',
  'none',
  'nothing',
  'nobody',
  'neither',
  'nor',
  'nowhere',
  'cannot',
  'without',
]);

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
  const { model, input, dimensions } = body as { model?: unknown; input?: unknown; dimensions?: unknown };
  if (typeof model !== 'string') return "'model' is required.";
  const texts = typeof input === 'string' ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0 || !texts.every((t) => typeof t === 'string')) {
    return "'input' must be a string or a non-empty array of strings.";
  }
  const tokens = texts.reduce((sum, t: string) => sum + t.split(/\s+/).filter(Boolean).length, 0);
  return {
    object: 'list',
    model,
    data: texts.map((text: string, index) => ({
      object: 'embedding',
      index,
      embedding: fakeEmbedding(text, typeof dimensions === 'number' ? dimensions : undefined),
    })),
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

/**
 * Gemini's `models/{model}:embedContent` (one `content`) and
 * `:batchEmbedContents` (`requests`, each naming `models/{model}`) replies,
 * or a message for a 400; `outputDimensionality` sets the size.
 */
export function geminiEmbeddingsReply(
  model: string,
  method: 'embedContent' | 'batchEmbedContents',
  body: unknown,
): object | string {
  if (typeof body !== 'object' || body === null) return 'The body is not JSON.';
  const textOf = (entry: unknown): string | undefined => {
    const parts = (entry as { content?: { parts?: Array<{ text?: unknown }> } } | null)?.content?.parts;
    if (!Array.isArray(parts) || parts.length === 0 || !parts.every((p) => typeof p.text === 'string'))
      return undefined;
    return parts.map((p) => p.text as string).join(' ');
  };
  const values = (entry: unknown, text: string) => {
    const dims = (entry as { outputDimensionality?: unknown }).outputDimensionality;
    return { values: fakeEmbedding(text, typeof dims === 'number' ? dims : undefined) };
  };
  if (method === 'embedContent') {
    const text = textOf(body);
    return text === undefined
      ? '* EmbedContentRequest.content: contents must have at least one part with text'
      : { embedding: values(body, text) };
  }
  const requests = (body as { requests?: unknown }).requests;
  if (!Array.isArray(requests) || requests.length === 0)
    return '* BatchEmbedContentsRequest.requests: at least one request is required';
  const embeddings = [];
  for (const [i, entry] of requests.entries()) {
    if ((entry as { model?: unknown }).model !== `models/${model}`)
      return `* BatchEmbedContentsRequest.requests[${i}].model: must be models/${model}`;
    const text = textOf(entry);
    if (text === undefined)
      return `* BatchEmbedContentsRequest.requests[${i}].content: contents must have at least one part with text`;
    embeddings.push(values(entry, text));
  }
  return { embeddings };
}
