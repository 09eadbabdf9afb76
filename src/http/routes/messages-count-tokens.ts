import { Router } from 'express';
import type { z } from 'zod';
import type { GatewayConfig } from '../../config/gateway-config.ts';
import { describeMessagesIssues } from '../../doors/messages/decode.ts';
import { resolveModel } from '../../doors/messages/messages-door.ts';
import { countTokensRequestSchema } from '../../doors/messages/request-schema.ts';
import { estimateInputTokens } from '../../doors/messages/token-estimate.ts';
import { InvalidRequestError, ModelNotFoundError } from '../../errors/catalog.ts';

/**
 * `POST /v1/messages/count_tokens`: Anthropic's token-counting endpoint, for
 * every configured model (and alias), answered by the API process itself with
 * an estimate (src/doors/messages/token-estimate.ts). Errors take the
 * Messages door's shape, since the path lies under its own.
 */
export function messagesCountTokensRouter(config: () => GatewayConfig): Router {
  const router = Router();
  router.post('/v1/messages/count_tokens', (req, res) => {
    const body: unknown = req.body;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
    }
    const parsed = countTokensRequestSchema.safeParse(body);
    if (!parsed.success)
      throw new InvalidRequestError(`Invalid request: ${describeMessagesIssues(parsed.error as z.ZodError)}`);
    const current = config();
    if (!current.modelIndex.has(resolveModel(current, parsed.data.model)))
      throw new ModelNotFoundError(parsed.data.model);
    res.json({ input_tokens: estimateInputTokens(parsed.data) });
  });
  return router;
}
