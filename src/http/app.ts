import {
  createServer,
  IncomingMessage,
  ServerResponse,
  type RequestListener,
  type Server,
  type ServerOptions,
} from 'node:http';
import express, { type Express, type RequestHandler, type Router } from 'express';
import { clientErrorListener } from './client-error.ts';
import { directListener, type DirectRoute } from './direct-routes.ts';
import type { KeyAuthenticator } from '../auth/principal.ts';
import type { Logger } from '../observability/logger.ts';
import type { Door } from '../pipeline/door.ts';
import { errorHandler, notFoundHandler } from './error-handler.ts';
import { jsonBody } from './json-body.ts';
import { authenticate, type FailedAuthOptions } from './middleware/authenticate.ts';
import { requireAdmin } from './middleware/require-admin.ts';
import { awaitRateLimit } from './middleware/rate-limit.ts';
import { requestId } from './middleware/request-id.ts';

/** Options of {@link createApp}. */
export interface AppOptions {
  logger: Logger;
  authenticator: KeyAuthenticator;
  /** Paths served without a key. */
  publicPaths: readonly string[];
  /** Throttle of failed authentications per client address. @defaultValue none (wrong keys are never throttled) */
  failedAuth?: FailedAuthOptions;
  maxBodyBytes: number;
  /** Routers mounted after authentication and body parsing, in order, once the rate-limit decision is in. */
  routers: readonly Router[];
  /**
   * Hot routes: served by the listener without Express' router (see
   * {@link directListener}), and mounted in the app ahead of `routers` for
   * other spellings of their URL. They run before the rate-limit decision is awaited, so their
   * own first Redis read can overlap it: they must await `settleRateLimit`
   * before answering or doing anything with an effect. @defaultValue none
   */
  directRoutes?: readonly DirectRoute[];
  /** Middleware run right after the request id, before authentication, so they see every request, 401s included (request log, metrics). */
  observers?: readonly RequestHandler[];
  /** Middleware run after authentication and before body parsing, in order (configuration guard, rate limit). @defaultValue none */
  guards?: readonly RequestHandler[];
  /**
   * Doors whose protocol answers the errors of their path and the paths below
   * it (authentication and rate-limit failures included). @defaultValue none: the gateway's envelope everywhere
   */
  doors?: readonly { path: string; door: Door }[];
}

/**
 * The HTTP application: `createServer()` is the server to run (`listener`
 * with `serverOptions`); `app` serves everything but the direct routes' exact URLs.
 */
export interface GatewayHttp {
  app: Express;
  listener: RequestListener;
  /** Request and response classes born with the app's prototypes (see {@link appMessageClasses}). */
  serverOptions: ServerOptions;
  /**
   * A new, not yet listening server: `listener` with `serverOptions` (without
   * them every request pays the prototype swap), whose HTTP parser errors are
   * answered in the error envelope ({@link clientErrorListener}).
   */
  createServer(): Server;
}

/**
 * The Express app: request id, authentication (before the body is parsed, so
 * unauthenticated bodies are never read), JSON body parsing with the size
 * limit, the routers, then 404 and the one error handler; and the listener
 * that serves the direct routes through the same middleware without the router.
 */
export function createApp(options: AppOptions): GatewayHttp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const identify = [
    requestId(),
    ...(options.observers ?? []),
    authenticate(options.authenticator, options.publicPaths, options.failedAuth),
  ];
  const prepare = [...(options.guards ?? []), jsonBody({ limit: options.maxBodyBytes })];
  const notFound = notFoundHandler();
  const doors = options.doors ?? [];
  const doorAt = (path: string) => doors.find((d) => path === d.path || path.startsWith(`${d.path}/`))?.door;
  const onError = errorHandler(options.logger, options.maxBodyBytes, doorAt);
  app.use(identify);
  // Every /admin/* path needs an admin key, including ones no router serves (403, not 404).
  app.use('/admin', requireAdmin());
  app.use(prepare);
  for (const route of options.directRoutes ?? []) app.post(route.path, route.handler);
  app.use(awaitRateLimit());
  for (const router of options.routers) app.use(router);
  app.use(notFound);
  app.use(onError);
  const listener = directListener(app, options.directRoutes ?? [], {
    before: [...identify, ...prepare],
    after: notFound,
    onError,
  });
  const serverOptions = appMessageClasses(app);
  const onClientError = clientErrorListener(options.logger);
  return {
    app,
    listener,
    serverOptions,
    createServer: () => createServer(serverOptions, listener).on('clientError', onClientError),
  };
}

/**
 * Server options whose request and response objects are created with the
 * app's prototypes. Express swaps the prototypes of Node's objects on every
 * request (`Object.setPrototypeOf`, which V8 makes pay with a map change
 * per object); objects that already have them skip that.
 */
function appMessageClasses(app: Express): ServerOptions {
  function AppRequest(this: IncomingMessage, ...args: ConstructorParameters<typeof IncomingMessage>) {
    IncomingMessage.apply(this, args);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, ...args: ConstructorParameters<typeof ServerResponse>) {
    ServerResponse.apply(this, args);
  }
  AppResponse.prototype = app.response;
  return {
    IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
    ServerResponse: AppResponse as unknown as typeof ServerResponse,
  };
}
