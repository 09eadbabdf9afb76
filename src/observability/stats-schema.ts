import { z } from 'zod';

/**
 * The statistics record of `GET /stats` (spec: "Statistics record"). The
 * route's reply is typed from this schema and the OpenAPI document is
 * generated from it, so the two cannot drift.
 */

export const cacheLookupStatsSchema = z
  .object({
    hits: z.int().min(0).describe('Lookups answered from this cache.'),
    misses: z.int().min(0).describe('Lookups this cache could not answer.'),
    hit_rate: z.number().min(0).max(1).describe('hits / (hits + misses); 0 before the first lookup.'),
  })
  .meta({ id: 'CacheLookupStats' });

export const providerStatsSchema = z
  .object({
    requests: z.int().min(0).describe('Chat completions dispatched to this provider (cache hits excluded).'),
    tokens: z.int().min(0).describe('Prompt + completion tokens the provider reported.'),
    avg_latency: z
      .number()
      .min(0)
      .describe('Mean time the provider took to produce a whole reply, seconds (queue wait excluded).'),
  })
  .meta({ id: 'ProviderStats' });

export const topUserSchema = z
  .object({
    api_key: z.string().describe('Masked key: first 6 and last 4 characters, never the full key.'),
    requests: z.int().min(0).describe('Requests to /v1/* made with this key.'),
  })
  .meta({ id: 'TopUser' });

export const keySpendSchema = z
  .object({
    id: z.string().describe('Issued key id.'),
    api_key: z.string().describe('Masked key.'),
    owner: z.string(),
    team: z.string().optional(),
    user: z.string().optional(),
    requests: z.int().min(0).describe('Requests sent to a provider with this key (cache hits excluded).'),
    prompt_tokens: z.int().min(0),
    completion_tokens: z.int().min(0),
    cached_tokens: z.int().min(0).describe("Of prompt_tokens, read from the provider's prompt cache."),
    cache_write_tokens: z.int().min(0).describe("Of prompt_tokens, written to the provider's prompt cache."),
    reasoning_tokens: z.int().min(0).describe('Of completion_tokens, spent reasoning.'),
    cost_usd: z
      .number()
      .min(0)
      .describe('Spend since the key was issued, from config.yaml `prices`, token type by token type.'),
    cost_today_usd: z.number().min(0).describe('Spend since 00:00 UTC.'),
  })
  .meta({ id: 'KeySpend' });

export const statsRecordSchema = z
  .object({
    total_requests: z
      .int()
      .min(0)
      .describe('Requests to /v1/* endpoints, every outcome included (errors, cache hits, throttled).'),
    cache_stats: z.object({
      exact_cache: cacheLookupStatsSchema,
      semantic_cache: cacheLookupStatsSchema,
    }),
    provider_stats: z.record(z.string(), providerStatsSchema).describe('Key per provider of config.yaml.'),
    spend_saved: z
      .object({
        gateway_cache_usd: z
          .number()
          .min(0)
          .describe(
            "What the replies served from the gateway's cache cost when they were produced (config.yaml `prices`): charged to nobody.",
          ),
        gateway_cache_tokens: z.int().min(0).describe("Tokens of the replies served from the gateway's cache."),
        prompt_cache_usd: z
          .number()
          .describe(
            "What providers' prompt caches saved: cached reads priced at the input price minus their own price, less the premium of cache writes. Negative when writes cost more than reads saved.",
          ),
        prompt_cache_read_tokens: z.int().min(0).describe('Prompt tokens providers read from their prompt cache.'),
        prompt_cache_write_tokens: z.int().min(0).describe('Prompt tokens providers wrote to their prompt cache.'),
      })
      .optional()
      .describe(
        'Spend that was not paid thanks to caching, since the counters were last cleared (always sent by this gateway; optional so the record keeps the required fields of its spec).',
      ),
    rate_limit_stats: z.object({
      requests_throttled: z.int().min(0).describe('Requests refused with 429 rate_limit_exceeded.'),
      top_users: z.array(topUserSchema).describe('Keys with the most requests, most first (at most 10).'),
    }),
    key_spend: z
      .object({
        total_cost_usd: z.number().min(0).describe('Spend of every issued key, from the key store.'),
        cost_today_usd: z.number().min(0),
        keys: z
          .array(keySpendSchema)
          .describe("Issued keys by spend, most first (at most 100); the caller's own key alone for a non-admin key."),
      })
      .optional()
      .describe("Issued keys' usage and spend, recorded durably in the key store (absent when it cannot be read)."),
  })
  .meta({
    id: 'StatsRecord',
    description:
      'Counters aggregated across every API and worker process through Redis, since the counters were last cleared.',
  });

export type StatsRecord = z.infer<typeof statsRecordSchema>;
export type CacheLookupStats = z.infer<typeof cacheLookupStatsSchema>;
export type ProviderStats = z.infer<typeof providerStatsSchema>;
export type TopUser = z.infer<typeof topUserSchema>;
export type KeySpend = z.infer<typeof keySpendSchema>;
