import { Router, type Request, type Response } from 'express';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { formatBytes } from '../../cache/byte-size.ts';
import { readRedisInfo } from '../../cache/redis-info.ts';
import type { ResponseCache } from '../../cache/response-cache.ts';
import { describeIssues } from '../../chat/request-schema.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import { requireAdmin } from '../middleware/require-admin.ts';

/** Dependencies of {@link adminCacheRouter}. */
export interface AdminCacheDeps {
  cache: ResponseCache;
  /** Command connection, for INFO. */
  redis: Redis;
  /** Semantic threshold, reported as configured. */
  threshold: number;
}

/** Body of `POST /admin/cache/clear`; also its OpenAPI description (src/docs). */
export const clearBodySchema = z.strictObject({ cache: z.enum(['exact', 'semantic', 'all']).default('all') });

/**
 * `GET /admin/cache/stats` and `POST /admin/cache/clear` (admin keys only).
 * Store figures come from Redis INFO; semantic figures from this replica's
 * index (which mirrors Redis) and the counters every replica shares.
 */
export function adminCacheRouter(deps: AdminCacheDeps): Router {
  const router = Router();
  router.use('/admin/cache', requireAdmin());

  router.get('/admin/cache/stats', async (_req: Request, res: Response) => {
    const { cache } = deps;
    const [info, counters] = await Promise.all([readRedisInfo(deps.redis), cache.stats.read().catch(() => undefined)]);
    const semanticCounts = counters?.semantic ?? { queries: 0, hits: 0, misses: 0, hit_rate: 0, avg_similarity: 0 };
    res.json({
      cache_store: {
        connected: info.connected,
        memory_usage: formatBytes(info.usedMemory),
        keys: info.keys,
        hits: info.keyspaceHits,
        misses: info.keyspaceMisses,
        evictions: info.evictedKeys,
      },
      semantic_cache: {
        collection_size: cache.semantic.size,
        index_size: formatBytes(cache.semantic.byteSize),
        queries: semanticCounts.queries,
        hits: semanticCounts.hits,
        avg_similarity: semanticCounts.avg_similarity,
        misses: semanticCounts.misses,
        hit_rate: semanticCounts.hit_rate,
        status: cache.semanticStatus,
        ...(cache.semanticError ? { error: cache.semanticError } : {}),
        embedder: cache.options.embedder?.id ?? null,
        retriever: cache.retrieverId ?? null,
        threshold: deps.threshold,
      },
      exact_cache: counters?.exact ?? { hits: 0, misses: 0, hit_rate: 0 },
    });
  });

  router.post('/admin/cache/clear', async (req: Request, res: Response) => {
    const body: unknown = req.body ?? {};
    const parsed = clearBodySchema.safeParse(body);
    if (!parsed.success) {
      throw new InvalidRequestError(
        `Invalid request: ${describeIssues(parsed.error)}. Send {"cache":"exact"|"semantic"|"all"} or no body.`,
      );
    }
    const which = parsed.data.cache;
    const cleared = await deps.cache.clear(which);
    const what = which === 'all' ? 'exact and semantic caches' : `${which} cache`;
    res.json({
      status: 'success',
      message: `Cleared the ${what}: ${cleared.exact_cache} exact and ${cleared.semantic_cache} semantic entries removed.`,
      cleared,
    });
  });
  return router;
}
