import type { Principal } from '../auth/principal.ts';
import { requestTexts } from '../chat/message-texts.ts';
import { maxOutputTokens, type ChatRequest } from '../chat/types.ts';
import {
  BudgetExceededError,
  ModelNotAllowedError,
  RateLimitExceededError,
  ServiceUnavailableError,
} from '../errors/catalog.ts';
import type { KeyUsageLimiter, KeyUsageLimits, UsageReservation } from '../ratelimit/key-usage-limiter.ts';
import { NANO_PER_USD, utcDay } from './key-usage.ts';
import { costNanoUsd, type PriceTable, type PricedCounts } from './price-table.ts';
import type { UsageRecorder } from './usage-recorder.ts';

/** Options of {@link KeyGovernor}. */
export interface KeyGovernorOptions {
  limiter: KeyUsageLimiter;
  recorder: UsageRecorder;
  /** The price table now in force (config.yaml `prices`; reloadable). */
  prices: () => PriceTable;
  /** Spend the key store recorded for a key from `fromDay` to `toDay` (UTC, inclusive), nano-USD: seeds a budget's counter. */
  recordedSpend: (keyId: string, fromDay: string, toDay: string) => Promise<number>;
  /**
   * Completion tokens assumed on admission when the request sets neither
   * `max_tokens` nor `max_completion_tokens`.
   * @defaultValue 256
   */
  defaultCompletionEstimate?: number;
  /** Clock for budget periods. @defaultValue `Date.now` */
  now?: () => number;
}

/**
 * Tokens of a call by type. The details are parts of the two totals
 * (`cachedReadTokens` and `cacheWriteTokens` of `promptTokens`,
 * `cacheWrite1hTokens` of `cacheWriteTokens`, `reasoningTokens` of
 * `completionTokens`) and are 0 when the provider reported none.
 */
export interface CallUsage {
  promptTokens: number;
  completionTokens: number;
  cachedReadTokens?: number;
  cacheWriteTokens?: number;
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
}

/** The counts {@link costNanoUsd} prices. */
export function pricedCounts(usage: CallUsage): PricedCounts {
  return {
    prompt: usage.promptTokens,
    completion: usage.completionTokens,
    cachedRead: usage.cachedReadTokens ?? 0,
    cacheWrite: usage.cacheWriteTokens ?? 0,
    cacheWrite1h: usage.cacheWrite1hTokens ?? 0,
    reasoning: usage.reasoningTokens ?? 0,
  };
}

/** How a dispatched request ended, for {@link KeyGovernor.finish}. */
export interface CallOutcome {
  model: string;
  /** What the provider reported; undefined when the reply never said. */
  usage?: CallUsage | undefined;
  /** The call failed before any usage (nothing to charge). */
  failed: boolean;
  /** This request read an identical request's reply: its tokens were charged there. */
  coalesced: boolean;
}

/** An admitted request of an issued key: what {@link KeyGovernor.finish} settles. */
export interface GovernedCall {
  principal: Principal;
  /** Present for a key with a token limit or a budget, with the estimate it was admitted at. */
  reservation?: UsageReservation;
  estimate?: { promptTokens: number; completionTokens: number };
}

/**
 * The per-key checks of a chat request beyond the request rate: allowed
 * models (403 `model_not_allowed`), tokens per minute (429
 * `rate_limit_exceeded`) and the spend budget (429 `budget_exceeded`) on
 * admission, then the real usage and spend on completion: settled in Redis
 * for the limits and added to the key store's usage rows.
 *
 * A key with neither a token limit nor a budget never reaches Redis here
 * ({@link admit} returns without I/O), and its usage is only added to an
 * in-memory row that is written to the database in the background.
 */
export class KeyGovernor {
  private readonly options: KeyGovernorOptions;
  /** Seeds in progress, so a burst at the start of a period asks the key store once per process. */
  private readonly seeding = new Map<string, Promise<void>>();

  constructor(options: KeyGovernorOptions) {
    this.options = options;
  }

  /** 403 `model_not_allowed` unless the key may use `model`. */
  checkModel(principal: Principal | undefined, model: string): void {
    if (principal && !principal.mayUseModel(model)) throw new ModelNotAllowedError(model);
  }

  /** Admits a request to be sent upstream; throws 429 when a token limit or budget is used up. */
  async admit(principal: Principal | undefined, request: ChatRequest): Promise<GovernedCall | undefined> {
    if (!principal) return undefined;
    const policy = principal.policy;
    const limits: KeyUsageLimits = {};
    if (policy?.tokens_per_minute !== undefined) limits.tokensPerMinute = policy.tokens_per_minute;
    if (policy?.budget) limits.budgetNanoUsd = Math.round(policy.budget.amount_usd * NANO_PER_USD);
    // Nothing to limit: only an issued key's usage is recorded, and that in memory.
    if (limits.tokensPerMinute === undefined && limits.budgetNanoUsd === undefined)
      return principal.keyId === undefined ? undefined : { principal };

    const now = new Date((this.options.now ?? Date.now)());
    const period = policy?.budget ? budgetPeriod(policy.budget.period, now) : budgetPeriod('day', now);
    const promptTokens = estimatePromptTokens(request);
    const completionTokens = maxOutputTokens(request) ?? this.options.defaultCompletionEstimate ?? 256;
    const ttlSeconds = Math.ceil((period.endsAt.getTime() - now.getTime()) / 1000) + 86_400;
    const estimate = {
      tokens: promptTokens + completionTokens,
      costNanoUsd: costNanoUsd(this.options.prices(), request.model, {
        prompt: promptTokens,
        completion: completionTokens,
      }),
      periodId: period.id,
      ttlSeconds,
    };
    let decision = await this.options.limiter.admit(principal.keyHash, limits, estimate);
    if ('refusal' in decision && decision.refusal.reason === 'unseeded') {
      await this.seed(principal, period, ttlSeconds);
      decision = await this.options.limiter.admit(principal.keyHash, limits, estimate);
    }
    if ('refusal' in decision) {
      const { refusal } = decision;
      if (refusal.reason !== 'tokens')
        throw new BudgetExceededError(policy!.budget!.amount_usd, policy!.budget!.period, period.endsAt);
      const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
      throw new RateLimitExceededError(
        seconds,
        { 'X-RateLimit-Limit-Tokens': String(limits.tokensPerMinute), 'X-RateLimit-Remaining-Tokens': '0' },
        'Token limit',
      );
    }
    return { principal, reservation: decision.reservation, estimate: { promptTokens, completionTokens } };
  }

  /** A new period, or a Redis that lost the counter: starts it from what the key store recorded. */
  private seed(principal: Principal, period: ReturnType<typeof budgetPeriod>, ttlSeconds: number): Promise<void> {
    const id = `${principal.keyHash}:${period.id}`;
    let pending = this.seeding.get(id);
    if (!pending) {
      const { keyId } = principal;
      pending = (
        keyId === undefined
          ? Promise.resolve(0)
          : this.options.recordedSpend(keyId, period.startDay, utcDay(new Date(period.endsAt.getTime() - 1)))
      )
        .catch((err: unknown) => {
          // Unknown spend is not zero spend: refuse for now rather than let a budget through.
          throw new ServiceUnavailableError(
            "The gateway cannot read this key's recorded spend from its key store; try again shortly.",
            { cause: err },
          );
        })
        .then((spent) => this.options.limiter.seed(principal.keyHash, period.id, spent, ttlSeconds))
        .finally(() => this.seeding.delete(id));
      this.seeding.set(id, pending);
    }
    return pending;
  }

  /**
   * Settles an admitted call: the reported usage replaces the estimate; a
   * failed call is charged nothing; a call whose usage is unknown (the
   * client left first) keeps its estimate. Never throws.
   */
  async finish(call: GovernedCall | undefined, outcome: CallOutcome): Promise<void> {
    if (!call) return;
    const reported = outcome.coalesced || outcome.failed ? { promptTokens: 0, completionTokens: 0 } : outcome.usage;
    // Unknown usage: a metered key is charged its estimate; any other key's call is counted without tokens.
    const charged = pricedCounts(reported ?? call.estimate ?? { promptTokens: 0, completionTokens: 0 });
    const cost = costNanoUsd(this.options.prices(), outcome.model, charged);
    if (call.principal.keyId !== undefined) {
      this.options.recorder.add({
        keyId: call.principal.keyId,
        day: utcDay(new Date((this.options.now ?? Date.now)())),
        model: outcome.model,
        requests: 1,
        promptTokens: charged.prompt,
        completionTokens: charged.completion,
        cachedTokens: charged.cachedRead ?? 0,
        cacheWriteTokens: charged.cacheWrite ?? 0,
        reasoningTokens: charged.reasoning ?? 0,
        costNanoUsd: cost,
      });
    }
    const reservation = call.reservation;
    if (!reservation) return;
    const used = { tokens: charged.prompt + charged.completion, costNanoUsd: cost };
    // The limit errs on the generous side if Redis is gone now: the estimate then expires with its window.
    await this.options.limiter.settle(reservation, used).catch(() => {});
  }
}

/** Prompt tokens guessed from the text, ~4 characters a token, before the provider counts them. */
export function estimatePromptTokens(request: ChatRequest): number {
  let chars = 0;
  for (const text of requestTexts(request)) chars += text.length;
  return Math.ceil(chars / 4);
}

/** The budget period containing `now` (UTC): its id, first day and end. */
export function budgetPeriod(period: 'day' | 'month', now: Date): { id: string; startDay: string; endsAt: Date } {
  if (period === 'day') {
    return {
      id: utcDay(now),
      startDay: utcDay(now),
      endsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)),
    };
  }
  return {
    id: utcDay(now).slice(0, 7),
    startDay: `${utcDay(now).slice(0, 7)}-01`,
    endsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}
