import { Router } from 'express';
import type { AssetTable } from '../api-docs/assets.ts';
import { dashboardPage } from '../api-docs/pages.ts';
import { mountAssets, sendPage } from './docs.ts';

/** Options of {@link dashboardRouter}. */
export interface DashboardRouterOptions {
  assets: AssetTable;
  /** Title of the page. @defaultValue "LLM Gateway" */
  title?: string;
}

/**
 * `GET /dashboard`: a live page charting /stats (and queue depths from
 * /metrics), refreshed every 5 s (`?refresh=<seconds>`), with Chart.js
 * served from node_modules.
 */
export function dashboardRouter(options: DashboardRouterOptions): Router {
  const router = Router();
  const html = dashboardPage(options.title ?? 'LLM Gateway');
  router.get('/dashboard', (req, res) => sendPage(req, res, 'dashboard', html));
  mountAssets(router, 'dashboard', options.assets.dashboard);
  return router;
}
