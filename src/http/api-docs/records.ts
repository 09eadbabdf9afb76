import { z } from 'zod';
import { ERROR_TABLE, type ErrorCode, type ErrorType } from '../../errors/catalog.ts';

/**
 * zod schemas of the gateway's response records, for the OpenAPI document.
 * Requests are described by the schemas that validate them (see
 * `src/chat/request-schema.ts`); these describe what the gateway answers,
 * field for field as docs/api.md describes them.
 */

const errorCodes = Object.keys(ERROR_TABLE) as [ErrorCode, ...ErrorCode[]];
const errorTypes = [...new Set(Object.values(ERROR_TABLE).map((e) => e.type))] as [ErrorType, ...ErrorType[]];

export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z.enum(errorCodes).describe('Stable machine-readable code.'),
      message: z.string().describe('Human-readable explanation; never contains keys or request content.'),
      type: z.enum(errorTypes),
    }),
    timestamp: z.iso.datetime().describe('ISO 8601 UTC.'),
    request_id: z.string().describe('Also sent in the X-Request-Id response header.'),
  })
  .meta({ id: 'ErrorEnvelope', description: 'The shape of every error the gateway returns.' });

export const usageSchema = z
  .object({
    prompt_tokens: z
      .int()
      .min(0)
      .describe('Every prompt token, cached and cache-written ones included (as OpenAI counts them).'),
    completion_tokens: z.int().min(0).describe('Every completion token, reasoning included.'),
    total_tokens: z.int().min(0),
    prompt_tokens_details: z
      .object({
        cached_tokens: z.int().min(0).describe("Of prompt_tokens, read from the upstream's prompt cache."),
        cache_write_tokens: z
          .int()
          .min(0)
          .optional()
          .describe("Of prompt_tokens, written to the upstream's prompt cache (Anthropic-format providers)."),
        cache_write_1h_tokens: z
          .int()
          .min(0)
          .optional()
          .describe('Of cache_write_tokens, written with the 1-hour retention.'),
      })
      .optional()
      .describe('Present when the provider reported prompt caching.'),
    completion_tokens_details: z
      .object({ reasoning_tokens: z.int().min(0).describe('Of completion_tokens, spent reasoning or thinking.') })
      .optional()
      .describe('Present when the provider reported reasoning tokens.'),
    gateway_cache: z
      .object({ hit: z.literal(true), type: z.enum(['exact', 'semantic']) })
      .optional()
      .describe(
        "Present only on a reply served from the gateway's response cache: the counts are those of the reply when first produced; nothing was charged.",
      ),
  })
  .meta({ id: 'Usage' });

const finishReason = z.enum(['stop', 'length', 'content_filter', 'tool_calls']);

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string().describe('JSON text, as the model wrote it.') }),
});

const logprobs = z
  .unknown()
  .nullable()
  .describe("OpenAI's logprobs object when `logprobs` was asked of an OpenAI-format provider, else null.");

export const chatCompletionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.int().describe('Unix time, seconds.'),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.int().min(0),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable().describe('Null when the model only called tools or refused.'),
          refusal: z.string().nullable().optional(),
          tool_calls: z.array(toolCall).optional(),
        }),
        finish_reason: finishReason,
        logprobs,
      }),
    ),
    usage: usageSchema,
  })
  .meta({ id: 'ChatCompletion' });

export const chatCompletionChunkSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: z.int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.int().min(0),
        delta: z.object({
          role: z.literal('assistant').optional(),
          content: z.string().optional(),
          refusal: z.string().optional(),
          tool_calls: z
            .array(
              z.object({
                index: z.int().min(0),
                id: z.string().optional(),
                type: z.literal('function').optional(),
                function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
              }),
            )
            .optional()
            .describe("A call's first piece carries its id and name; later pieces carry argument text to append."),
        }),
        finish_reason: finishReason.nullable(),
        logprobs,
      }),
    ),
    usage: usageSchema
      .nullable()
      .optional()
      .describe('Only in the last chunk, when stream_options.include_usage is true.'),
  })
  .meta({
    id: 'ChatCompletionChunk',
    description:
      'One `data:` line of the SSE stream. The stream ends with `data: [DONE]`; a failure after the stream started ends with an `event: error` whose data is an ErrorEnvelope, and no [DONE].',
  });

export const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    created: z.int(),
    owned_by: z.string().describe('Provider name from config.yaml.'),
  })
  .meta({ id: 'Model' });

export const modelListSchema = z
  .object({ object: z.literal('list'), data: z.array(modelSchema) })
  .meta({ id: 'ModelList' });

const connection = z.enum(['connected', 'disconnected']);

const providerState = z.enum(['available', 'unavailable', 'degraded']);

export const healthRecordSchema = z
  .object({
    status: z.enum(['healthy', 'degraded', 'unhealthy']),
    timestamp: z.iso.datetime(),
    services: z.object({
      cache_store: connection,
      database: connection,
      providers: z.record(z.string(), providerState).describe('Key per provider of config.yaml.'),
    }),
    version: z.string(),
    details: z
      .object({
        database: z.object({ kind: z.string() }),
        config: z.object({ loaded: z.boolean(), error: z.string().optional() }),
        providers: z.record(
          z.string(),
          z.object({
            status: providerState,
            key_configured: z.boolean().describe('Whether its api_key_env variable is set in the API process.'),
            live_workers: z.int().min(0).describe('Worker processes heart-beating for its queue.'),
            waiting_jobs: z
              .int()
              .min(0)
              .nullable()
              .describe('Jobs waiting in its queue; null when Redis could not say.'),
            cooldown_seconds: z
              .int()
              .min(1)
              .optional()
              .describe('Present while it is out after upstream failures (config.yaml `routing`): seconds left.'),
          }),
        ),
      })
      .describe('Why each state is what it is (beyond the base record).'),
  })
  .meta({ id: 'HealthRecord' });

export const readinessSchema = z
  .object({
    status: z.enum(['ready', 'not_ready']).describe('`ready` with 200, `not_ready` with 503.'),
    timestamp: z.iso.datetime(),
    checks: z.object({
      cache_store: connection,
      config: z.enum(['loaded', 'failed']),
      database: connection,
      queues: z.enum(['ready', 'failed']).describe("Whether a job can be added to every provider's queue."),
    }),
    config_error: z.string().optional().describe('Why the configuration is not loaded.'),
  })
  .meta({ id: 'Readiness' });

export const livenessSchema = z.object({ status: z.literal('alive') }).meta({ id: 'Liveness' });

const lookupCounts = z.object({ hits: z.int().min(0), misses: z.int().min(0), hit_rate: z.number().min(0).max(1) });

export const cacheStatsRecordSchema = z
  .object({
    cache_store: z.object({
      connected: z.boolean(),
      memory_usage: z.string().describe('Size with unit, e.g. `1.5M`.'),
      keys: z.int().min(0),
      hits: z.int().min(0).describe('Redis keyspace hits.'),
      misses: z.int().min(0).describe('Redis keyspace misses.'),
      evictions: z.int().min(0),
    }),
    semantic_cache: z.object({
      collection_size: z.int().min(0),
      index_size: z.string().describe('Size with unit.'),
      queries: z.int().min(0),
      hits: z.int().min(0),
      avg_similarity: z.number(),
      misses: z.int().min(0).optional(),
      hit_rate: z.number().optional(),
      status: z.string().optional().describe('disabled | starting | ready | unavailable.'),
      error: z.string().optional(),
      embedder: z.string().nullable().optional(),
      retriever: z
        .string()
        .nullable()
        .optional()
        .describe('First-stage retriever (the static table) once loaded; null when the embedder embeds every lookup.'),
      threshold: z.number().optional().describe('SEMANTIC_CACHE_THRESHOLD.'),
    }),
    exact_cache: lookupCounts.optional().describe('Exact-cache lookups (beyond the base record).'),
  })
  .meta({ id: 'CacheStatsRecord' });

export const cacheClearResultSchema = z
  .object({
    status: z.literal('success'),
    message: z.string(),
    cleared: z.object({
      exact_cache: z.int().min(0).describe('Entries removed.'),
      semantic_cache: z.int().min(0).describe('Entries removed.'),
    }),
  })
  .meta({ id: 'CacheClearResult' });

export const reloadResultSchema = z
  .object({
    status: z.literal('success'),
    message: z.string(),
    timestamp: z.iso.datetime(),
    providers_without_workers: z
      .array(z.string())
      .optional()
      .describe(
        'Providers of the new configuration that no live worker serves; their requests answer 503 until one starts.',
      ),
  })
  .meta({ id: 'ReloadResult' });

export const asyncJobSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion.job'),
    status: z.enum(['queued', 'in_progress', 'completed', 'failed', 'cancelled']),
    model: z.string(),
    created_at: z.int().describe('Unix time, seconds.'),
    started_at: z.int().nullable(),
    completed_at: z.int().nullable(),
    result: chatCompletionSchema.nullable().describe('The completion, once `completed`.'),
    error: z.object({ code: z.string(), message: z.string() }).nullable().describe('Once `failed`.'),
    expires_at: z.int().describe('Unix time after which the record is deleted.'),
  })
  .meta({
    id: 'ChatCompletionJob',
    description: 'An asynchronous chat completion (batch priority, behind interactive requests).',
  });

export const asyncJobDeletedSchema = z
  .object({ id: z.string(), object: z.literal('chat.completion.job.deleted'), deleted: z.literal(true) })
  .meta({ id: 'ChatCompletionJobDeleted' });
