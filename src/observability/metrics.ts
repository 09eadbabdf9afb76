import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { registerScrapeGauges, type ScrapeGaugeOptions } from './scrape-gauges.ts';

/**
 * The gateway's Prometheus metrics, on a registry of its own (never
 * prom-client's global default registry, so two roots in one process — tests —
 * never collide).
 *
 * The four core metrics keep their published names and labels:
 *
 * | metric | type | labels |
 * |---|---|---|
 * | gateway_requests_total | counter | method, endpoint (route pattern), status |
 * | gateway_request_duration_seconds | histogram | le |
 * | gateway_cache_hits_total | counter | cache_type (`exact`, `semantic`) |
 * | gateway_tokens_used_total | counter | provider, model, type (`prompt`, `completion`, `cached_input`, `cache_write`, `reasoning`) |
 *
 * The last three `type` values are parts of the first two, not more tokens:
 * `cached_input` (read from the upstream's prompt cache) and `cache_write`
 * (written to it) are counted in `prompt` too, `reasoning` in `completion`.
 *
 * Added for operating the queue: gateway_queue_depth{provider},
 * gateway_live_workers{provider} and gateway_redis_up (read at scrape time,
 * scrape-gauges.ts), gateway_queue_wait_seconds{provider},
 * gateway_time_to_first_token_seconds{provider},
 * gateway_dlp_findings_total{entity_type,action},
 * gateway_dlp_analyzer_failures_total{reason,policy} (DLP analyzer calls that
 * failed or missed their time budget, and whether the request was refused or
 * went on with the in-process findings),
 * gateway_model_requests_total{model,status} (chat requests per model: a
 * model config.yaml does not list is counted as `other`),
 * gateway_semantic_candidates_total{outcome} (`verified`, or the reason the
 * verifier rejected a candidate: `payload`, `content`, `order`; `dissimilar` when the
 * full embedding model found a first-stage candidate below the threshold),
 * gateway_fallbacks_total{model,answered_by} (a fallback model answered),
 * gateway_deployment_cooldown_seconds{provider} (time left in cooldown, 0
 * when in service; routed providers only), and prom-client's process
 * defaults (`process_*`, `nodejs_*`).
 *
 * Every label value is bounded: endpoints are route patterns (or
 * `unmatched`), methods a fixed set, providers and models come from
 * config.yaml, entity types from the DLP recognizers.
 */

/** Token types counted inside prompt and completion tokens (gateway_tokens_used_total's extra `type` values). */
export interface TokenDetails {
  cachedRead: number;
  cacheWrite: number;
  reasoning: number;
}

/** Buckets of gateway_request_duration_seconds, in seconds; include 0.1, 0.5 and 1.0, the thresholds dashboards ask about. */
export const REQUEST_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5, 10, 30, 60, 120];

/** Buckets of the queue wait and time-to-first-token histograms, in seconds. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5, 10, 30, 60];

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** One DLP finding group as counted by gateway_dlp_findings_total. */
export interface DlpFindingCount {
  /** Recognizer entity type, e.g. `EMAIL_ADDRESS`. */
  entityType: string;
  /** What the guard did: `redact`, `block` or `log`. */
  action: string;
  /** How many findings of that type; default 1. */
  count?: number;
}

/** Options of {@link GatewayMetrics}. */
export interface GatewayMetricsOptions extends ScrapeGaugeOptions {
  /** Collect prom-client's process and Node.js defaults. @defaultValue true */
  collectDefaults?: boolean;
  /** Ms of cooldown left per watched provider (0: in service), read at scrape time from this process's view. */
  cooldowns?: () => ReadonlyMap<string, number>;
  /**
   * Whether config.yaml lists a model: only those get a series of their own
   * in gateway_model_requests_total, every other is `other`.
   * @defaultValue none: every model is `other`
   */
  knownModel?: (model: string) => boolean;
}

/** One finished HTTP request. */
export interface RequestObservation {
  method: string;
  /** Route pattern, never a raw path. */
  endpoint: string;
  status: number;
  seconds: number;
}

export class GatewayMetrics {
  /** The registry every metric of this instance lives on. */
  readonly registry: Registry;

  private readonly requestsTotal: Counter<'method' | 'endpoint' | 'status'>;
  private readonly requestDuration: Histogram;
  private readonly cacheHits: Counter<'cache_type'>;
  private readonly semanticCandidates: Counter<'outcome'>;
  private readonly tokensUsed: Counter<'provider' | 'model' | 'type'>;
  private readonly queueWait: Histogram<'provider'>;
  private readonly timeToFirstToken: Histogram<'provider'>;
  private readonly dlpFindings: Counter<'entity_type' | 'action'>;
  private readonly dlpAnalyzerFailures: Counter<'reason' | 'policy'>;
  private readonly fallbacks: Counter<'model' | 'answered_by'>;
  private readonly modelRequests: Counter<'model' | 'status'>;
  private readonly knownModel: (model: string) => boolean;

  constructor(options: GatewayMetricsOptions = {}) {
    const registry = new Registry();
    this.registry = registry;
    if (options.collectDefaults ?? true) collectDefaultMetrics({ register: registry });

    this.requestsTotal = new Counter({
      name: 'gateway_requests_total',
      help: 'HTTP requests handled, by method, endpoint (route pattern) and status code.',
      labelNames: ['method', 'endpoint', 'status'] as const,
      registers: [registry],
    });
    this.requestDuration = new Histogram({
      name: 'gateway_request_duration_seconds',
      help: 'Time from receiving a request to the end of its response (end of the stream for SSE), seconds.',
      buckets: REQUEST_DURATION_BUCKETS,
      registers: [registry],
    });
    this.cacheHits = new Counter({
      name: 'gateway_cache_hits_total',
      help: 'Chat completions answered from a cache, by cache type.',
      labelNames: ['cache_type'] as const,
      registers: [registry],
    });
    // Both series exist from the start, so rate() works before the first hit.
    this.cacheHits.inc({ cache_type: 'exact' }, 0);
    this.cacheHits.inc({ cache_type: 'semantic' }, 0);
    this.semanticCandidates = new Counter({
      name: 'gateway_semantic_candidates_total',
      help: 'Semantic-cache candidates found by the index, by what became of them: verified (served), or why they were rejected (payload, content, order: the verifier; dissimilar: below the threshold for the full embedding model).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    this.tokensUsed = new Counter({
      name: 'gateway_tokens_used_total',
      help: 'Tokens reported by upstream providers, by provider, model and type (prompt, completion; cached_input and cache_write are parts of prompt, reasoning of completion).',
      labelNames: ['provider', 'model', 'type'] as const,
      registers: [registry],
    });
    this.queueWait = new Histogram({
      name: 'gateway_queue_wait_seconds',
      help: 'Time a chat job waited in its provider queue before a worker took it, seconds.',
      labelNames: ['provider'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.timeToFirstToken = new Histogram({
      name: 'gateway_time_to_first_token_seconds',
      help: 'Streamed chat completions: time from receiving the request to the first chunk, seconds.',
      labelNames: ['provider'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.dlpFindings = new Counter({
      name: 'gateway_dlp_findings_total',
      help: 'Personal-data findings that acted, by entity type and action (redact, block, log). Never the values.',
      labelNames: ['entity_type', 'action'] as const,
      registers: [registry],
    });
    this.dlpAnalyzerFailures = new Counter({
      name: 'gateway_dlp_analyzer_failures_total',
      help: 'DLP analyzer calls that failed or missed their time budget, by reason and the failure policy applied (closed: refused, open: in-process findings only).',
      labelNames: ['reason', 'policy'] as const,
      registers: [registry],
    });

    this.fallbacks = new Counter({
      name: 'gateway_fallbacks_total',
      help: 'Chat completions answered by a fallback model, by requested model and the model that answered.',
      labelNames: ['model', 'answered_by'] as const,
      registers: [registry],
    });
    const { cooldowns } = options;
    if (cooldowns) {
      new Gauge({
        name: 'gateway_deployment_cooldown_seconds',
        help: 'Seconds a deployment (provider entry) stays out after upstream failures; 0 when in service. Providers of routed models only.',
        labelNames: ['provider'] as const,
        registers: [registry],
        collect() {
          this.reset();
          for (const [provider, ms] of cooldowns()) this.set({ provider }, ms / 1000);
        },
      });
    }

    this.modelRequests = new Counter({
      name: 'gateway_model_requests_total',
      help: 'Chat requests by model (one of config.yaml, or other) and status code.',
      labelNames: ['model', 'status'] as const,
      registers: [registry],
    });
    this.knownModel = options.knownModel ?? (() => false);

    registerScrapeGauges(registry, options);
  }

  /** Prometheus text exposition content type. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  observeRequest(observation: RequestObservation): void {
    const method = METHODS.has(observation.method) ? observation.method : 'OTHER';
    this.requestsTotal.inc({ method, endpoint: observation.endpoint, status: String(observation.status) });
    this.requestDuration.observe(observation.seconds);
  }

  /** One chat request for `model`, answered with `status`. */
  modelRequest(model: string, status: number): void {
    this.modelRequests.inc({ model: this.knownModel(model) ? model : 'other', status: String(status) });
  }

  cacheHit(cacheType: 'exact' | 'semantic'): void {
    this.cacheHits.inc({ cache_type: cacheType });
  }

  semanticCandidate(outcome: 'verified' | 'payload' | 'content' | 'order' | 'dissimilar'): void {
    this.semanticCandidates.inc({ outcome });
  }

  /** Counts a call's tokens; `details` are the token types inside the two totals (omitted: none reported). */
  tokens(
    provider: string,
    model: string,
    promptTokens: number,
    completionTokens: number,
    details?: TokenDetails,
  ): void {
    if (promptTokens > 0) this.tokensUsed.inc({ provider, model, type: 'prompt' }, promptTokens);
    if (completionTokens > 0) this.tokensUsed.inc({ provider, model, type: 'completion' }, completionTokens);
    if (!details) return;
    if (details.cachedRead > 0) this.tokensUsed.inc({ provider, model, type: 'cached_input' }, details.cachedRead);
    if (details.cacheWrite > 0) this.tokensUsed.inc({ provider, model, type: 'cache_write' }, details.cacheWrite);
    if (details.reasoning > 0) this.tokensUsed.inc({ provider, model, type: 'reasoning' }, details.reasoning);
  }

  queueWaitSeconds(provider: string, seconds: number): void {
    this.queueWait.observe({ provider }, seconds);
  }

  timeToFirstTokenSeconds(provider: string, seconds: number): void {
    this.timeToFirstToken.observe({ provider }, seconds);
  }

  /** Counts a request answered by `answered` instead of the `requested` model (both from config.yaml). */
  fallback(requested: string, answered: string): void {
    this.fallbacks.inc({ model: requested, answered_by: answered });
  }

  /** Counts a failed DLP analyzer call; shaped to be passed as the DLP guard's `onAnalyzerFailure` callback. */
  dlpAnalyzerFailed(reason: string, policy: string): void {
    this.dlpAnalyzerFailures.inc({ reason: boundedLabel(reason), policy: boundedLabel(policy) });
  }

  /** Counts DLP findings; shaped to be passed as the DLP guard's `onFindings` callback. */
  dlpFindingsSeen(findings: readonly DlpFindingCount[]): void {
    for (const f of findings) {
      this.dlpFindings.inc({ entity_type: boundedLabel(f.entityType), action: boundedLabel(f.action) }, f.count ?? 1);
    }
  }
}

/** Entity types and actions come from code, but a label is never allowed to grow without bound. */
function boundedLabel(value: string): string {
  return /^[A-Za-z0-9_]{1,64}$/.test(value) ? value : 'other';
}
