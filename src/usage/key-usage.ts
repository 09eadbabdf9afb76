/**
 * Usage of issued keys as the key store keeps it: one row per key, model and
 * UTC day. Cost is in nano-USD (1e-9 USD) integers so sums stay exact in
 * both databases and in Redis' Lua.
 */

/** Usage to add to one row. */
export interface UsageDelta {
  keyId: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Of `promptTokens`, read from the upstream's prompt cache. @defaultValue 0 */
  cachedTokens?: number;
  /** Of `promptTokens`, written to the upstream's prompt cache. @defaultValue 0 */
  cacheWriteTokens?: number;
  /** Of `completionTokens`, spent reasoning. @defaultValue 0 */
  reasoningTokens?: number;
  costNanoUsd: number;
}

/** One stored row: the same fields, summed. */
export type KeyUsageRow = Required<UsageDelta>;

/** A usage row as either database returns it (PostgreSQL's BIGINT arrives as a string). */
export interface UsageDbRow {
  key_id: string;
  day: string;
  model: string;
  requests: number | string;
  prompt_tokens: number | string;
  completion_tokens: number | string;
  cached_tokens: number | string;
  cache_write_tokens: number | string;
  reasoning_tokens: number | string;
  cost_nano_usd: number | string;
}

/** Sums stay far below 2^53, so Number() is exact. */
export function usageFromDbRow(row: UsageDbRow): KeyUsageRow {
  return {
    keyId: row.key_id,
    day: row.day,
    model: row.model,
    requests: Number(row.requests),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cachedTokens: Number(row.cached_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    costNanoUsd: Number(row.cost_nano_usd),
  };
}

/** A key's rows summed over models and days. */
export type KeyUsageTotal = Omit<KeyUsageRow, 'day' | 'model'>;

export const NANO_PER_USD = 1e9;

/** `YYYY-MM-DD` of `at` in UTC. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

type UsageSum = Omit<KeyUsageRow, 'keyId' | 'day' | 'model'>;

/** The usage record of the admin API and the CLI (USD, snake_case). */
function usageJson(row: UsageSum) {
  return {
    requests: row.requests,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    cached_tokens: row.cachedTokens,
    cache_write_tokens: row.cacheWriteTokens,
    reasoning_tokens: row.reasoningTokens,
    cost_usd: row.costNanoUsd / NANO_PER_USD,
  };
}

function addTo(sum: UsageSum, row: UsageSum): void {
  sum.requests += row.requests;
  sum.promptTokens += row.promptTokens;
  sum.completionTokens += row.completionTokens;
  sum.cachedTokens += row.cachedTokens;
  sum.cacheWriteTokens += row.cacheWriteTokens;
  sum.reasoningTokens += row.reasoningTokens;
  sum.costNanoUsd += row.costNanoUsd;
}

/** Totals, per model and per day of usage rows (USD). */
export function usageReport(rows: readonly KeyUsageRow[]) {
  const empty = (): UsageSum => ({
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costNanoUsd: 0,
  });
  const total = empty();
  const byModel = new Map<string, UsageSum>();
  for (const row of rows) {
    addTo(total, row);
    const model = byModel.get(row.model) ?? empty();
    addTo(model, row);
    byModel.set(row.model, model);
  }
  return {
    total: usageJson(total),
    by_model: Object.fromEntries([...byModel].map(([model, sum]) => [model, usageJson(sum)])),
    by_day: rows.map((row) => ({ day: row.day, model: row.model, ...usageJson(row) })),
  };
}
