import { Router } from 'express';
import type { GatewayMetrics } from '../../observability/metrics.ts';

/**
 * `GET /metrics`: Prometheus text exposition. Mounted only when
 * PROMETHEUS_METRICS_ENABLED is true; otherwise the path is a 404 like any
 * unknown route.
 */
export function metricsRouter(metrics: GatewayMetrics): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    const body = await metrics.render();
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Type', metrics.contentType);
    res.send(body);
  });
  return router;
}
