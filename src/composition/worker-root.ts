import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { ConfigStore } from '../config/config-store.ts';
import type { Settings } from '../config/settings.ts';
import { ChatExecutor } from '../execution/chat-executor.ts';
import { ReaderWatch } from '../execution/reader-watch.ts';
import { settledClose } from '../execution/settled-close.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import { StatsStore } from '../observability/stats-store.ts';
import { openTracing } from '../observability/tracing/open-tracing.ts';
import { UpstreamMetrics } from '../observability/upstream-metrics.ts';
import { serveWorkerMetrics } from '../observability/worker-metrics-server.ts';
import { bullPrefix, queueNameFor, type ChatJobData } from '../queue/job-contract.ts';
import { QueuePlaces } from '../queue/queue-places.ts';
import { createRedis, waitForReady } from '../redis/connections.ts';
import { warnIfRedisMayLoseJobs } from '../redis/durability-check.ts';
import { cancelChannel } from '../streams/protocol.ts';
import { ConfigReloader } from '../admin/config-reloader.ts';
import { ControlBus } from '../admin/control-bus.ts';
import type { EnvFile } from '../admin/env-file.ts';
import { WorkerHeartbeat } from '../health/worker-heartbeat.ts';
import { Lifecycle } from '../process/lifecycle.ts';
import { ShutdownDeadline } from '../process/shutdown-deadline.ts';
import { CooldownRecorder } from '../routing/cooldown-recorder.ts';
import { ProviderKeys } from '../providers/provider-keys.ts';

/** Most of the grace kept back from active jobs for the last steps of a shutdown, ms. */
const CLOSE_RESERVE_MS = 1_000;

/** Everything a worker process is made of. */
export interface WorkerRoot {
  logger: Logger;
  executor: ChatExecutor;
  workers: Worker<ChatJobData>[];
  /** Reloads config.yaml and ENV_FILE here and everywhere (SIGHUP). */
  reloader: ConfigReloader;
  /** Starts consuming the queues, the heartbeats and the subscriptions, once everything is built. */
  start(): void;
  /**
   * Stops taking jobs, lets active ones finish, disconnects; all within
   * `deadline` (default: `SHUTDOWN_GRACE_MS` from now), whatever Redis does.
   * Resolves with the steps it gave up on (empty after a clean stop).
   */
  close(deadline?: ShutdownDeadline): Promise<string[]>;
}

/**
 * The composition root of a provider worker process. It consumes the queues of
 * `providers` (names from config.yaml) and never touches the HTTP layer: the
 * job contract and the stream protocol are its only link to the API.
 */
export async function createWorkerRoot(
  settings: Settings,
  providers: readonly string[],
  options: { logger?: Logger; envFile?: EnvFile } = {},
): Promise<WorkerRoot> {
  const tracing = await openTracing(settings, 'llm-gateway-worker');
  const logger =
    options.logger ??
    createLogger(settings, 'gateway-worker', tracing.enabled ? { traceIds: () => tracing.currentIds() } : {});
  // Everything is built first and started at the end; closing goes the other way round.
  const lifecycle = new Lifecycle((name, err) => logger.error({ err, part: name }, 'a background part failed'));
  lifecycle.add({ name: 'span export', close: () => tracing.shutdown() });
  const configStore = await ConfigStore.open(settings.CONFIG_PATH);
  const served = providers.map((name) => {
    const provider = configStore.current.providerIndex.get(name);
    if (!provider)
      throw new Error(
        `unknown provider '${name}': config.yaml has ${[...configStore.current.providerIndex.keys()].join(', ')}`,
      );
    return provider;
  });
  new ProviderKeys().warnUnset(served, logger, 'jobs');

  const writer: Redis = createRedis(settings, 'bullmq', 'worker-writer');
  const subscriber: Redis = createRedis(settings, 'subscriber', 'worker-sub');
  for (const conn of [writer, subscriber]) conn.on('error', (err) => logger.debug({ err }, 'redis connection error'));
  const bullConnections: Redis[] = [];
  // Whatever is still pending, no connection may keep reconnecting (and the process alive) after the last step.
  lifecycle.add({
    name: 'redis disconnect',
    close: () => [subscriber, writer, ...bullConnections].forEach((conn) => conn.disconnect()),
  });
  lifecycle.add({
    name: 'redis quit',
    close: () =>
      Promise.all([subscriber, writer].map((conn) => (conn.status === 'ready' ? conn.quit() : conn.disconnect()))),
  });

  // provider_stats of /stats are counted where the upstream calls happen.
  const stats = new StatsStore({
    redis: writer,
    prefix: settings.REDIS_KEY_PREFIX,
    onError: (err) => logger.debug({ err }, 'stats counter not written'),
  });
  lifecycle.add({ name: 'statistics flush', close: () => stats.close() });
  // Upstream calls whose reply nobody reads any more (their API process died) are cancelled within seconds.
  const readerWatch = new ReaderWatch({ redis: writer, prefix: settings.REDIS_KEY_PREFIX, logger });
  lifecycle.add({ name: 'reader watch', close: () => readerWatch.close() });
  // Failures of deployments that can be fallen back from put them out for every API process (config.yaml `routing`).
  const cooldowns = new CooldownRecorder({
    redis: writer,
    prefix: settings.REDIS_KEY_PREFIX,
    config: () => configStore.current,
    logger,
  });
  // Upstream attempts and retries on this worker's own /metrics, when WORKER_METRICS_PORT asks for it.
  const metricsPort = settings.PROMETHEUS_METRICS_ENABLED ? settings.WORKER_METRICS_PORT : undefined;
  const upstreamMetrics = metricsPort !== undefined ? new UpstreamMetrics({ providers }) : undefined;
  const metricsServer =
    upstreamMetrics && metricsPort !== undefined
      ? await serveWorkerMetrics(upstreamMetrics.registry, { port: metricsPort, host: settings.HOST })
      : undefined;
  if (metricsServer) lifecycle.add({ name: 'metrics server', close: () => metricsServer.close() });
  const executor = new ChatExecutor({
    redis: writer,
    prefix: settings.REDIS_KEY_PREFIX,
    streamTtlSeconds: settings.RESPONSE_STREAM_TTL,
    config: () => configStore.current,
    logger,
    onFinished: (outcome) => stats.recordJob(outcome),
    readerWatch,
    onUpstreamFailure: (provider, failure) => cooldowns.note(provider, failure),
    tracing,
    ...(upstreamMetrics ? { upstreamMetrics } : {}),
  });

  lifecycle.add({
    name: 'cancel subscription',
    start: () => subscriber.subscribe(cancelChannel(settings.REDIS_KEY_PREFIX)),
  });
  subscriber.on('message', (channel, message) => {
    if (channel === cancelChannel(settings.REDIS_KEY_PREFIX) && executor.cancel(message)) {
      logger.debug({ jobId: message }, 'job cancelled by the client');
    }
  });

  const places = new QueuePlaces({ redis: writer, prefix: settings.REDIS_KEY_PREFIX });
  const closes: Array<() => Promise<void>> = [];
  const workers = providers.map((name) => {
    const provider = configStore.current.providerIndex.get(name)!;
    const connection = createRedis(settings, 'bullmq', `worker-${name}`);
    bullConnections.push(connection);
    const run = (job: Job<ChatJobData>) => {
      // The job has left the queue: its place (max_queue_depth) is free for the next one. Sent with the job's first commands.
      places
        .release(name, job.data.jobId)
        .catch((err: Error) => logger.debug({ err, jobId: job.data.jobId }, 'queue place not given back; it lapses'));
      // attemptsStarted counts BullMQ's hand-outs of the job: above 1, a worker may have died mid-reply.
      return executor.run(job.data, { first: job.attemptsStarted <= 1 });
    };
    const worker = new Worker<ChatJobData>(queueNameFor(name), run, {
      connection,
      prefix: bullPrefix(settings.REDIS_KEY_PREFIX, name),
      concurrency: provider.concurrency,
      lockDuration: settings.WORKER_LOCK_DURATION_MS,
      stalledInterval: settings.WORKER_STALLED_INTERVAL_MS,
      maxStalledCount: 2,
      // Consumes once the whole process is built (see start).
      autorun: false,
      ...(provider.rate_limit
        ? { limiter: { max: provider.rate_limit.max, duration: provider.rate_limit.duration_ms } }
        : {}),
    });
    worker.on('error', (err) => logger.debug({ err, provider: name }, 'worker error'));
    closes.push(settledClose(worker, connection));
    return worker;
  });
  lifecycle.add({
    name: 'job queues (active jobs, then BullMQ close)',
    start: () => Promise.all(workers.map((w) => w.run())),
    close: () => Promise.all(closes.map((close) => close())),
    // Active jobs get the grace but a last moment, kept to flush counters and say goodbye to Redis.
    // Settling a job needs Redis; when Redis stays away that can be forever, so it only gets until then.
    closeUntil: (deadline) => deadline.endsAt - Math.min(CLOSE_RESERVE_MS, deadline.remainingMs / 4),
  });
  // Heartbeats for /health, reloads broadcast by any process
  const controlSubscriber = createRedis(settings, 'subscriber', 'worker-control');
  controlSubscriber.on('error', (err) => logger.debug({ err }, 'redis control connection error'));
  // Fail-fast commands for reloads and heartbeats: during an outage neither a SIGHUP nor a shutdown may wait on a dead connection.
  const control = createRedis(settings, 'command', 'worker-control-cmd');
  control.on('error', (err) => logger.debug({ err }, 'redis control connection error'));
  lifecycle.add({ name: 'control connection', close: () => control.disconnect() });
  const bus = new ControlBus({ subscriber: controlSubscriber, publisher: control, logger });
  lifecycle.add({ name: 'control bus', close: () => bus.close() });
  const reloader = new ConfigReloader({
    role: 'worker',
    servedProviders: providers,
    configStore,
    settings,
    bus,
    redis: control,
    prefix: settings.REDIS_KEY_PREFIX,
    logger,
    ackTimeoutMs: settings.RELOAD_ACK_TIMEOUT_MS,
    ...(options.envFile ? { envFile: options.envFile } : {}),
  });
  lifecycle.add({ name: 'config reloader', start: () => reloader.start() });
  configStore.onChange((config) => {
    providers.forEach((name, i) => {
      const provider = config.providerIndex.get(name);
      if (!provider)
        logger.warn(
          { provider: name },
          'provider removed from config.yaml: its queue is still consumed until this worker stops',
        );
      else if (workers[i] && workers[i].concurrency !== provider.concurrency)
        workers[i].concurrency = provider.concurrency;
    });
  });
  const heartbeat = new WorkerHeartbeat({
    redis: control,
    prefix: settings.REDIS_KEY_PREFIX,
    workerId: bus.processId,
    providers: () => providers.filter((_, i) => workers[i]?.isRunning() && !workers[i]?.isPaused()),
    intervalMs: settings.WORKER_HEARTBEAT_MS,
    logger,
  });
  // The first beat must not be lost to a connection still coming up: /health would call this worker's providers unavailable until the next one.
  await waitForReady(control, 2_000);
  await warnIfRedisMayLoseJobs(control, logger, settings.REDIS_DURABILITY_WARNING ? 'warn' : 'debug');
  // Leaves /health first when closing, so no new work is routed here while active jobs finish.
  lifecycle.add({ name: 'heartbeat removal', start: () => heartbeat.start(), close: () => heartbeat.stop(providers) });

  return {
    logger,
    executor,
    workers,
    reloader,
    start() {
      lifecycle.start();
      logger.info({ providers }, 'worker started');
    },
    close: (deadline = new ShutdownDeadline(settings.SHUTDOWN_GRACE_MS)) => lifecycle.close(deadline),
  };
}
