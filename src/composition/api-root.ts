import type { Redis } from 'ioredis';
import { StaticKeyAuthenticator } from '../auth/static-key-authenticator.ts';
import { ConfigReloader } from '../admin/config-reloader.ts';
import { ControlBus } from '../admin/control-bus.ts';
import type { EnvFile } from '../admin/env-file.ts';
import { openConfigLeniently } from '../admin/open-config.ts';
import { FailedAuthThrottle } from '../auth/failed-auth-throttle.ts';
import { GatewayAuthenticator } from '../auth/gateway-authenticator.ts';
import { keyInvalidationChannel } from '../auth/key-invalidation.ts';
import type { KeyStore } from '../auth/key-store.ts';
import { describeKeyStore, openKeyStore } from '../auth/open-key-store.ts';
import { HealthService } from '../health/health-service.ts';
import { WorkerPresence } from '../health/worker-presence.ts';
import { countLiveWorkers } from '../health/worker-heartbeat.ts';
import { serviceVersion } from '../health/service-version.ts';
import { rateLimit } from '../http/middleware/rate-limit.ts';
import { requireConfig } from '../http/middleware/require-config.ts';
import { adminConfigRouter } from '../http/routes/admin-config.ts';
import { healthRouter } from '../http/routes/health.ts';
import { RateLimitStats } from '../ratelimit/rate-limit-stats.ts';
import { SlidingWindowLimiter } from '../ratelimit/sliding-window-limiter.ts';
import { KeyUsageLimiter } from '../ratelimit/key-usage-limiter.ts';
import { adminKeysRouter } from '../http/routes/admin-keys.ts';
import { KeyGovernor } from '../usage/key-governor.ts';
import { readKeySpend } from '../usage/key-spend.ts';
import { UsageRecorder } from '../usage/usage-recorder.ts';
import { createResponseCache } from '../cache/create-response-cache.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import { ConfigStore } from '../config/config-store.ts';
import type { Settings } from '../config/settings.ts';
import { createApp, type GatewayHttp } from '../http/app.ts';
import { adminCacheRouter } from '../http/routes/admin-cache.ts';
import { doorRoute } from '../http/door-route.ts';
import { chatDoor } from '../doors/chat/chat-door.ts';
import { messagesDoor } from '../doors/messages/messages-door.ts';
import { EmbeddingsDoor } from '../doors/embeddings/embeddings-door.ts';
import { messagesCountTokensRouter } from '../http/routes/messages-count-tokens.ts';
import { ChatPipeline } from '../pipeline/chat-pipeline.ts';
import { storedKeyPrincipals } from '../auth/stored-key-principal.ts';
import { chatJobsRouter } from '../http/routes/chat-jobs.ts';
import { batchesRouter } from '../http/routes/batches.ts';
import { filesRouter } from '../http/routes/files.ts';
import { BatchRunner } from '../batches/batch-runner.ts';
import { BatchStore } from '../batches/batch-store.ts';
import { JobRows } from '../batches/job-rows.ts';
import { LineExecutor } from '../batches/line-executor.ts';
import { openBatchDb } from '../batches/sql-db.ts';
import { modelsRouter } from '../http/routes/models.ts';
import { responsesRouter } from '../http/routes/responses.ts';
import { NativeResources } from '../doors/responses/native-resources.ts';
import { TokenCounter } from '../doors/messages/token-count.ts';
import type { ProviderConfig } from '../config/gateway-config.ts';
import { ResponseStore } from '../doors/responses/response-store.ts';
import { ResponsesReplyFilter } from '../dlp/responses-reply-filter.ts';
import { ResponsesDoor } from '../doors/responses/responses-door.ts';
import { AsyncJobIds } from '../batches/async-job-id.ts';
import { AsyncJobStore } from '../batches/async-jobs.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { publicAssetPaths, resolveDocAssets } from '../http/api-docs/assets.ts';
import { buildOpenApiDocument } from '../http/api-docs/openapi.ts';
import { dashboardRouter } from '../http/routes/dashboard.ts';
import { docsRouter } from '../http/routes/docs.ts';
import { metricsRouter } from '../http/routes/metrics.ts';
import { statsRouter } from '../http/routes/stats.ts';
import { EndpointLabeler } from '../observability/endpoint-label.ts';
import { GatewayMetrics } from '../observability/metrics.ts';
import { observeRequests } from '../observability/request-observer.ts';
import { StatsStore } from '../observability/stats-store.ts';
import { openTracing } from '../observability/tracing/open-tracing.ts';
import { traceRequests } from '../observability/tracing/request-tracing.ts';
import { DlpGuard } from '../dlp/dlp-guard.ts';
import { DlpEngine } from '../dlp/engine.ts';
import { AnalyzerClient } from '../dlp/analyzer-client.ts';
import { ChatDispatcher } from '../queue/chat-dispatcher.ts';
import { ChatQueues } from '../queue/chat-queues.ts';
import { QueuePlaces } from '../queue/queue-places.ts';
import { cacheRedisSettings, createRedis, waitForReady } from '../redis/connections.ts';
import { createNodeRedis } from '../redis/cluster-connections.ts';
import { warnIfRedisMayLoseJobs } from '../redis/durability-check.ts';
import { ReaderLiveness } from '../streams/reader-liveness.ts';
import { ReplyRelease } from '../streams/reply-release.ts';
import { SlotStreamReaders } from '../streams/slot-stream-readers.ts';
import { StreamReader, type ReplyStreamReader } from '../streams/stream-reader.ts';
import { CooldownView } from '../routing/cooldown-view.ts';
import { ProviderKeys } from '../providers/provider-keys.ts';
import { adapterFor } from '../providers/registry.ts';
import { ProviderError } from '../errors/catalog.ts';
import { ModelRouter } from '../routing/model-router.ts';
import { Lifecycle } from '../process/lifecycle.ts';
import { ShutdownDeadline } from '../process/shutdown-deadline.ts';

/** Everything the API process is made of. */
export interface ApiRoot {
  settings: Settings;
  logger: Logger;
  /** The HTTP application (`http.listener` is what the server runs). */
  http: GatewayHttp;
  configStore: ConfigStore;
  redis: Redis;
  /** Response caches: `cache.stats.read()` for /stats. */
  cache: ResponseCache;
  /** Reloads config.yaml and ENV_FILE here and everywhere (SIGHUP, POST /admin/reload-config). */
  reloader: ConfigReloader;
  /** `rateLimitStats.read()` is `rate_limit_stats` of /stats. */
  rateLimitStats: RateLimitStats;
  /** Prometheus metrics; undefined when PROMETHEUS_METRICS_ENABLED=false. */
  metrics: GatewayMetrics | undefined;
  /** The /metrics-only app for METRICS_PORT; undefined unless that port is set and differs from PORT. */
  metricsHttp: GatewayHttp | undefined;
  keyStore: KeyStore;
  /** Starts the background parts (loops, subscriptions, the batch runner, loading the embedding model), once everything is built. */
  start(): void;
  /** Closes every part in reverse order of building, within `deadline` (default `SHUTDOWN_GRACE_MS` from now); resolves with the parts still unfinished. */
  close(deadline?: ShutdownDeadline): Promise<string[]>;
}

/** The composition root of the API: builds every dependency once and wires the app. */
export async function createApiRoot(
  settings: Settings,
  options: { logger?: Logger; envFile?: EnvFile } = {},
): Promise<ApiRoot> {
  // OTEL_* decide; off, no SDK is loaded and every span is the no-op one.
  const tracing = await openTracing(settings, 'llm-gateway-api');
  const logger =
    options.logger ??
    createLogger(settings, 'gateway-api', tracing.enabled ? { traceIds: () => tracing.currentIds() } : {});
  // Everything is built first and started at the end; closing goes the other way round.
  const lifecycle = new Lifecycle((name, err) =>
    logger.error({ err, part: name }, 'a background part failed to start'),
  );
  lifecycle.add({ name: 'span export', close: () => tracing.shutdown() });
  // An invalid config.yaml keeps the API up but not ready (/health/ready answers 503) until reloaded.
  const { configStore, startupError } = await openConfigLeniently(settings.CONFIG_PATH, logger);
  new ProviderKeys().warnUnset(configStore.current.providers, logger, 'models');

  const redis = createRedis(settings, 'command', 'api');
  lifecycle.add({ name: 'redis', close: () => redis.disconnect() });
  redis.on('error', (err) => logger.debug({ err }, 'redis command connection error'));
  if (!(await waitForReady(redis, 2_000)))
    logger.warn('Redis is not reachable yet: requests that need it answer 503 until it is');
  // Said before the API listens, so no job is accepted before the operator could know it may be lost.
  await warnIfRedisMayLoseJobs(redis, logger, settings.REDIS_DURABILITY_WARNING ? 'warn' : 'debug');
  const queues = new ChatQueues({ connection: redis, prefix: settings.REDIS_KEY_PREFIX });
  lifecycle.add({ name: 'queues', close: () => queues.close() });
  // A cluster's XREAD names keys of one slot only: one reader per slot, each on the slot's master.
  const reader: ReplyStreamReader = redis.isCluster
    ? new SlotStreamReaders({ cluster: redis, connectNode: (node) => createNodeRedis(settings, node, 'api-reader') })
    : new StreamReader({ connect: () => createRedis(settings, 'blocking', 'api-reader'), waker: redis });
  lifecycle.add({ name: 'reply stream reader', close: () => reader.close() });
  // Workers cancel the upstream calls of jobs nobody reads any more: this process says it reads while it does.
  const liveness = new ReaderLiveness({
    redis,
    prefix: settings.REDIS_KEY_PREFIX,
    reading: () => reader.size > 0,
    logger,
  });
  lifecycle.add({ name: 'reader liveness', start: () => liveness.start(), close: () => liveness.close() });
  // Off the request path: which providers have a live worker, read from the heartbeats every second.
  const workerPresence = new WorkerPresence({
    redis,
    prefix: settings.REDIS_KEY_PREFIX,
    providers: () => configStore.current.providers.map((p) => p.name),
  });
  lifecycle.add({ name: 'worker presence', start: () => workerPresence.start(), close: () => workerPresence.stop() });
  const dispatcher = new ChatDispatcher({
    config: () => configStore.current,
    queues,
    places: new QueuePlaces({ redis, prefix: settings.REDIS_KEY_PREFIX }),
    workers: workerPresence,
    reader,
    redis,
    prefix: settings.REDIS_KEY_PREFIX,
    liveness,
    streamTtlSeconds: settings.RESPONSE_STREAM_TTL,
    release: new ReplyRelease({ redis, ttlMs: settings.RESPONSE_STREAM_TTL * 1000 }),
    logger,
  });
  const prefix = settings.REDIS_KEY_PREFIX;
  const controlSubscriber = createRedis(settings, 'subscriber', 'api-control');
  controlSubscriber.on('error', (err) => logger.debug({ err }, 'redis control connection error'));
  const bus = new ControlBus({ subscriber: controlSubscriber, publisher: redis, logger });
  lifecycle.add({ name: 'control bus', close: () => bus.close() });
  // Off the request path: which deployments are in cooldown, announced by the workers; no Redis command while nothing is routed.
  const cooldowns = new CooldownView({ redis, prefix, bus, config: () => configStore.current });
  lifecycle.add({ name: 'cooldown view', start: () => cooldowns.start(), close: () => cooldowns.stop() });
  const watchedCooldowns = () =>
    new Map([...configStore.current.routing.cooledProviders].map((name) => [name, cooldowns.remainingMs(name)]));
  // Metrics first, the cache counts its hits into them
  const metrics = settings.PROMETHEUS_METRICS_ENABLED
    ? new GatewayMetrics({
        cooldowns: watchedCooldowns,
        knownModel: (model) => configStore.current.modelIndex.has(model),
        liveWorkers: () =>
          countLiveWorkers(
            redis,
            settings.REDIS_KEY_PREFIX,
            configStore.current.providers.map((p) => p.name),
          ),
        redisUp: () => redis.status === 'ready',
        queueDepths: () =>
          Promise.all(
            configStore.current.providers.map(async ({ name }) => ({
              provider: name,
              depth: await queues.waiting(name),
            })),
          ),
      })
    : undefined;
  // One guard for the chat and jobs routes; counts go to gateway_dlp_findings_total
  const dlp = new DlpGuard({
    enabled: settings.DLP_ENABLED,
    action: settings.DLP_ACTION,
    threshold: settings.DLP_CONFIDENCE_THRESHOLD,
    scanReplies: settings.DLP_SCAN_REPLIES,
    restore: settings.DLP_RESTORE,
    engine: new DlpEngine({
      ...(settings.DLP_ENTITIES.length > 0 ? { entities: settings.DLP_ENTITIES } : {}),
      phoneRegions: settings.DLP_PHONE_REGIONS,
    }),
    onFindings: (counts, action) =>
      metrics?.dlpFindingsSeen(Object.entries(counts).map(([entityType, count]) => ({ entityType, action, count }))),
    ...(settings.DLP_ANALYZER_URL
      ? {
          analyzer: new AnalyzerClient({
            url: settings.DLP_ANALYZER_URL,
            timeoutMs: settings.DLP_ANALYZER_TIMEOUT_MS,
            entities: settings.DLP_ANALYZER_ENTITIES,
            language: settings.DLP_ANALYZER_LANGUAGE,
          }),
          analyzerFailure: settings.DLP_ANALYZER_FAILURE,
        }
      : {}),
    onAnalyzerFailure: (reason, policy) => {
      metrics?.dlpAnalyzerFailed(reason, policy);
      // The reason only: the analyzer's input is the request's text.
      logger.warn(
        { reason, policy },
        policy === 'open'
          ? 'DLP analyzer failed: request screened by the in-process recognizers only'
          : 'DLP analyzer failed: request refused (DLP_ANALYZER_FAILURE=closed)',
      );
    },
  });
  // The caches may live on a Redis of their own (CACHE_REDIS_URL), where allkeys-lru cannot touch the queue.
  const cacheSettings = cacheRedisSettings(settings);
  const cacheRedis = cacheSettings === settings ? redis : createRedis(cacheSettings, 'command', 'api-cache');
  if (cacheRedis !== redis) {
    cacheRedis.on('error', (err) => logger.debug({ err }, 'cache redis connection error'));
    lifecycle.add({ name: 'cache redis', close: () => cacheRedis.disconnect() });
  }
  // Pass `onLookup` here to count gateway_cache_hits_total{cache_type}
  const cache = createResponseCache({
    onLookup: (cacheType, hit) => {
      if (hit) metrics?.cacheHit(cacheType);
    },
    onVerify: (outcome) => metrics?.semanticCandidate(outcome),
    settings,
    redis,
    cacheRedis,
    subscriber: () => createRedis(cacheSettings, 'subscriber', 'api-cache-sub'),
    config: () => configStore.current,
    logger,
    liveness,
  });
  // Loading the embedding model must not delay start (not awaited); semantic lookups begin once it is ready.
  lifecycle.add({ name: 'response caches', start: () => cache.start(), close: () => cache.close() });
  const keyStore = openKeyStore(settings, { onError: (err) => logger.debug({ err }, 'key store connection error') });
  lifecycle.add({
    name: 'key store',
    start: () =>
      keyStore.migrate().then(
        () => logger.info({ store: describeKeyStore(settings) }, 'key store ready'),
        (err: Error) =>
          logger.error(
            { store: describeKeyStore(settings), err },
            'key store unavailable: issued keys answer 503 until it is reachable',
          ),
      ),
    close: () => keyStore.close(),
  });
  const staticKeys = new StaticKeyAuthenticator(settings.API_KEYS, settings.ADMIN_API_KEYS);
  const authenticator = new GatewayAuthenticator({
    staticKeys,
    store: keyStore,
    cacheTtlMs: settings.AUTH_CACHE_TTL_MS,
    logger,
  });
  bus.subscribe(keyInvalidationChannel(prefix), (keyHash) => authenticator.invalidate(keyHash));
  const reloader = new ConfigReloader({
    role: 'api',
    configStore,
    settings,
    bus,
    redis,
    prefix,
    logger,
    ackTimeoutMs: settings.RELOAD_ACK_TIMEOUT_MS,
    withoutWorkers: (providers) => workerPresence.withoutWorkers(providers),
    ...(options.envFile ? { envFile: options.envFile } : {}),
    ...(startupError !== undefined ? { startupError } : {}),
  });
  lifecycle.add({ name: 'config reloader', start: () => reloader.start() });
  const limiter = new SlidingWindowLimiter({ redis, prefix });
  // Usage reaches the key store in batches, off the request path.
  const usageRecorder = new UsageRecorder({
    store: keyStore,
    onError: (err) => logger.warn({ err: err.message }, 'key usage not written yet: retried with the next batch'),
  });
  lifecycle.add({ name: 'usage recorder', close: () => usageRecorder.close() });
  const governor = new KeyGovernor({
    limiter: new KeyUsageLimiter({ redis, prefix }),
    recorder: usageRecorder,
    prices: () => configStore.current.prices,
    recordedSpend: async (keyId, fromDay, toDay) =>
      (await keyStore.usage({ keyId, fromDay, toDay })).reduce((sum, row) => sum + row.costNanoUsd, 0),
  });
  const routing = {
    router: new ModelRouter({ config: () => configStore.current, cooldowns }),
    cooldowns,
    onFallback: (requested: string, answered: string) => metrics?.fallback(requested, answered),
  };
  // The one request pipeline: every door and every batch line runs it.
  const pipeline = new ChatPipeline({ dispatcher, cache, dlp, governor, routing });
  const announceKeyChange = (keyHash: string) => redis.publish(keyInvalidationChannel(prefix), keyHash);
  const failedAuth =
    settings.AUTH_FAILURE_LIMIT > 0
      ? {
          throttle: new FailedAuthThrottle({
            redis,
            prefix,
            limit: settings.AUTH_FAILURE_LIMIT,
            windowMs: settings.AUTH_FAILURE_WINDOW * 1000,
            onError: (err) => logger.debug({ err }, 'failed authentication counted in this process only'),
          }),
          trustedProxies: settings.TRUST_PROXY,
        }
      : undefined;
  const rateLimitStats = new RateLimitStats({ redis, prefix });
  const health = new HealthService({
    redis,
    prefix,
    keyStore,
    config: () => configStore.current,
    configError: () => reloader.configError,
    waitingJobs: (provider) => queues.waiting(provider),
    probeQueues: (providers) => queues.probe(providers),
    backlogThreshold: settings.HEALTH_QUEUE_BACKLOG,
    version: serviceVersion(),
    cooldowns: () => cooldowns.snapshot(),
  });
  const openapi = buildOpenApiDocument({ version: serviceVersion() });
  const docAssets = resolveDocAssets();
  const stats = new StatsStore({
    redis,
    prefix,
    cache: cache.stats,
    rateLimit: rateLimitStats,
    onError: (err) => logger.debug({ err }, 'stats counter not written'),
  });
  lifecycle.add({ name: 'statistics flush', close: () => stats.close() });
  // Batches live in the key store's database; every API process runs some of them (one at a time each, by lease).
  const batchDb = openBatchDb(settings);
  lifecycle.add({ name: 'batch database', close: () => batchDb.close() });
  const batchStore = new BatchStore(batchDb, { fileTtlSeconds: settings.FILES_TTL });
  // Asynchronous jobs are one-line batches of the same database and runner.
  const jobRows = new JobRows(batchDb);
  const asyncJobs = new AsyncJobStore({
    rows: jobRows,
    redis,
    prefix: settings.REDIS_KEY_PREFIX,
    ttlSeconds: settings.ASYNC_JOB_TTL,
    ids: new AsyncJobIds(settings.JOB_ID_SECRET),
  });
  const batchRunner = new BatchRunner({
    store: batchStore,
    executor: new LineExecutor({
      pipeline,
      dispatcher,
      waitMs: settings.ASYNC_JOB_MAX_WAIT_MS,
      principalOf: storedKeyPrincipals(keyStore),
      onTokens: (provider, model, promptTokens, completionTokens, details) =>
        metrics?.tokens(provider, model, promptTokens, completionTokens, details),
    }),
    check: (request) => void dispatcher.route(request),
    maxLines: settings.BATCH_MAX_LINES,
    maxLineBytes: settings.MAX_REQUEST_BYTES,
    concurrency: settings.BATCH_CONCURRENCY,
    keyConcurrency: settings.BATCH_KEY_CONCURRENCY,
    pollMs: settings.BATCH_POLL_MS,
    leaseMs: settings.BATCH_LEASE_MS,
    jobs: jobRows,
    jobRecord: (id) => ({ key: asyncJobs.key(id), ttlSeconds: settings.ASYNC_JOB_TTL }),
    logger,
  });
  lifecycle.add({ name: 'batch runner', start: () => batchRunner.start(), close: () => batchRunner.close() });
  // Stored responses of the Responses door share the batch tables' database.
  const responseStore = new ResponseStore({ db: batchDb, ttlSeconds: settings.RESPONSES_TTL });
  const responsesDoor = new ResponsesDoor({
    store: responseStore,
    formatOf: (model) => configStore.current.modelIndex.get(model)?.format,
    nativeOf: (model) => {
      const provider = configStore.current.modelIndex.get(model);
      return provider?.responses_api === 'native' ? provider.name : undefined;
    },
    // After the reply was sent: the client has its answer; the id it got will read as unknown.
    onStoreError: (err, responseId) => logger.warn({ err: err.message, responseId }, 'response not stored'),
  });
  const providerKeys = new ProviderKeys();
  // What the API process asks of an upstream itself (native resources, token counts) goes with the workers' keys.
  const endpointOf = (provider: ProviderConfig) => ({
    baseUrl: provider.base_url ?? adapterFor(provider.format).defaultBaseUrl,
    apiKey: providerKeys.require(provider),
  });
  const tokenCounter = new TokenCounter({
    config: () => configStore.current,
    endpointOf,
    screen: (request) => dlp.screenAsync(request, {}),
    onEstimate: (provider, reason) => logger.warn({ provider, reason }, 'token count estimated'),
  });
  const nativeResources = new NativeResources({
    store: responseStore,
    endpointOf: (name) => {
      const provider = configStore.current.providerIndex.get(name);
      if (!provider) throw new ProviderError(`${name} is no longer configured.`);
      return endpointOf(provider);
    },
    // A retrieved response is screened as the reply that made it was (DLP_SCAN_REPLIES).
    screen: async (json) => {
      const { reply } = await dlp.screenExchangeAsync(
        { model: '', messages: [], n: 1, stream: false, include_usage: false },
        {},
      );
      return reply ? new ResponsesReplyFilter(reply).completionAsync(json) : json;
    },
  });
  const labeler = new EndpointLabeler(Object.keys(openapi.paths as object));
  const observers = [
    ...(tracing.enabled ? [traceRequests(tracing, labeler)] : []),
    observeRequests({ logger, labeler, metrics, stats, prices: () => configStore.current.prices }),
  ];
  // A page opened with PUBLIC_PATHS (e.g. /docs) brings its static assets along.
  const publicPaths = [...settings.PUBLIC_PATHS, ...publicAssetPaths(settings.PUBLIC_PATHS, docAssets)];
  const observabilityRouters = [
    ...(metrics ? [metricsRouter(metrics)] : []),
    statsRouter({
      stats,
      providers: () => configStore.current.providers.map((p) => p.name),
      keySpend: (view) => readKeySpend(keyStore, view),
    }),
    docsRouter({ document: openapi, assets: docAssets }),
    dashboardRouter({ assets: docAssets }),
  ];
  const metricsHttp =
    metrics && settings.METRICS_PORT !== undefined && settings.METRICS_PORT !== settings.PORT
      ? createApp({
          logger,
          authenticator,
          publicPaths,
          failedAuth,
          maxBodyBytes: 1024,
          routers: [metricsRouter(metrics)],
        })
      : undefined;

  const messages = messagesDoor({ config: () => configStore.current });
  const http = createApp({
    logger,
    authenticator,
    publicPaths,
    failedAuth,
    maxBodyBytes: settings.MAX_REQUEST_BYTES,
    observers,
    guards: [
      requireConfig(() => reloader.configError),
      rateLimit({
        limiter,
        rule: () => ({
          limit: reloader.settings.RATE_LIMIT_REQUESTS,
          windowMs: reloader.settings.RATE_LIMIT_WINDOW * 1000,
        }),
      }),
    ],
    // The hot route skips Express' router; it settles the rate limit itself, with its cache read.
    directRoutes: [
      doorRoute(chatDoor, {
        path: '/v1/chat/completions',
        pipeline,
        dispatcher,
        maxBodyBytes: settings.MAX_REQUEST_BYTES,
      }),
      doorRoute(responsesDoor, {
        path: '/v1/responses',
        pipeline,
        dispatcher,
        maxBodyBytes: settings.MAX_REQUEST_BYTES,
      }),
      doorRoute(messages, { path: '/v1/messages', pipeline, dispatcher, maxBodyBytes: settings.MAX_REQUEST_BYTES }),
      doorRoute(new EmbeddingsDoor(), {
        path: '/v1/embeddings',
        pipeline,
        dispatcher,
        maxBodyBytes: settings.MAX_REQUEST_BYTES,
      }),
    ],
    // Errors under each door's path (and the paths below it) in that door's shape.
    doors: [
      { path: '/v1/responses', door: responsesDoor },
      { path: '/v1/messages', door: messages },
    ],
    routers: [
      messagesCountTokensRouter(tokenCounter),
      healthRouter(health),
      adminConfigRouter(reloader),
      modelsRouter(() => configStore.current),
      adminCacheRouter({ cache, redis: cacheRedis, threshold: settings.SEMANTIC_CACHE_THRESHOLD }),
      adminKeysRouter({
        store: keyStore,
        announce: announceKeyChange,
        onRevoked: (keyId) => batchStore.cancelByKey(keyId),
      }),
      chatJobsRouter({
        dispatcher,
        store: asyncJobs,
        start: (id, trace) => batchRunner.startNow(id, trace),
        dlp,
        governor,
      }),
      filesRouter({
        store: batchStore,
        maxFileBytes: settings.BATCH_MAX_FILE_BYTES,
        maxConcurrentUploads: settings.FILES_MAX_CONCURRENT_UPLOADS,
        quotaBytes: settings.FILES_MAX_BYTES_PER_OWNER,
        maxFilenameLength: settings.FILES_MAX_FILENAME_LENGTH,
      }),
      batchesRouter({ store: batchStore }),
      responsesRouter({ store: responseStore, native: nativeResources }),
      ...observabilityRouters,
    ],
  });

  return {
    settings,
    logger,
    http,
    configStore,
    redis,
    cache,
    reloader,
    rateLimitStats,
    metrics,
    metricsHttp,
    keyStore,
    start: () => lifecycle.start(),
    close: (deadline = new ShutdownDeadline(settings.SHUTDOWN_GRACE_MS)) => lifecycle.close(deadline),
  };
}
