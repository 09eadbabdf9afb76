import { Router } from 'express';
import type { HealthService } from '../../health/health-service.ts';

/**
 * `GET /health` (200, or 503 when `unhealthy`), `GET /health/ready` (200
 * ready, 503 not_ready, same shape) and `GET /health/live` (200 while the
 * process serves). They need a key unless PUBLIC_PATHS opens them, and are
 * never rate-limited.
 */
export function healthRouter(health: HealthService): Router {
  const router = Router();
  router.use('/health', (_req, res, next) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.get('/health', async (_req, res) => {
    const record = await health.health();
    res.status(record.status === 'unhealthy' ? 503 : 200).json(record);
  });
  router.get('/health/ready', async (_req, res) => {
    const record = await health.readiness();
    res.status(record.status === 'ready' ? 200 : 503).json(record);
  });
  router.get('/health/live', (_req, res) => {
    res.status(200).json({ status: 'alive' });
  });
  return router;
}
