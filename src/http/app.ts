import express, { type Express, type RequestHandler, type Router } from 'express';
import type { KeyAuthenticator } from '../auth/principal.ts';
import type { Logger } from '../observability/logger.ts';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { jsonBody } from './json-body.ts';
import { authenticate } from './middleware/authenticate.ts';
import { requireAdmin } from './middleware/require-admin.ts';
import { awaitRateLimit } from './middleware/rate-limit.ts';
import { requestId } from './middleware/request-id.ts';

/** Options of {@link createApp}. */
export interface AppOptions {
  logger: Logger;
  authenticator: KeyAuthenticator;
  /** Paths served without a key. */
  publicPaths: readonly string[];
  maxBodyBytes: number;
  /** Routers mounted after authentication and body parsing, in order, once the rate-limit decision is in. */
  routers: readonly Router[];
  /**
   * Routers tried first, before the rate-limit decision is awaited, so their
   * own first Redis read can overlap it: they must await `settleRateLimit`
   * before answering or doing anything with an effect. Default none.
   */
  hotRouters?: readonly Router[];
  /** Middleware run right after the request id, before authentication, so they see every request, 401s included (request log, metrics). */
  observers?: readonly RequestHandler[];
  /** Middleware run after authentication and before body parsing, in order (configuration guard, rate limit). Default none. */
  guards?: readonly RequestHandler[];
}

/**
 * The Express app: request id, authentication (before the body is parsed, so
 * unauthenticated bodies are never read), JSON body parsing with the size
 * limit, the routers, then 404 and the one error handler.
 */
export function createApp(options: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestId());
  for (const observer of options.observers ?? []) app.use(observer);
  app.use(authenticate(options.authenticator, options.publicPaths));
  // Every /admin/* path needs an admin key, including ones no router serves (403, not 404).
  app.use('/admin', requireAdmin());
  for (const guard of options.guards ?? []) app.use(guard);
  app.use(jsonBody({ limit: options.maxBodyBytes }));
  for (const router of options.hotRouters ?? []) app.use(router);
  app.use(awaitRateLimit());
  for (const router of options.routers) app.use(router);
  app.use(notFoundHandler());
  app.use(errorHandler(options.logger, options.maxBodyBytes));
  return app;
}
