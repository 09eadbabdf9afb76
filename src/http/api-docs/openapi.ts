import { z } from 'zod';
import { chatCompletionRequestSchema } from '../../chat/request-schema.ts';
import { countTokensRequestSchema, messagesRequestSchema } from '../../doors/messages/request-schema.ts';
import { clearBodySchema } from '../routes/admin-cache.ts';
import { createBatchSchema } from '../routes/batches.ts';
import { batchPaths } from './batch-paths.ts';
import { responsesPaths } from './responses-paths.ts';
import {
  embeddingListSchema,
  inputItemListSchema,
  responseDeletedSchema,
  responseSchema,
} from './responses-records.ts';
import { responsesRequestSchema } from '../../doors/responses/request-schema.ts';
import { embeddingsRequestSchema } from '../../embeddings/request-schema.ts';
import { batchListSchema, batchSchema, fileDeletedSchema, fileListSchema, fileSchema } from './batch-records.ts';
import {
  cacheLookupStatsSchema,
  keySpendSchema,
  providerStatsSchema,
  statsRecordSchema,
  topUserSchema,
} from '../../observability/stats-schema.ts';
import { KEY_INPUT_SCHEMAS, KEY_OUTPUT_SCHEMAS, keyPaths } from './openapi-keys.ts';
import {
  asyncJobDeletedSchema,
  asyncJobSchema,
  cacheClearResultSchema,
  cacheStatsRecordSchema,
  chatCompletionChunkSchema,
  chatCompletionSchema,
  errorEnvelopeSchema,
  healthRecordSchema,
  livenessSchema,
  modelListSchema,
  modelSchema,
  readinessSchema,
  reloadResultSchema,
  usageSchema,
} from './records.ts';

/**
 * The OpenAPI 3.1 document of the gateway. Component schemas are generated
 * with zod 4's JSON Schema conversion from the very schemas that validate
 * requests (`ChatCompletionRequest` is `chatCompletionRequestSchema`), so the
 * description cannot drift from the validation.
 */

/** Schemas of response records, rendered as outputs (defaults filled in, so required). */
const OUTPUT_SCHEMAS: readonly z.ZodType[] = [
  chatCompletionSchema,
  chatCompletionChunkSchema,
  usageSchema,
  asyncJobSchema,
  asyncJobDeletedSchema,
  modelListSchema,
  modelSchema,
  errorEnvelopeSchema,
  healthRecordSchema,
  readinessSchema,
  livenessSchema,
  statsRecordSchema,
  cacheLookupStatsSchema,
  providerStatsSchema,
  topUserSchema,
  keySpendSchema,
  ...KEY_OUTPUT_SCHEMAS,
  cacheStatsRecordSchema,
  cacheClearResultSchema,
  reloadResultSchema,
  fileSchema,
  fileListSchema,
  fileDeletedSchema,
  batchSchema,
  batchListSchema,
  responseSchema,
  responseDeletedSchema,
  inputItemListSchema,
  embeddingListSchema,
];

/**
 * Request bodies: the very schemas the routes validate with, rendered as
 * inputs (fields with defaults optional), under these component names.
 */
const INPUT_SCHEMAS: ReadonlyArray<readonly [string, z.ZodType]> = [
  ['ChatCompletionRequest', chatCompletionRequestSchema],
  ['MessagesRequest', messagesRequestSchema],
  ['MessagesCountTokensRequest', countTokensRequestSchema],
  ['CacheClearRequest', clearBodySchema],
  ['BatchCreateRequest', createBatchSchema],
  ['ResponseCreateRequest', responsesRequestSchema],
  ['EmbeddingsRequest', embeddingsRequestSchema],
  ...KEY_INPUT_SCHEMAS,
];

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiOptions {
  /** `info.version`: the service version. */
  version: string;
  /** `info.title`. @defaultValue "LLM Gateway" */
  title?: string;
}

type JsonObject = Record<string, unknown>;

/**
 * Converts `[component name, schema]` pairs to named components. Every
 * schema with a `.meta({ id })` that a component nests must be listed too,
 * or zod would park it in a `__shared` entry the document cannot reference.
 */
function convert(
  schemas: ReadonlyArray<readonly [string, z.ZodType]>,
  io: 'input' | 'output',
): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of schemas) registry.add(schema, { id });
  const converted = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }).schemas as Record<string, JsonObject>;
  const out: Record<string, JsonObject> = {};
  for (const [id, schema] of Object.entries(converted)) {
    if (id === '__shared')
      throw new Error(
        `a named schema nested in a component is not listed: ${Object.keys((schema.$defs as JsonObject) ?? {}).join(', ')}`,
      );
    // `$id`/`$schema` inside components would re-base references; OpenAPI 3.1 sets the dialect once.
    const { $id: _id, $schema: _schema, ...rest } = schema;
    out[id] = io === 'output' ? openEnded(rest) : rest;
  }
  return out;
}

/**
 * zod renders every output object as closed (`additionalProperties: false`);
 * a response description must let the gateway add fields later without
 * breaking clients generated from it.
 */
function openEnded(schema: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (Array.isArray(value))
      out[key] = value.map((v) => (v && typeof v === 'object' ? openEnded(v as JsonObject) : v));
    else if (value && typeof value === 'object') out[key] = openEnded(value as JsonObject);
    else out[key] = value;
  }
  return out;
}

/** Every component schema of the document, generated from the zod schemas. */
function componentSchemas(): Record<string, JsonObject> {
  const outputs = OUTPUT_SCHEMAS.map((schema) => {
    const id = z.globalRegistry.get(schema)?.id;
    if (!id) throw new Error('every response schema needs .meta({ id })');
    return [id, schema] as const;
  });
  return { ...convert(INPUT_SCHEMAS, 'input'), ...convert(outputs, 'output') };
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (id: string) => ({ 'application/json': { schema: ref(id) } });

function errors(...statuses: number[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const status of statuses) out[String(status)] = { $ref: `#/components/responses/Error${status}` };
  return out;
}

const ERROR_RESPONSES: Record<number, string> = {
  400: 'Invalid request (`invalid_request`, `model_not_found`, `pii_detected`).',
  401: 'Missing or invalid API key (`invalid_api_key`).',
  403: 'A valid key that is not an admin key (`admin_required`), or a model outside the key’s allowed models (`model_not_allowed`).',
  404: 'No such route or resource (`not_found`).',
  410: 'An asynchronous job the gateway accepted whose row its database no longer holds (`job_lost`: restored from an older backup); resubmit it.',
  413: 'Body larger than MAX_REQUEST_BYTES (`request_too_large`).',
  429: 'Rate or token limit exceeded (`rate_limit_exceeded`), or the key’s budget used up (`budget_exceeded`); see Retry-After.',
  500: 'Internal error (`internal_error`).',
  502: 'The upstream provider failed (`provider_error`).',
  503: 'Redis unreachable or queue full (`service_unavailable`).',
  504: 'The upstream provider did not answer in time (`provider_timeout`).',
};

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per window.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Seconds until the window frees a request.', schema: { type: 'integer' } },
};

const JOB_ID = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });

function paths(): JsonObject {
  return {
    '/v1/chat/completions': {
      post: {
        operationId: 'createChatCompletion',
        tags: ['chat'],
        summary: 'Create a chat completion',
        description:
          'Routes `model` to its provider, enqueues the request and answers with the completion, as JSON or, with `stream: true`, as Server-Sent Events of `chat.completion.chunk` objects ending with `data: [DONE]`. Cached answers carry `X-Cache: HIT` or `SEMANTIC_HIT`. A model with several deployments or fallbacks (config.yaml `routing`) is tried deployment by deployment, then fallback by fallback, until one answers before its first token; `model` and `X-Gateway-Model` name the model that answered, `Server-Timing` lists every attempt.',
        parameters: [
          {
            name: 'X-Gateway-Fallbacks',
            in: 'header',
            required: false,
            description:
              'Comma-separated model ids of config.yaml (that this key may use) to fall back to, in order, instead of the configured fallbacks; `none` for no fallback. Anything else is a 400.',
            schema: { type: 'string', examples: ['c-sonnet-4-20250514, b-2.5-flash'] },
          },
        ],
        requestBody: { required: true, content: json('ChatCompletionRequest') },
        responses: {
          '200': {
            description: 'The completion (JSON), or the stream (SSE) when `stream` is true.',
            headers: {
              ...RATE_LIMIT_HEADERS,
              'X-Gateway-Model': {
                description: 'The model that answered: the requested one, or a fallback.',
                schema: { type: 'string' },
              },
            },
            content: {
              'application/json': { schema: ref('ChatCompletion') },
              'text/event-stream': {
                schema: {
                  type: 'string',
                  description: 'SSE: `data: <ChatCompletionChunk JSON>` lines, then `data: [DONE]`.',
                },
                // `itemSchema` is OpenAPI 3.2; this 3.1 document names the chunk schema in an extension instead.
                'x-item-schema': ref('ChatCompletionChunk'),
              },
            },
          },
          ...errors(400, 401, 403, 413, 429, 500, 502, 503, 504),
        },
      },
    },
    '/v1/chat/completions/jobs': {
      post: {
        operationId: 'createChatCompletionJob',
        tags: ['chat'],
        summary: 'Queue an asynchronous chat completion',
        description:
          'Body of a chat completion (not streamed). Answers 202 with the job once it is stored in the key-store database (normally already on its queue); poll it for the result. Runs at batch priority, and survives Redis and process restarts.',
        requestBody: { required: true, content: json('ChatCompletionRequest') },
        responses: {
          '202': {
            description: 'Queued; `Location` names the job.',
            headers: RATE_LIMIT_HEADERS,
            content: json('ChatCompletionJob'),
          },
          ...errors(400, 401, 403, 413, 429, 502, 503),
        },
      },
    },
    '/v1/chat/completions/jobs/{id}': {
      parameters: [JOB_ID],
      get: {
        operationId: 'retrieveChatCompletionJob',
        tags: ['chat'],
        summary: 'Status of an asynchronous job, with its result once completed',
        responses: {
          '200': { description: 'The job.', content: json('ChatCompletionJob') },
          ...errors(401, 404, 410, 429),
        },
      },
      delete: {
        operationId: 'deleteChatCompletionJob',
        tags: ['chat'],
        summary: 'Forget a job and its result (cancels it if still queued or running)',
        responses: {
          '200': { description: 'Deleted.', content: json('ChatCompletionJobDeleted') },
          ...errors(401, 404, 410, 429),
        },
      },
    },
    '/v1/chat/completions/jobs/{id}/cancel': {
      parameters: [JOB_ID],
      post: {
        operationId: 'cancelChatCompletionJob',
        tags: ['chat'],
        summary: 'Cancel a queued or running job',
        responses: {
          '200': { description: 'The cancelled job.', content: json('ChatCompletionJob') },
          ...errors(400, 401, 404, 410, 429),
        },
      },
    },
    '/v1/messages': {
      post: {
        operationId: 'createMessage',
        tags: ['messages'],
        summary: "Create a message (Anthropic's Messages API), for every configured model",
        description:
          "Anthropic's request and reply shapes over the same pipeline as chat completions (keys, limits, DLP, caches, routing). With `stream: true` the reply is Anthropic's event stream (`message_start`, `content_block_*`, `message_delta`, `message_stop`; an `error` event on a failure after the first event). Errors are `{type: 'error', error: {type, message}, request_id}`. `model` may be an alias of config.yaml `model_aliases`. docs/messages.md lists the translation per upstream format.",
        requestBody: { required: true, content: json('MessagesRequest') },
        responses: {
          '200': {
            description: 'The `Message` (JSON), or the event stream (SSE) when `stream` is true.',
            headers: RATE_LIMIT_HEADERS,
            content: {
              'application/json': { schema: { type: 'object' } },
              'text/event-stream': { schema: { type: 'string' } },
            },
          },
          ...errors(400, 401, 403, 404, 413, 429, 500, 502, 503, 504),
        },
      },
    },
    '/v1/messages/count_tokens': {
      post: {
        operationId: 'countMessageTokens',
        tags: ['messages'],
        summary: 'Count the input tokens of a message request',
        description:
          "The upstream's own count where its format has a counting endpoint (Anthropic, Gemini), the gateway's estimate elsewhere (docs/messages.md#count_tokens), `{input_tokens}`; `X-Gateway-Token-Count` says which.",
        requestBody: { required: true, content: json('MessagesCountTokensRequest') },
        responses: {
          '200': {
            description: 'The count.',
            headers: {
              'X-Gateway-Token-Count': {
                description: '`upstream` or `estimate`.',
                schema: { type: 'string', enum: ['upstream', 'estimate'] },
              },
            },
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { input_tokens: { type: 'integer' } },
                  required: ['input_tokens'],
                },
              },
            },
          },
          ...errors(400, 401, 404, 429),
        },
      },
    },
    ...batchPaths({ json, errors }),
    ...responsesPaths({ json, errors }),
    '/v1/models': {
      get: {
        operationId: 'listModels',
        tags: ['chat'],
        summary: "List the routable models (in Anthropic's shape when the request carries `anthropic-version`)",
        responses: {
          '200': { description: 'Every model of config.yaml.', content: json('ModelList') },
          ...errors(401, 429),
        },
      },
    },
    '/v1/models/{model}': {
      get: {
        operationId: 'retrieveModel',
        tags: ['chat'],
        summary: 'Retrieve one model',
        parameters: [{ name: 'model', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The model.', content: json('Model') }, ...errors(401, 404, 429) },
      },
    },
    '/health': {
      get: {
        operationId: 'health',
        tags: ['health'],
        summary: 'Health of the gateway and its dependencies',
        responses: { '200': { description: 'Health record.', content: json('HealthRecord') }, ...errors(401) },
      },
    },
    '/health/ready': {
      get: {
        operationId: 'readiness',
        tags: ['health'],
        summary: 'Readiness probe',
        responses: {
          '200': { description: 'Ready to serve.', content: json('Readiness') },
          '503': { description: 'Redis unreachable or configuration not loaded.', content: json('Readiness') },
          ...errors(401),
        },
      },
    },
    '/health/live': {
      get: {
        operationId: 'liveness',
        tags: ['health'],
        summary: 'Liveness probe',
        responses: { '200': { description: 'The process serves.', content: json('Liveness') }, ...errors(401) },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['observability'],
        summary: 'Prometheus metrics',
        description:
          'Text exposition format. 404 when PROMETHEUS_METRICS_ENABLED=false. Also served on METRICS_PORT when it differs from the API port.',
        responses: {
          '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...errors(401, 404),
        },
      },
    },
    '/stats': {
      get: {
        operationId: 'stats',
        tags: ['observability'],
        summary: 'Usage statistics across all gateway processes',
        responses: { '200': { description: 'Statistics record.', content: json('StatsRecord') }, ...errors(401, 503) },
      },
    },
    '/admin/reload-config': {
      post: {
        operationId: 'reloadConfig',
        tags: ['admin'],
        summary: 'Reload config.yaml in every process (admin key)',
        responses: {
          '200': { description: 'Reloaded.', content: json('ReloadResult') },
          ...errors(400, 401, 403),
        },
      },
    },
    '/admin/cache/stats': {
      get: {
        operationId: 'cacheStats',
        tags: ['admin'],
        summary: 'Cache store and semantic index statistics (admin key)',
        responses: {
          '200': { description: 'Cache statistics record.', content: json('CacheStatsRecord') },
          ...errors(401, 403, 503),
        },
      },
    },
    '/admin/cache/clear': {
      post: {
        operationId: 'clearCache',
        tags: ['admin'],
        summary: 'Clear the exact and/or semantic cache (admin key)',
        requestBody: { required: false, content: json('CacheClearRequest') },
        responses: {
          '200': { description: 'Cleared.', content: json('CacheClearResult') },
          ...errors(400, 401, 403, 503),
        },
      },
    },
    ...keyPaths(errors),
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        tags: ['docs'],
        summary: 'This OpenAPI 3.1 document',
        responses: {
          '200': { description: 'OpenAPI document.', content: { 'application/json': { schema: { type: 'object' } } } },
          ...errors(401),
        },
      },
    },
    '/docs': {
      get: {
        operationId: 'swaggerUi',
        tags: ['docs'],
        summary: 'Interactive API description (Swagger UI)',
        responses: { '200': html('HTML page.'), ...errors(401) },
      },
    },
    '/redoc': {
      get: {
        operationId: 'redoc',
        tags: ['docs'],
        summary: 'API reference (ReDoc)',
        responses: { '200': html('HTML page.'), ...errors(401) },
      },
    },
    '/dashboard': {
      get: {
        operationId: 'dashboard',
        tags: ['observability'],
        summary: 'Live dashboard of /stats',
        responses: { '200': html('HTML page.'), ...errors(401) },
      },
    },
  };
}

/** Builds the whole document. Pure: call it once per process and serve the result. */
export function buildOpenApiDocument(options: OpenApiOptions): JsonObject {
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(ERROR_RESPONSES)) {
    responses[`Error${status}`] = { description, content: json('ErrorEnvelope') };
  }
  responses.Error429 = {
    ...(responses.Error429 as JsonObject),
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } }, ...RATE_LIMIT_HEADERS },
  };

  return {
    // No jsonSchemaDialect: OpenAPI 3.1's default (JSON Schema 2020-12) is what zod emits, and Swagger UI rejects any explicit value.
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'LLM Gateway',
      version: options.version,
      description:
        'Queue-backed, OpenAI-compatible chat-completion gateway. Every endpoint needs a gateway key, sent as `X-API-Key: <key>` or `Authorization: Bearer <key>`, except paths the operator lists in PUBLIC_PATHS. Errors use the ErrorEnvelope shape.',
    },
    servers: [{ url: '/', description: 'This gateway' }],
    security: [{ ApiKeyHeader: [] }, { BearerAuth: [] }],
    tags: [
      { name: 'chat', description: 'OpenAI-compatible endpoints under /v1.' },
      {
        name: 'batch',
        description: "OpenAI's Files and Batch APIs, run over the provider queues at the lowest priority.",
      },
      { name: 'health', description: 'Probes.' },
      { name: 'observability', description: 'Metrics, statistics and dashboard.' },
      { name: 'admin', description: 'Admin key required (403 admin_required otherwise).' },
      { name: 'docs', description: 'This description.' },
    ],
    paths: paths(),
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Gateway key.' },
        BearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'Gateway key as a bearer token (what OpenAI SDKs send).',
        },
      },
      schemas: componentSchemas(),
      responses,
    },
  };
}
