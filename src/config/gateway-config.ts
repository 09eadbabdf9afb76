import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { defaultFormatFor } from '../providers/registry.ts';
import type { WireFormat } from '../providers/types.ts';
import { resolveRouting, routingSchema, type RoutingConfig } from './routing-config.ts';
import { priceTableSchema, type PriceTable } from '../usage/price-table.ts';
import { buildModelAliases, modelAliasesSchema, type ModelAliases } from './model-aliases.ts';

/**
 * config.yaml: providers and their models. Parsed with `yaml`, validated with
 * zod; a bad file is a {@link ConfigError} whose message names the field.
 */

const providerSchema = z.strictObject({
  /** Provider name, e.g. `provider_a`. */
  name: z.string().regex(/^[a-z0-9_-]{1,64}$/, 'must be 1-64 characters of a-z, 0-9, _ or -'),
  /** Environment variable holding the upstream key. */
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
  /** Model ids served by this provider; another provider entry may serve the same id (one more deployment of it). */
  models: z.array(z.string().min(1).max(256)).min(1),
  /**
   * Embedding models served by this provider at `POST /v1/embeddings` (its
   * format's embeddings API: OpenAI `/embeddings`, Gemini `embedContent`).
   * They are not chat models. @defaultValue none
   */
  embedding_models: z.array(z.string().min(1).max(256)).default([]),
  /** Share of a model's traffic this entry takes among the entries serving the same model. @defaultValue 1 */
  weight: z.int().min(1).max(1_000).default(1),
  /** Wire format; defaults by name for provider_a (openai), provider_b (gemini), provider_c (anthropic). */
  format: z.enum(['openai', 'gemini', 'anthropic']).optional(),
  /** Upstream base URL; default: the provider's public API. */
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  /** Gateway model id -> upstream model id, for ids that differ upstream. @defaultValue same id */
  upstream_models: z.record(z.string(), z.string().min(1)).optional(),
  /** Time to the upstream's first byte (whole body when not streamed), ms. @defaultValue 60000 */
  timeout_ms: z.int().min(100).max(600_000).default(60_000),
  /** Longest silence between two streamed chunks, ms. @defaultValue 30000 */
  stream_idle_timeout_ms: z.int().min(100).max(600_000).default(30_000),
  /** Longest time a job may wait in the queue before a worker starts it, ms. @defaultValue 30000 */
  queue_timeout_ms: z.int().min(100).max(3_600_000).default(30_000),
  /** Retries of 429, 5xx and connection errors before the first token. @defaultValue 2 */
  max_retries: z.int().min(0).max(10).default(2),
  /** Concurrent jobs per worker process. @defaultValue 64 */
  concurrency: z.int().min(1).max(10_000).default(64),
  /** Upstream call rate shared by all workers of this provider (BullMQ limiter). @defaultValue none */
  rate_limit: z.strictObject({ max: z.int().min(1), duration_ms: z.int().min(10) }).optional(),
  /** Waiting jobs above which the API answers 503 instead of queuing more. @defaultValue 10000 */
  max_queue_depth: z.int().min(1).default(10_000),
  /**
   * Drop request parameters this provider's format cannot honour (e.g. `seed`
   * for Anthropic) instead of answering 400; the reply names them in
   * `X-Gateway-Dropped-Params`. @defaultValue false
   */
  drop_unsupported_params: z.boolean().default(false),
  /**
   * How `POST /v1/responses` reaches this provider: `translate` (through the
   * canonical chat request, any format) or `native` (an OpenAI-format
   * upstream's own `/responses`, forwarded as sent: reasoning items,
   * encrypted reasoning, its own stored responses). @defaultValue 'translate'
   */
  responses_api: z.enum(['translate', 'native']).default('translate'),
  /** Let the semantic cache answer for this provider's models (the exact cache always may). @defaultValue true */
  semantic_cache: z.boolean().default(true),
  /** Per model of this provider: semantic cache on or off, overriding `semantic_cache`. @defaultValue none */
  semantic_cache_by_model: z.record(z.string(), z.boolean()).optional(),
});

const configSchema = z.strictObject({
  providers: z.array(providerSchema).min(1),
  /** Fallback models and cooldown of failing deployments (src/config/routing-config.ts). */
  routing: routingSchema.optional(),
  /** Model id -> USD per million prompt / completion tokens, for spend and key budgets. @defaultValue none (cost 0) */
  prices: priceTableSchema,
  /** Other names for configured models: exact names and `*` / `?` patterns -> model id (src/config/model-aliases.ts). @defaultValue none */
  model_aliases: modelAliasesSchema,
});

/** One provider entry after validation and defaults. */
export type ProviderConfig = Omit<z.output<typeof providerSchema>, 'format' | 'base_url'> & {
  format: WireFormat;
  base_url?: string;
};

/** The validated configuration with its model index. */
/** Whether the semantic cache may answer for `model` on `provider`: the model's switch, else the provider's. */
export function semanticCacheOn(provider: ProviderConfig, model: string): boolean {
  return provider.semantic_cache_by_model?.[model] ?? provider.semantic_cache;
}

export interface GatewayConfig {
  providers: readonly ProviderConfig[];
  /** model id -> the first provider entry serving it. */
  modelIndex: ReadonlyMap<string, ProviderConfig>;
  /** model id -> every provider entry serving it (its deployments), in config order. */
  deployments: ReadonlyMap<string, readonly ProviderConfig[]>;
  /** Fallbacks and cooldown. */
  routing: RoutingConfig;
  /** provider name -> provider entry. */
  providerIndex: ReadonlyMap<string, ProviderConfig>;
  /** Prices per model (`prices`), for key spend and budgets. */
  prices: PriceTable;
  /** embedding model id -> the first provider entry serving it (`embedding_models`). */
  embeddingIndex: ReadonlyMap<string, ProviderConfig>;
  /** `model_aliases`: other names for configured models (the Messages door resolves them). */
  aliases?: ModelAliases;
  /** When it was loaded. */
  loadedAt: Date;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Validates an already parsed document. */
export function validateConfig(doc: unknown, source = 'config.yaml'): GatewayConfig {
  const parsed = configSchema.safeParse(doc);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
      return `${path}: ${issue.message}`;
    });
    throw new ConfigError(`${source} is invalid: ${lines.join('; ')}`);
  }
  const providers: ProviderConfig[] = [];
  const modelIndex = new Map<string, ProviderConfig>();
  const deployments = new Map<string, ProviderConfig[]>();
  const providerIndex = new Map<string, ProviderConfig>();
  const embeddingIndex = new Map<string, ProviderConfig>();
  parsed.data.providers.forEach((entry, i) => {
    const format = entry.format ?? defaultFormatFor(entry.name);
    if (!format) {
      throw new ConfigError(
        `${source} is invalid: providers.${i}.format: required for provider '${entry.name}' (openai, gemini or anthropic)`,
      );
    }
    if (providerIndex.has(entry.name)) {
      throw new ConfigError(`${source} is invalid: providers.${i}.name: duplicate provider '${entry.name}'`);
    }
    if (entry.responses_api === 'native' && format !== 'openai') {
      throw new ConfigError(
        `${source} is invalid: providers.${i}.responses_api: 'native' needs an openai-format provider ('${entry.name}' is ${format}); the others are translated`,
      );
    }
    const provider: ProviderConfig = { ...entry, format };
    if (entry.base_url !== undefined) provider.base_url = entry.base_url.replace(/\/+$/, '');
    for (const model of Object.keys(entry.semantic_cache_by_model ?? {})) {
      if (!entry.models.includes(model)) {
        throw new ConfigError(
          `${source} is invalid: providers.${i}.semantic_cache_by_model: '${model}' is not one of this provider's models`,
        );
      }
    }
    for (const model of entry.models) {
      const served = deployments.get(model);
      if (served?.at(-1) === provider)
        throw new ConfigError(`${source} is invalid: providers.${i}.models: lists '${model}' twice`);
      if (served) served.push(provider);
      else deployments.set(model, [provider]);
      if (!modelIndex.has(model)) modelIndex.set(model, provider);
    }
    for (const model of entry.embedding_models) {
      if (entry.models.includes(model))
        throw new ConfigError(
          `${source} is invalid: providers.${i}.embedding_models: '${model}' is also in models; a model is either a chat or an embedding model`,
        );
      if (!embeddingIndex.has(model)) embeddingIndex.set(model, provider);
    }
    providers.push(provider);
    providerIndex.set(entry.name, provider);
  });
  const names = new Map([...deployments].map(([model, entries]) => [model, entries.map((p) => p.name)]));
  const routing = resolveRouting(parsed.data.routing, names);
  if (typeof routing === 'string') throw new ConfigError(`${source} is invalid: ${routing}`);
  const aliases = buildModelAliases(parsed.data.model_aliases, new Set(deployments.keys()));
  if (typeof aliases === 'string') throw new ConfigError(`${source} is invalid: ${aliases}`);
  return {
    providers,
    modelIndex,
    providerIndex,
    deployments,
    routing,
    prices: parsed.data.prices,
    embeddingIndex,
    aliases,
    loadedAt: new Date(),
  };
}

/** Parses YAML text and validates it. */
export function parseConfig(text: string, source = 'config.yaml'): GatewayConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${source} is not valid YAML: ${(err as Error).message}`);
  }
  return validateConfig(doc, source);
}

/** Reads and validates the file at `path`. */
export async function loadConfigFile(path: string): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseConfig(text, path);
}
