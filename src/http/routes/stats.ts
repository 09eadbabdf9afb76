import { Router } from 'express';
import type { StatsRecord } from '../../observability/stats-schema.ts';
import type { StatsStore } from '../../observability/stats-store.ts';

/** Options of {@link statsRouter}. */
export interface StatsRouterOptions {
  stats: StatsStore;
  /** Provider names of the current config.yaml; each appears in provider_stats. */
  providers: () => readonly string[];
}

/** `GET /stats`: the statistics record, totals of every gateway process (read from Redis). */
export function statsRouter(options: StatsRouterOptions): Router {
  const router = Router();
  router.get('/stats', async (_req, res) => {
    const record: StatsRecord = await options.stats.read(options.providers());
    res.setHeader('Cache-Control', 'no-store');
    res.json(record);
  });
  return router;
}
