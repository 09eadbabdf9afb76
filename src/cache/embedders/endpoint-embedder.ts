import { normalize } from '../vector-index.ts';
import { EmbeddingError, type Embedder } from './embedder.ts';

/** Options of {@link EndpointEmbedder}. */
export interface EndpointEmbedderOptions {
  /** Where the endpoint is, read per call so a config reload applies: base URL (no trailing slash) and key. */
  endpoint: () => { name: string; baseUrl: string; apiKey: string | undefined };
  /** Model sent in the body, e.g. `text-embedding-3-small`. */
  model: string;
  /** Per call, ms. @defaultValue 10000 */
  timeoutMs?: number;
  /** @defaultValue global `fetch` */
  fetch?: typeof fetch;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
}

/**
 * An OpenAI-compatible embeddings endpoint of a configured provider:
 * `POST {base_url}/embeddings` with `{model, input: [texts]}` and the
 * provider's key as a Bearer token. Vectors are normalized here, so any
 * endpoint works whatever it returns.
 */
export class EndpointEmbedder implements Embedder {
  readonly id: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;

  private readonly options: EndpointEmbedderOptions;

  constructor(options: EndpointEmbedderOptions) {
    this.options = options;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetchFn = options.fetch ?? fetch;
    this.id = `endpoint:${options.endpoint().name}:${options.model}`;
  }

  async ready(): Promise<void> {
    const { name, apiKey } = this.options.endpoint();
    if (!apiKey) throw new EmbeddingError(`the embeddings provider ${name} has no API key configured`);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const { name, baseUrl, apiKey } = this.options.endpoint();
    if (!apiKey) throw new EmbeddingError(`the embeddings provider ${name} has no API key configured`);
    let response: Response;
    try {
      response = await this.fetchFn(`${baseUrl}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ model: this.options.model, input: texts, encoding_format: 'float' }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new EmbeddingError(`the embeddings endpoint of ${name} is unreachable: ${(err as Error).name}`, {
        cause: err,
      });
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new EmbeddingError(`the embeddings endpoint of ${name} answered HTTP ${response.status}`);
    }
    let body: EmbeddingsResponse;
    try {
      body = (await response.json()) as EmbeddingsResponse;
    } catch (err) {
      throw new EmbeddingError(`the embeddings endpoint of ${name} sent a body that is not JSON`, { cause: err });
    }
    const data = Array.isArray(body.data) ? [...body.data] : [];
    if (data.length !== texts.length)
      throw new EmbeddingError(
        `the embeddings endpoint of ${name} returned ${data.length} vectors for ${texts.length} texts`,
      );
    data.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return data.map((item) => {
      const values = item.embedding;
      if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'number')) {
        throw new EmbeddingError(`the embeddings endpoint of ${name} returned a vector that is not a list of numbers`);
      }
      return normalize(Float32Array.from(values as number[]));
    });
  }

  async close(): Promise<void> {}
}
