import { mapRequestTexts, requestTexts } from '../chat/message-texts.ts';
import type { ChatRequest } from '../chat/types.ts';
import { PiiDetectedError, ServiceUnavailableError } from '../errors/catalog.ts';
import { AnalyzerFailure, type AnalyzerClient, type AnalyzerFailureReason } from './analyzer-client.ts';
import { DlpEngine } from './engine.ts';
import type { AnalyzerFailurePolicy, DlpAction } from './entities.ts';
import { overlapsAny, resolveOverlaps } from './overlap.ts';
import type { Finding } from './recognizer.ts';
import { PlaceholderRegistry, redactText } from './redaction.ts';
import { ReplyFilter } from './reply-filter.ts';

/** Findings per entity type, e.g. `{ EMAIL_ADDRESS: 2 }`. Counts only, never values. */
export type DlpFindingCounts = Record<string, number>;

/** Options of {@link DlpGuard}; the settings DLP_ENABLED, DLP_ACTION and DLP_CONFIDENCE_THRESHOLD. */
export interface DlpGuardOptions {
  /** Scan at all. @defaultValue true */
  enabled?: boolean;
  /** What findings at or above the threshold cause. @defaultValue `redact` */
  action?: DlpAction;
  /** Minimum score, after context, of a finding that acts. @defaultValue 0.8 */
  threshold?: number;
  /** The detection engine. Default: every built-in recognizer. */
  engine?: DlpEngine;
  /** Scan the provider's replies too, with the same action (DLP_SCAN_REPLIES). @defaultValue false */
  scanReplies?: boolean;
  /** Put the client's own placeholders back in the reply, `redact` only (DLP_RESTORE). @defaultValue false */
  restore?: boolean;
  /**
   * Called once per request that had findings, with counts per entity type
   * and the action taken (metrics, /stats). Called before a blocked request
   * is rejected. A throwing callback never fails the request.
   */
  onFindings?: (counts: Readonly<DlpFindingCounts>, action: DlpAction) => void;
  /**
   * A Presidio analyzer for the types that need a language model
   * (DLP_ANALYZER_URL); its findings are merged with the engine's and
   * redacted once. Only the async entry points use it.
   * @defaultValue none: the engine alone
   */
  analyzer?: AnalyzerClient;
  /**
   * What a failed or late analyzer call does (DLP_ANALYZER_FAILURE):
   * `closed` refuses the request with 503 `service_unavailable`; `open`
   * goes on with the engine's findings alone.
   * @defaultValue `closed`
   */
  analyzerFailure?: AnalyzerFailurePolicy;
  /** Called once per failed analyzer call, with the reason and the policy applied (metrics, the log line). Never throws into a request. */
  onAnalyzerFailure?: (reason: AnalyzerFailureReason, policy: AnalyzerFailurePolicy) => void;
}

/** The result of {@link DlpGuard.inspect}. */
export interface DlpOutcome {
  /** The request to send on: a redacted copy in `redact` mode when something was found, else the input. */
  request: ChatRequest;
  /** Findings per entity type (empty when none or when DLP is off). */
  findings: DlpFindingCounts;
  /** The action configured. */
  action: DlpAction;
  /** In `block` mode with findings: the error to answer with (400 `pii_detected`, entity types only). */
  blocked?: PiiDetectedError;
  /** The request's placeholders, when it was redacted. */
  registry?: PlaceholderRegistry;
}

/**
 * Applies DLP to a chat request before the cache, the queue or a provider
 * sees it: scans every text of every message, whatever its role (earlier
 * assistant turns are re-sent by the client and are just as much input):
 * contents and text parts, names, tool-call arguments and tool results, and
 * the request's stop sequences, `user`, metadata values and tool
 * descriptions (see {@link mapRequestTexts}). Image bytes are not scanned. Then
 *
 * - `redact`: replaces each finding with a numbered typed placeholder,
 *   consistent across the request's messages (see {@link PlaceholderRegistry});
 * - `block`: returns a {@link PiiDetectedError} naming the entity types;
 * - `log`: leaves the request as it is and only counts.
 */
export class DlpGuard {
  readonly enabled: boolean;
  readonly action: DlpAction;
  readonly threshold: number;
  readonly engine: DlpEngine;
  readonly scanReplies: boolean;
  readonly restore: boolean;
  readonly analyzer: AnalyzerClient | undefined;
  readonly analyzerFailure: AnalyzerFailurePolicy;
  private readonly onFindings: DlpGuardOptions['onFindings'];
  private readonly onAnalyzerFailure: DlpGuardOptions['onAnalyzerFailure'];

  constructor(options: DlpGuardOptions = {}) {
    const threshold = options.threshold ?? 0.8;
    if (!(threshold >= 0 && threshold <= 1))
      throw new RangeError(`DLP threshold must be within [0, 1], got ${threshold}`);
    this.enabled = options.enabled ?? true;
    this.action = options.action ?? 'redact';
    this.threshold = threshold;
    this.engine = options.engine ?? new DlpEngine();
    this.scanReplies = this.enabled && (options.scanReplies ?? false);
    this.restore = this.enabled && this.action === 'redact' && (options.restore ?? false);
    this.onFindings = options.onFindings;
    this.analyzer = this.enabled ? options.analyzer : undefined;
    this.analyzerFailure = options.analyzerFailure ?? 'closed';
    this.onAnalyzerFailure = options.onAnalyzerFailure;
  }

  /** The engine's findings alone: the synchronous path, complete when no analyzer is configured. */
  inspect(request: ChatRequest): DlpOutcome {
    if (!this.enabled) return { request, findings: {}, action: this.action };
    return this.decide(
      request,
      requestTexts(request).map((text) => this.engine.analyze(text, { threshold: this.threshold })),
    );
  }

  /** {@link inspect} with the analyzer's findings merged in, when one is configured. */
  async inspectAsync(request: ChatRequest): Promise<DlpOutcome> {
    if (!this.enabled) return { request, findings: {}, action: this.action };
    if (!this.analyzer) return this.inspect(request);
    return this.decide(request, await this.detect(requestTexts(request)));
  }

  /**
   * Findings per text, the engine's and the analyzer's merged (overlaps
   * resolved once, so a value is redacted once). Applies the failure policy:
   * throws 503 `service_unavailable` when closed, else the engine's alone.
   */
  async detect(texts: readonly string[]): Promise<Finding[][]> {
    const local = texts.map((text) => this.engine.analyze(text, { threshold: this.threshold }));
    if (!this.analyzer) return local;
    let remote: Finding[][];
    try {
      remote = await this.analyzer.analyze(texts, this.threshold);
    } catch (err) {
      const failure =
        err instanceof AnalyzerFailure ? err : new AnalyzerFailure('bad_reply', 'the DLP analyzer failed');
      this.reportFailure(failure.reason);
      if (this.analyzerFailure === 'closed') {
        throw new ServiceUnavailableError(
          `The request could not be screened for personal data: ${failure.message}. Try again later.`,
          { headers: { 'Retry-After': '1' } },
        );
      }
      return local;
    }
    return local.map((list, i) => merge(list, remote[i]!));
  }

  private decide(request: ChatRequest, perText: Finding[][]): DlpOutcome {
    const findings: DlpFindingCounts = {};
    for (const list of perText) for (const f of list) findings[f.entity] = (findings[f.entity] ?? 0) + 1;
    const types = Object.keys(findings).sort();
    if (types.length === 0) return { request, findings, action: this.action };

    this.report(findings);
    if (this.action === 'block')
      return { request, findings, action: this.action, blocked: new PiiDetectedError(types) };
    if (this.action === 'log') return { request, findings, action: this.action };

    const registry = new PlaceholderRegistry();
    let i = 0;
    const redacted = mapRequestTexts(request, (text) => redactText(text, perText[i++] ?? [], registry));
    return { request: redacted, findings, action: this.action, registry };
  }

  /**
   * {@link inspect} for a request handler: records the counts on
   * `context.dlpFindings` (entity type -> count, for the request log),
   * throws the {@link PiiDetectedError} in `block` mode, and returns the
   * request to send on.
   */
  screen(request: ChatRequest, context: { dlpFindings?: DlpFindingCounts }): ChatRequest {
    const outcome = this.inspect(request);
    context.dlpFindings = outcome.findings;
    if (outcome.blocked) throw outcome.blocked;
    return outcome.request;
  }

  /**
   * {@link screen} for an exchange whose reply this process relays: also
   * returns the {@link ReplyFilter} to pass the reply through, or undefined
   * when neither DLP_SCAN_REPLIES nor DLP_RESTORE applies (the reply path is
   * then untouched).
   */
  screenExchange(
    request: ChatRequest,
    context: { dlpFindings?: DlpFindingCounts },
  ): { request: ChatRequest; reply?: ReplyFilter } {
    return this.exchange(this.inspect(request), context);
  }

  /** {@link screen} with the analyzer (when configured): the entry point of every request path. */
  async screenAsync(request: ChatRequest, context: { dlpFindings?: DlpFindingCounts }): Promise<ChatRequest> {
    const outcome = await this.inspectAsync(request);
    context.dlpFindings = outcome.findings;
    if (outcome.blocked) throw outcome.blocked;
    return outcome.request;
  }

  /** {@link screenExchange} with the analyzer (when configured); its reply filter scans with the analyzer too. */
  async screenExchangeAsync(
    request: ChatRequest,
    context: { dlpFindings?: DlpFindingCounts },
  ): Promise<{ request: ChatRequest; reply?: ReplyFilter }> {
    return this.exchange(await this.inspectAsync(request), context);
  }

  private exchange(
    outcome: DlpOutcome,
    context: { dlpFindings?: DlpFindingCounts },
  ): { request: ChatRequest; reply?: ReplyFilter } {
    context.dlpFindings = outcome.findings;
    if (outcome.blocked) throw outcome.blocked;
    const originals = this.restore && outcome.registry ? outcome.registry.originalsSnapshot() : undefined;
    if (!this.scanReplies && !originals) return { request: outcome.request };
    const scan = this.scanReplies
      ? {
          engine: this.engine,
          threshold: this.threshold,
          action: this.action,
          report: (counts: DlpFindingCounts) => this.report(counts),
          ...(this.analyzer ? { detect: async (text: string) => (await this.detect([text]))[0]! } : {}),
        }
      : undefined;
    const reply = new ReplyFilter({
      registry: outcome.registry ?? new PlaceholderRegistry(),
      ...(scan ? { scan } : {}),
      ...(originals ? { originals } : {}),
    });
    return { request: outcome.request, reply };
  }

  private reportFailure(reason: AnalyzerFailureReason): void {
    try {
      this.onAnalyzerFailure?.(reason, this.analyzerFailure);
    } catch {
      // As with counting: a broken sink must not change what the policy decided.
    }
  }

  private report(findings: DlpFindingCounts): void {
    if (!this.onFindings) return;
    try {
      this.onFindings(findings, this.action);
    } catch {
      // Counting is best effort: a broken metrics sink must not fail or leak a request.
    }
  }
}

/**
 * The engine's findings and the analyzer's, overlaps resolved once. The
 * analyzer's catch-all `DATE_TIME` yields to an engine finding on the same
 * text, whatever their scores (`Date of Birth: 05/21/1958` is a birth date,
 * not a date that Presidio's context words lifted to 0.95).
 */
function merge(local: Finding[], remote: readonly Finding[]): Finding[] {
  if (remote.length === 0) return local;
  const kept = remote.filter((f) => f.entity !== 'DATE_TIME' || !overlapsAny(local, f));
  return resolveOverlaps([...local, ...kept]);
}
