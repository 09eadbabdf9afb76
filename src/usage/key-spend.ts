import type { KeyStore } from '../auth/key-store.ts';
import type { KeySpend, StatsRecord } from '../observability/stats-schema.ts';
import { NANO_PER_USD, utcDay } from './key-usage.ts';

/** Keys listed in `key_spend` of /stats at most. */
const MAX_KEYS = 100;

/**
 * `key_spend` of /stats: every issued key's usage and spend summed from the
 * key store, all time and today. `keyId` narrows it to one key (what a
 * non-admin caller may see).
 */
export async function readKeySpend(
  store: KeyStore,
  view: { all: true } | { keyId: string },
  now = new Date(),
): Promise<NonNullable<StatsRecord['key_spend']>> {
  const [all, today, records] = await Promise.all([
    store.usageTotals({}),
    store.usageTotals({ fromDay: utcDay(now) }),
    store.list({ includeRevoked: true }),
  ]);
  const todayById = new Map(today.map((t) => [t.keyId, t.costNanoUsd]));
  const recordById = new Map(records.map((r) => [r.id, r]));
  const keys: KeySpend[] = [];
  for (const total of all) {
    const record = recordById.get(total.keyId);
    if (!record || ('keyId' in view && view.keyId !== total.keyId)) continue;
    keys.push({
      id: total.keyId,
      api_key: record.maskedKey,
      owner: record.owner,
      ...record.policy.metadata,
      requests: total.requests,
      prompt_tokens: total.promptTokens,
      completion_tokens: total.completionTokens,
      cached_tokens: total.cachedTokens,
      cache_write_tokens: total.cacheWriteTokens,
      reasoning_tokens: total.reasoningTokens,
      cost_usd: total.costNanoUsd / NANO_PER_USD,
      cost_today_usd: (todayById.get(total.keyId) ?? 0) / NANO_PER_USD,
    });
  }
  keys.sort((a, b) => b.cost_usd - a.cost_usd || a.id.localeCompare(b.id));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0) / NANO_PER_USD;
  const visible = 'keyId' in view ? keys : undefined;
  return {
    total_cost_usd: visible ? (visible[0]?.cost_usd ?? 0) : sum(all.map((t) => t.costNanoUsd)),
    cost_today_usd: visible ? (visible[0]?.cost_today_usd ?? 0) : sum(today.map((t) => t.costNanoUsd)),
    keys: keys.slice(0, MAX_KEYS),
  };
}
