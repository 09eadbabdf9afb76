import { z } from 'zod';
import {
  envBoolean,
  envEnum,
  envList,
  envNumber,
  envOptionalNumber,
  envOptionalString,
  envString,
} from './env-parsers.ts';
import {
  ANALYZER_DEFAULT_ENTITIES,
  ANALYZER_FAILURE_POLICIES,
  ENTITY_TYPES,
  isEntityType,
  type EntityType,
} from '../dlp/entities.ts';

/**
 * Every environment variable the gateway reads, validated in one place.
 * A wrong value is a start-up error naming the variable. Provider keys are not
 * read here: config.yaml names their variables (`api_key_env`) and they are
 * read where the upstream is called.
 */

const LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'warn', 'error', 'critical', 'fatal'] as const;

/** A comma-separated list of DLP entity types; an unknown one is refused, naming the known ones. */
function envEntityList() {
  return envList().superRefine((list, ctx) => {
    const unknown = list.filter((item) => !isEntityType(item));
    if (unknown.length > 0)
      ctx.addIssue({
        code: 'custom',
        message: `unknown entity type(s) ${unknown.join(', ')}; known: ${ENTITY_TYPES.join(', ')}`,
      });
  });
}

const settingsSchema = z.object({
  /** HTTP port of the API. @defaultValue 8000 */
  PORT: envNumber(8000, { int: true, min: 0, max: 65535 }),
  /** Listen address. @defaultValue 0.0.0.0 */
  HOST: envString('0.0.0.0'),
  /** Path of config.yaml. @defaultValue ./config.yaml */
  CONFIG_PATH: envString('config.yaml'),

  REDIS_HOST: envString('localhost'),
  REDIS_PORT: envNumber(6379, { int: true, min: 1, max: 65535 }),
  REDIS_PASSWORD: envOptionalString(),
  REDIS_DB: envNumber(0, { int: true, min: 0, max: 15 }),
  /**
   * `redis://` or `rediss://` (TLS) URL with optional user, password and db,
   * as PaaS add-ons hand it out; takes precedence over REDIS_HOST/PORT/PASSWORD/DB.
   */
  REDIS_URL: envOptionalString(),
  /** PEM files of the CA that signed Redis's certificate, and of this client's certificate and key (mutual TLS). */
  REDIS_TLS_CA_FILE: envOptionalString(),
  REDIS_TLS_CERT_FILE: envOptionalString(),
  REDIS_TLS_KEY_FILE: envOptionalString(),
  /** Name checked against Redis's certificate. @defaultValue the host */
  REDIS_TLS_SERVERNAME: envOptionalString(),
  /** Refuse a certificate that does not verify. @defaultValue true; false only for testing */
  REDIS_TLS_REJECT_UNAUTHORIZED: envBoolean(true),
  /**
   * Redis Cluster seed nodes, `host:port,host:port`: the gateway then speaks
   * the cluster protocol (TLS, user and password from the REDIS_URL/REDIS_TLS_*
   * settings apply to every node). @defaultValue none: one Redis
   */
  REDIS_CLUSTER_NODES: envList(),
  /** Treat REDIS_URL (or REDIS_HOST/PORT) as the seed of a Redis Cluster. @defaultValue false */
  REDIS_CLUSTER: envBoolean(false),
  /** Prefix of every Redis key the gateway writes. @defaultValue `gw` */
  REDIS_KEY_PREFIX: envString('gw'),
  /**
   * Sentinels (`host:port,host:port`) to ask where the master is; with them
   * REDIS_HOST/PORT and the URL's host are not used. @defaultValue none
   */
  REDIS_SENTINELS: envList(),
  /** Name of the master the sentinels watch. @defaultValue `mymaster` */
  REDIS_SENTINEL_NAME: envString('mymaster'),
  /** ACL user and password of the sentinels themselves (the data nodes use REDIS_URL's or REDIS_PASSWORD). @defaultValue none */
  REDIS_SENTINEL_USERNAME: envOptionalString(),
  REDIS_SENTINEL_PASSWORD: envOptionalString(),
  /**
   * A separate Redis for the response caches (`redis://` or `rediss://`, the
   * REDIS_TLS_* files apply to it too), where `allkeys-lru` may evict.
   * @defaultValue the gateway's Redis
   */
  CACHE_REDIS_URL: envOptionalString(),

  API_KEYS: envList(),
  ADMIN_API_KEYS: envList(),
  /** Paths served without a key (exact match). @defaultValue none */
  PUBLIC_PATHS: envList(),

  CACHE_TTL: envNumber(3600, { int: true, min: 1 }),
  SEMANTIC_CACHE_THRESHOLD: envNumber(0.75, { min: 0, max: 1 }),
  SEMANTIC_CACHE_ENABLED: envBoolean(true),
  /** Exact-match response cache on/off. @defaultValue true */
  CACHE_ENABLED: envBoolean(true),
  /** Who shares cache entries: `owner` (each key owner has its own) or `shared` (every key). @defaultValue owner */
  CACHE_SCOPE: envEnum(['owner', 'shared'] as const, 'owner'),
  /** Identical concurrent misses share one upstream call. @defaultValue true */
  CACHE_COALESCE: envBoolean(true),
  /**
   * Most bytes the exact cache's entries count together; the least recently
   * used go first beyond. 0: no bound (entries only expire). @defaultValue 256 MiB
   */
  CACHE_MAX_BYTES: envNumber(256 * 1024 * 1024, { int: true, min: 0 }),
  /** Most semantic entries kept; the ones closest to expiry are dropped beyond. @defaultValue 10000 */
  SEMANTIC_CACHE_MAX_ENTRIES: envNumber(10_000, { int: true, min: 1 }),
  /** Embedder of the semantic cache: `onnx` (local model) or `endpoint` (a provider's OpenAI-compatible /embeddings). @defaultValue onnx */
  EMBEDDING_BACKEND: envEnum(['onnx', 'endpoint'] as const, 'onnx'),
  /** Embedding model. @defaultValue `Xenova/all-MiniLM-L6-v2` (onnx) or `text-embedding-3-small` (endpoint) */
  EMBEDDING_MODEL: envOptionalString(),
  /** Folder of local ONNX models in transformers.js layout (`<folder>/<model>/onnx/model_quantized.onnx`). @defaultValue ./models */
  EMBEDDING_MODEL_PATH: envString('models'),
  /** ONNX weights variant: `q8` (onnx/model_quantized.onnx) or `fp32` (onnx/model.onnx). @defaultValue q8 */
  EMBEDDING_DTYPE: envEnum(['q8', 'fp32'] as const, 'q8'),
  /** Let the onnx backend download a missing model from the Hugging Face hub. @defaultValue false (offline) */
  EMBEDDING_ALLOW_REMOTE: envBoolean(false),
  /** ONNX Runtime threads of the embedder; 0 lets it choose. @defaultValue 1, so inference leaves a core to the API */
  EMBEDDING_THREADS: envNumber(1, { int: true, min: 0, max: 64 }),
  /** Provider of config.yaml whose base_url and key the endpoint backend uses (`POST {base_url}/embeddings`). @defaultValue provider_a */
  EMBEDDING_PROVIDER: envString('provider_a'),
  /** Timeout of one embedding call, ms. @defaultValue 10000 */
  EMBEDDING_TIMEOUT_MS: envNumber(10_000, { int: true, min: 100 }),
  /**
   * First stage of the onnx backend's semantic lookups: `static` (a token table distilled from the model,
   * `<EMBEDDING_MODEL_PATH>/<model>/static/`; the model then runs only to confirm a candidate) or `none`
   * (the model embeds every lookup). @defaultValue static
   */
  EMBEDDING_RETRIEVER: envEnum(['static', 'none'] as const, 'static'),
  /** Least first-stage (static) similarity of a candidate the model then confirms. @defaultValue 0.7 */
  SEMANTIC_CACHE_RETRIEVER_THRESHOLD: envNumber(0.7, { min: 0, max: 1 }),
  /**
   * Longest last user message, in characters, that the semantic cache looks up and stores; a
   * longer prompt is cached exactly only (docs/decisions/semantic-prompt-length.md).
   * @defaultValue 8000
   */
  SEMANTIC_CACHE_MAX_PROMPT_CHARS: envNumber(8000, { int: true, min: 1 }),
  /** Most texts embedded in one batch. @defaultValue 32 */
  EMBEDDING_BATCH_SIZE: envNumber(32, { int: true, min: 1, max: 1024 }),

  RATE_LIMIT_REQUESTS: envNumber(10, { int: true, min: 1 }),
  RATE_LIMIT_WINDOW: envNumber(60, { int: true, min: 1 }),
  /** Failed authentications (a wrong key) allowed per client address per AUTH_FAILURE_WINDOW; then 429 for every request from it. 0 turns the throttle off. @defaultValue 20 */
  AUTH_FAILURE_LIMIT: envNumber(20, { int: true, min: 0 }),
  /** Window of AUTH_FAILURE_LIMIT, seconds. @defaultValue 60 */
  AUTH_FAILURE_WINDOW: envNumber(60, { int: true, min: 1 }),
  /** Proxies in front of the API whose X-Forwarded-For entries name the client address; 0 uses the TCP peer. @defaultValue 0 */
  TRUST_PROXY: envNumber(0, { int: true, min: 0, max: 10 }),

  DLP_ENABLED: envBoolean(true),
  DLP_CONFIDENCE_THRESHOLD: envNumber(0.8, { min: 0, max: 1 }),
  DLP_ACTION: envEnum(['redact', 'block', 'log'] as const, 'redact'),
  /** Entity types DLP acts on, comma-separated (e.g. `EMAIL_ADDRESS,CREDIT_CARD`). @defaultValue every type (README "DLP") */
  DLP_ENTITIES: envEntityList().transform((list) => list as EntityType[]),
  /** Scan provider replies too (sync and streamed), with DLP_ACTION. @defaultValue false */
  DLP_SCAN_REPLIES: envBoolean(false),
  /** In `redact` mode, put the client's own values back where the reply repeats their placeholders. @defaultValue false */
  DLP_RESTORE: envBoolean(false),
  /** Regions (ISO 3166 alpha-2) whose national phone formats are recognised without a `+` country code. @defaultValue the 20 most populous countries, the EU and GB (docs/dlp.md) */
  DLP_PHONE_REGIONS: envList().superRefine((list, ctx) => {
    const bad = list.filter((item) => !/^[A-Za-z]{2}$/.test(item));
    if (bad.length > 0)
      ctx.addIssue({ code: 'custom', message: `expected two-letter region codes, got ${bad.join(', ')}` });
  }),
  /** Base URL of a Presidio analyzer (its REST `/analyze`) for the types that need a language model; unset: in-process recognizers only (docs/dlp.md). */
  DLP_ANALYZER_URL: envOptionalString().superRefine((url, ctx) => {
    if (url !== undefined && !/^https?:\/\/[^\s]+$/.test(url))
      ctx.addIssue({ code: 'custom', message: `expected an http(s) URL, got ${url}` });
  }),
  /** Time budget of one analyzer call, milliseconds. @defaultValue 500 */
  DLP_ANALYZER_TIMEOUT_MS: envNumber(500, { int: true, min: 10, max: 60_000 }),
  /** `closed` (default): a request the analyzer could not screen is refused with 503; `open`: it goes on with the in-process findings only, counted and logged. */
  DLP_ANALYZER_FAILURE: envEnum(ANALYZER_FAILURE_POLICIES, 'closed'),
  /** Entity types the analyzer is asked for. @defaultValue PERSON,LOCATION,ORGANIZATION,NRP,DATE_TIME */
  DLP_ANALYZER_ENTITIES: envEntityList().transform((list) =>
    list.length > 0 ? (list as EntityType[]) : [...ANALYZER_DEFAULT_ENTITIES],
  ),
  /** Language code sent to the analyzer. @defaultValue en */
  DLP_ANALYZER_LANGUAGE: envString('en'),

  /** Serve Prometheus metrics at /metrics. @defaultValue true */
  PROMETHEUS_METRICS_ENABLED: envBoolean(true),
  /**
   * Port of a second listener serving only /metrics. Unset (the default)
   * means the API port (8000 by default), where /metrics is always served
   * when enabled; a different value adds the listener, e.g. for a
   * scrape-only network.
   */
  METRICS_PORT: envOptionalNumber({ int: true, min: 1, max: 65535 }),
  /**
   * Port on which a worker serves its own /metrics (upstream attempts and
   * retries, process defaults), without a key, on HOST. Unset (the default):
   * no listener. Each worker process needs its own port.
   */
  WORKER_METRICS_PORT: envOptionalNumber({ int: true, min: 1, max: 65535 }),

  /**
   * OpenTelemetry tracing, by the standard variables (docs/operations.md#tracing).
   * On when OTEL_TRACES_EXPORTER=otlp, or when it is unset and an OTLP endpoint
   * is set; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off.
   * The exporter reads the other OTEL_EXPORTER_OTLP_* variables (headers,
   * timeout, certificates) itself.
   */
  OTEL_SDK_DISABLED: envBoolean(false),
  OTEL_TRACES_EXPORTER: envOptionalString().pipe(z.enum(['otlp', 'none']).optional()),
  OTEL_EXPORTER_OTLP_ENDPOINT: envOptionalString(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envOptionalString(),
  /** service.name of the spans. @defaultValue `llm-gateway-api` or `llm-gateway-worker` */
  OTEL_SERVICE_NAME: envOptionalString(),
  OTEL_TRACES_SAMPLER: envEnum(
    [
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ] as const,
    'parentbased_always_on',
  ),
  /** Ratio of the traceidratio samplers. @defaultValue 1 */
  OTEL_TRACES_SAMPLER_ARG: envNumber(1, { min: 0, max: 1 }),
  /** Delay between two span exports, ms. @defaultValue 5000 */
  OTEL_BSP_SCHEDULE_DELAY: envNumber(5_000, { int: true, min: 1 }),

  LOG_LEVEL: envEnum(LOG_LEVELS, 'info'),
  LOG_FORMAT: envEnum(['json', 'text'] as const, 'json'),
  /**
   * Each process warns at start when Redis may lose jobs (no AOF, evicting keys). scripts/start.sh checks once
   * itself, says it in one sentence and sets this to false: its processes then log it at debug.
   * @defaultValue true
   */
  REDIS_DURABILITY_WARNING: envBoolean(true),
  DEBUG: envBoolean(false),
  /** Accepted for compatibility; use `npm run dev` for reload on code changes. */
  RELOAD: envBoolean(false),

  /** Largest accepted request body in bytes. @defaultValue 1 MiB */
  MAX_REQUEST_BYTES: envNumber(1024 * 1024, { int: true, min: 1024 }),
  /** How long a reply stream lives in Redis, seconds. @defaultValue 300 */
  RESPONSE_STREAM_TTL: envNumber(300, { int: true, min: 5 }),
  /** BullMQ lock of an active job, ms; a dead worker's job is retaken after it expires. @defaultValue 10000 */
  WORKER_LOCK_DURATION_MS: envNumber(10_000, { int: true, min: 500 }),
  /** How often workers look for stalled jobs, ms. @defaultValue 5000 */
  WORKER_STALLED_INTERVAL_MS: envNumber(5_000, { int: true, min: 200 }),
  /** Time allowed for in-flight work on SIGTERM, ms. @defaultValue 25000 */
  SHUTDOWN_GRACE_MS: envNumber(25_000, { int: true, min: 0 }),

  /** How long asynchronous job records and results are kept, seconds. @defaultValue 86400 (24 h) */
  ASYNC_JOB_TTL: envNumber(86_400, { int: true, min: 60 }),
  /** How long a stored response (`POST /v1/responses` with `store`) and its input items are kept, seconds. @defaultValue 2592000 (30 days, as at OpenAI) */
  RESPONSES_TTL: envNumber(2_592_000, { int: true, min: 60 }),
  /** How long an asynchronous job may wait in its queue before it fails, ms. @defaultValue 3600000 (1 h) */
  ASYNC_JOB_MAX_WAIT_MS: envNumber(3_600_000, { int: true, min: 1_000 }),
  /**
   * Key of the tags in asynchronous job ids, which let the API tell a job Redis
   * lost (410 job_lost) from one that never existed (404). The same in every API
   * process. @defaultValue none: a public key, so tags can be forged (docs/reliability.md)
   */
  JOB_ID_SECRET: envOptionalString(),

  /** Largest file accepted by `POST /v1/files`, bytes. @defaultValue 52428800 (50 MiB) */
  BATCH_MAX_FILE_BYTES: envNumber(50 * 1024 * 1024, { int: true, min: 1024 }),
  /** Uploads (`POST /v1/files`) one API process reads at once; more get 429 with Retry-After. @defaultValue 4 */
  FILES_MAX_CONCURRENT_UPLOADS: envNumber(4, { int: true, min: 1, max: 1_000 }),
  /** Bytes of uploaded files one key owner may keep stored. @defaultValue 1073741824 (1 GiB) */
  FILES_MAX_BYTES_PER_OWNER: envNumber(1024 * 1024 * 1024, { int: true, min: 1024 }),
  /** Longest filename of an upload, characters. @defaultValue 255 */
  FILES_MAX_FILENAME_LENGTH: envNumber(255, { int: true, min: 1, max: 4096 }),
  /** Seconds an uploaded file is kept (the input of a running batch stays until it ends); 0 keeps files until deleted. @defaultValue 2592000 (30 days) */
  FILES_TTL: envNumber(30 * 24 * 3600, { int: true, min: 0 }),
  /** Most request lines in one batch input file. @defaultValue 50000 */
  BATCH_MAX_LINES: envNumber(50_000, { int: true, min: 1 }),
  /** Lines of one batch in flight at once (per batch, across the API processes running it). @defaultValue 8 */
  BATCH_CONCURRENCY: envNumber(8, { int: true, min: 1, max: 1_000 }),
  /** Lines of all the batches of one key in flight at once in one API process, shared evenly by its batches. @defaultValue 8 */
  BATCH_KEY_CONCURRENCY: envNumber(8, { int: true, min: 1, max: 10_000 }),
  /** How often each API process looks for batches to run, ms. @defaultValue 1000 */
  BATCH_POLL_MS: envNumber(1_000, { int: true, min: 50 }),
  /** How long an API process holds a batch without renewing its claim before another may take it over, ms. @defaultValue 15000 */
  BATCH_LEASE_MS: envNumber(15_000, { int: true, min: 500 }),

  DATABASE_URL: envOptionalString(),
  /** SQLite file of the key store when DATABASE_URL is unset. @defaultValue ./data/gateway.sqlite */
  KEY_DB_PATH: envString('data/gateway.sqlite'),
  /** How long an issued key's lookup is cached per process, ms; revocations are pushed at once over Redis. @defaultValue 30000 */
  AUTH_CACHE_TTL_MS: envNumber(30_000, { int: true, min: 0 }),
  /** How often a worker writes its heartbeat, ms; it counts as gone after 3 periods without one. @defaultValue 2000 */
  WORKER_HEARTBEAT_MS: envNumber(2_000, { int: true, min: 100 }),
  /** Waiting jobs from which a provider with live workers is `degraded` in /health; 0 turns it off. @defaultValue 1000 */
  HEALTH_QUEUE_BACKLOG: envNumber(1_000, { int: true, min: 0 }),
  /** Optional dotenv file layered over the environment, re-read on every configuration reload. @defaultValue none */
  ENV_FILE: envOptionalString(),
  /** How long a reload waits for the other processes to acknowledge it, ms. @defaultValue 2000 */
  RELOAD_ACK_TIMEOUT_MS: envNumber(2_000, { int: true, min: 0 }),
});

export type Settings = z.output<typeof settingsSchema>;

export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}

/** Reads and validates settings; throws {@link SettingsError} naming each bad variable. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new SettingsError(`Invalid environment: ${lines.join('; ')}`);
  }
  return parsed.data;
}
