import express, { type Express, type Router } from 'express';
import type { KeyAuthenticator } from '../auth/principal.ts';
import type { Logger } from '../observability/logger.ts';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { authenticate } from './middleware/authenticate.ts';
import { requestId } from './middleware/request-id.ts';

/** Options of {@link createApp}. */
export interface AppOptions {
  logger: Logger;
  authenticator: KeyAuthenticator;
  /** Paths served without a key. */
  publicPaths: readonly string[];
  maxBodyBytes: number;
  /** Routers mounted after authentication and body parsing, in order. */
  routers: readonly Router[];
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
  app.use(authenticate(options.authenticator, options.publicPaths));
  app.use(express.json({ limit: options.maxBodyBytes, type: ['application/json', 'application/*+json'] }));
  for (const router of options.routers) app.use(router);
  app.use(notFoundHandler());
  app.use(errorHandler(options.logger, options.maxBodyBytes));
  return app;
}
