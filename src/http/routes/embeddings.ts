import { Router, type Request, type Response } from 'express';
import type { ChatRequest } from '../../chat/types.ts';
import type { GatewayConfig } from '../../config/gateway-config.ts';
import type { DlpGuard } from '../../dlp/dlp-guard.ts';
import { servesEmbeddings } from '../../embeddings/embeddings-wire.ts';
import { parseEmbeddingsRequest } from '../../embeddings/request-schema.ts';
import { InvalidRequestError, ModelNotFoundError, ProviderTimeoutError } from '../../errors/catalog.ts';
import { noteReplyEntry, startReplyFacts } from '../../pipeline/reply-facts.ts';
import type { ChatDispatcher } from '../../queue/chat-dispatcher.ts';
import { decodeError } from '../../streams/protocol.ts';
import { StreamAbortedError, StreamDeadlineError } from '../../streams/stream-reader.ts';
import type { KeyGovernor } from '../../usage/key-governor.ts';
import { sendJsonText } from '../json-reply.ts';
import { settleRateLimit } from '../middleware/rate-limit.ts';
import { contextOf } from '../../pipeline/request-context.ts';
import { abortOnClose } from '../abort-on-close.ts';
import { ProviderKeys } from '../../providers/provider-keys.ts';

/** Dependencies of the embeddings route. */
export interface EmbeddingsDeps {
  dispatcher: ChatDispatcher;
  config: () => GatewayConfig;
  /** Per-key models, token limits, budgets and usage, as on the chat route. @defaultValue none: keys are only rate limited */
  governor?: KeyGovernor;
  /** Where provider keys are looked up. @defaultValue process.env */
  env?: NodeJS.ProcessEnv;
  /** DLP on every input, as for chat (redact, block or count). @defaultValue none: nothing is scanned */
  dlp?: DlpGuard;
}

/**
 * `POST /v1/embeddings` in OpenAI's shape, for the embedding models of
 * config.yaml (`embedding_models`). Like a chat request it is admitted by the
 * rate limit and the key's limits, queued on its provider's queue and
 * answered by a worker through the reply stream
 * (docs/decisions/embeddings-through-the-queue.md).
 */
export function embeddingsRouter(deps: EmbeddingsDeps): Router {
  const router = Router();
  const keys = new ProviderKeys(deps.env);

  router.post('/v1/embeddings', async (req: Request, res: Response) => {
    const parsed = parseEmbeddingsRequest(req.body);
    const config = deps.config();
    const provider = config.embeddingIndex.get(parsed.model);
    if (!provider) {
      if (config.modelIndex.has(parsed.model)) {
        throw new InvalidRequestError(`'${parsed.model}' is a chat model; /v1/embeddings serves the embedding models of this gateway (embedding_models in config.yaml).`);
      }
      throw new ModelNotFoundError(parsed.model);
    }
    if (!servesEmbeddings(provider.format)) {
      throw new InvalidRequestError(`'${parsed.model}' is served by ${provider.name}, an ${provider.format}-format provider, which has no embeddings API.`);
    }
    keys.require(provider);
    const context = contextOf(res);
    // Every input is screened before Redis, the queue and the provider see it, as a chat message would be; block mode throws pii_detected.
    const texts: ChatRequest = { model: parsed.model, messages: parsed.input.map((text) => ({ role: 'user', content: text })), n: 1, stream: false, include_usage: false };
    // The analyzer-aware entry point, as the jobs route and the pipeline use (DLP_ANALYZER_URL).
    const screened = deps.dlp ? await deps.dlp.screenAsync(texts, context) : texts;
    const request = { ...parsed, input: screened.messages.map((m) => m.content as string) };
    context.model = request.model;
    context.provider = provider.name;
    deps.governor?.checkModel(context.principal, request.model);
    const admission = await settleRateLimit(res);
    // The job names the model only; the governor estimates the prompt from the texts.
    const job: ChatRequest = { model: request.model, messages: [], n: 1, stream: false, include_usage: false };
    const call = await deps.governor?.admit(context.principal, screened);
    try {
      const place = await deps.dispatcher.reserve(provider, admission);
      const trace = context.span.carrier();
      const dispatch = await deps.dispatcher.dispatch(job, provider, place, { requestId: context.requestId, signal: abortOnClose(res), embeddings: request, ...(trace ? { trace } : {}) });
      startReplyFacts(context, { streamed: false, coalesced: false });
      try {
        for await (const entry of dispatch.entries) {
          noteReplyEntry(context, entry);
          if (entry.t === 'error') throw decodeError(entry);
          if (entry.t === 'result') return sendJsonText(res, 200, entry.d);
        }
      } catch (err) {
        // Nobody waits for the vectors any more: the job leaves the queue, or its upstream call is aborted.
        if (err instanceof StreamAbortedError || err instanceof StreamDeadlineError) void deps.dispatcher.cancel(dispatch.jobId, provider.name).catch(() => {});
        if (err instanceof StreamAbortedError) return;
        if (err instanceof StreamDeadlineError) throw new ProviderTimeoutError(`${provider.name} did not answer within the gateway's deadline.`);
        throw err;
      }
    } finally {
      // Charged what the worker reported (the reply facts), for the model asked.
      const facts = context.reply;
      if (call) {
        void deps.governor!.finish(call, {
          model: request.model,
          usage: facts?.promptTokens !== undefined ? { promptTokens: facts.promptTokens, completionTokens: 0 } : undefined,
          failed: !facts || facts.terminal === 'error',
          coalesced: false,
        });
      }
    }
  });

  return router;
}
