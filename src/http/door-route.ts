import type { Request, Response } from 'express';
import { SEMANTIC_CACHE_HEADER } from '../cache/cache-control.ts';
import type { ChatPipeline } from '../pipeline/chat-pipeline.ts';
import type { Door } from '../pipeline/door.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { ChatDispatcher } from '../queue/chat-dispatcher.ts';
import { priorityFor } from '../queue/priorities.ts';
import { FALLBACKS_HEADER } from '../routing/model-router.ts';
import { StreamAbortedError } from '../streams/stream-reader.ts';
import type { DirectRoute } from './direct-routes.ts';
import { HttpAnswerer } from './http-answerer.ts';
import { settleRateLimit } from './middleware/rate-limit.ts';
import { contextOf } from '../pipeline/request-context.ts';
import { abortOnClose } from './abort-on-close.ts';

/** What {@link doorRoute} needs besides its door. */
export interface DoorRouteOptions {
  path: string;
  pipeline: ChatPipeline;
  /** Cancels the jobs of clients that left. */
  dispatcher: ChatDispatcher;
  maxBodyBytes: number;
}

/**
 * A door served over HTTP: decode the body in the door's protocol, run the
 * one pipeline, answer in the door's protocol. It runs before the rate-limit
 * decision is awaited (a direct route): the pipeline's cache step settles it
 * with its first Redis read, and nothing with an effect happens before.
 */
export function doorRoute(door: Door, options: DoorRouteOptions): DirectRoute {
  const { pipeline, dispatcher, maxBodyBytes } = options;
  const handler = async (req: Request, res: Response): Promise<void> => {
    const context = contextOf(res);
    const principal = context.principal;
    const from = { body: req.body, headers: req.headers, owner: principal?.owner ?? 'anonymous' };
    const request = await door.decode(from);
    // Asked before reply(), which may drop what decode() kept for this request.
    const kind = door.jobKind?.(from);
    const codec = door.reply(request, from);
    const exchange: Exchange = {
      context,
      request,
      principal,
      hints: {
        fallbacks: req.headers[FALLBACKS_HEADER],
        cacheControl: req.headers['cache-control'],
        semantic: req.headers[SEMANTIC_CACHE_HEADER],
      },
      gate: settleRateLimit(res),
      signal: abortOnClose(res),
      priority: priorityFor(request.service_tier),
      kind,
      header: (name, value) => {
        if (!res.headersSent) res.setHeader(name, value);
      },
    };
    try {
      await pipeline.run(exchange, new HttpAnswerer(res, codec, dispatcher, maxBodyBytes));
    } catch (err) {
      // The client left: nobody to answer.
      if (err instanceof StreamAbortedError) return;
      throw err;
    }
  };
  return { method: 'POST', path: options.path, handler };
}
