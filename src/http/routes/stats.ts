import { Router } from 'express';
import type { StatsRecord } from '../../observability/stats-schema.ts';
import type { StatsStore, TopUsersView } from '../../observability/stats-store.ts';
import { contextOf } from '../../pipeline/request-context.ts';

/** Options of {@link statsRouter}. */
export interface StatsRouterOptions {
  stats: StatsStore;
  /** Provider names of the current config.yaml; each appears in provider_stats. */
  providers: () => readonly string[];
  /** `key_spend` from the key store: every key for an admin, `keyId` alone otherwise. @defaultValue no `key_spend` */
  keySpend?: (view: { all: true } | { keyId: string }) => Promise<StatsRecord['key_spend']>;
}

/**
 * `GET /stats`: the statistics record, totals of every gateway process (read
 * from Redis). `rate_limit_stats.top_users` lists every busy key for an admin
 * key, the caller's own entry for any other key, and nothing when /stats is a
 * public path called without a key: even masked, other keys' entries are not
 * every caller's business. `key_spend` (issued keys' spend, from the key
 * store) follows the same rule.
 */
export function statsRouter(options: StatsRouterOptions): Router {
  const router = Router();
  router.get('/stats', async (_req, res) => {
    const principal = contextOf(res).principal;
    const view: TopUsersView = !principal
      ? { none: true }
      : principal.admin
        ? { all: true }
        : { keyHash: principal.keyHash };
    const record: StatsRecord = await options.stats.read(options.providers(), view);
    const spendView = !principal
      ? undefined
      : principal.admin
        ? { all: true as const }
        : principal.keyId
          ? { keyId: principal.keyId }
          : undefined;
    // The key store being down must not take the Redis counters with it.
    const spend = spendView && options.keySpend ? await options.keySpend(spendView).catch(() => undefined) : undefined;
    if (spend) record.key_spend = spend;
    res.setHeader('Cache-Control', 'no-store');
    res.json(record);
  });
  return router;
}
