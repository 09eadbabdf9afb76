import type { ResponseCache } from '../cache/response-cache.ts';
import type { DlpGuard } from '../dlp/dlp-guard.ts';
import { errorCodeOf } from '../observability/tracing/trace-span.ts';
import type { ChatDispatcher } from '../queue/chat-dispatcher.ts';
import type { CallOutcome, KeyGovernor } from '../usage/key-governor.ts';
import type { Answerer, Exchange } from './exchange.ts';
import { cacheStep } from './steps/cache-step.ts';
import { dispatchStep } from './steps/dispatch-step.ts';
import { routeStep, type Routing } from './steps/route-step.ts';
import { screenStep } from './steps/screen-step.ts';

/** What {@link ChatPipeline} is built from; every part but the dispatcher may be absent (off). */
export interface ChatPipelineOptions {
  dispatcher: ChatDispatcher;
  /** Exact and semantic response caches. @defaultValue none: every request goes to its provider */
  cache?: ResponseCache | undefined;
  /** DLP: redacts, blocks or counts personal data and secrets. @defaultValue none: nothing is scanned */
  dlp?: DlpGuard | undefined;
  /** Deployments, cooldowns and fallbacks. @defaultValue none: every model goes to its first provider entry */
  routing?: Routing | undefined;
  /** Per-key models, token limits, budgets and usage. @defaultValue none: keys are only rate limited */
  governor?: KeyGovernor | undefined;
}

/**
 * The one request pipeline, run by every entry point (chat completions plain
 * and routed, asynchronous jobs, batch lines, the Messages and Responses
 * doors). Its named steps, in order, over one {@link Exchange}:
 *
 * 1. `route`: the provider, or the deployments to try;
 * 2. `screen`: DLP on every text;
 * 3. `allow`: the key's model allow-list;
 * 4. `cache`: the caches answer, or decline while the rate-limit decision settles;
 * 5. `govern`: the key's token limit and budget admit the call;
 * 6. `dispatch`: one job on a provider queue (or a followed one, or fallbacks);
 * 7. `relay`: the entry point reads the reply to its end;
 * 8. `record`: the key is charged the usage the reply reported.
 *
 * Nothing before `cache` has an effect beyond this process, and nothing is
 * queued before the rate-limit decision admitted the request. Entry points
 * differ only in how they decode a request and how they answer ({@link Answerer}).
 */
export class ChatPipeline {
  private readonly options: ChatPipelineOptions;

  constructor(options: ChatPipelineOptions) {
    this.options = options;
  }

  async run(exchange: Exchange, answerer: Answerer): Promise<void> {
    const { dispatcher, dlp, governor, routing, cache } = this.options;
    routeStep(exchange, dispatcher, routing);
    if (dlp) await screenStep(exchange, dlp);
    governor?.checkModel(exchange.principal, exchange.request.model);
    if (await cacheStep(exchange, cache, answerer)) return;
    exchange.call = await governor?.admit(exchange.principal, exchange.request);
    try {
      const dispatch = await dispatchStep(exchange, dispatcher, routing);
      await relayed(exchange, answerer.relay(exchange, dispatch));
    } finally {
      if (exchange.call) void governor?.finish(exchange.call, callOutcome(exchange));
    }
  }
}

/** The relay in a span: from the job on the queue to the reply's last byte. */
async function relayed(exchange: Exchange, relay: Promise<void>): Promise<void> {
  const span = exchange.context.span.child('stream relay', {
    attributes: { 'gateway.streamed': exchange.request.stream },
  });
  try {
    await relay;
  } catch (err) {
    span.fail(errorCodeOf(err));
    throw err;
  } finally {
    span.end();
  }
}

/** What the reply facts say about the call, for the governor: the model that answered is charged. */
function callOutcome(exchange: Exchange): CallOutcome {
  const { context } = exchange;
  const facts = context.reply;
  const reported = facts?.promptTokens !== undefined || facts?.completionTokens !== undefined;
  return {
    model: context.model ?? exchange.request.model,
    usage: reported
      ? {
          promptTokens: facts?.promptTokens ?? 0,
          completionTokens: facts?.completionTokens ?? 0,
          cachedReadTokens: facts?.cachedReadTokens ?? 0,
          cacheWriteTokens: facts?.cacheWriteTokens ?? 0,
          cacheWrite1hTokens: facts?.cacheWrite1hTokens ?? 0,
          reasoningTokens: facts?.reasoningTokens ?? 0,
        }
      : undefined,
    // Never dispatched, or ended in an error entry: nothing was produced upstream to charge.
    failed: !facts || facts.terminal === 'error',
    coalesced: facts?.coalesced ?? false,
  };
}
