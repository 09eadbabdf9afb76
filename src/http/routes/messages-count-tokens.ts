import { Router } from 'express';
import type { z } from 'zod';
import { describeMessagesIssues } from '../../doors/messages/decode.ts';
import { countTokensRequestSchema } from '../../doors/messages/request-schema.ts';
import type { TokenCounter } from '../../doors/messages/token-count.ts';
import { InvalidRequestError } from '../../errors/catalog.ts';
import { TOKEN_COUNT_HEADER } from '../../pipeline/gateway-headers.ts';

/**
 * `POST /v1/messages/count_tokens`: Anthropic's token-counting endpoint, for
 * every configured model (and alias), counted by the upstream where its
 * format has such an endpoint and estimated elsewhere ({@link TokenCounter}).
 * Errors take the Messages door's shape, since the path lies under its own.
 */
export function messagesCountTokensRouter(counter: TokenCounter): Router {
  const router = Router();
  router.post('/v1/messages/count_tokens', async (req, res) => {
    const body: unknown = req.body;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new InvalidRequestError('The request body must be a JSON object sent with Content-Type: application/json.');
    }
    const parsed = countTokensRequestSchema.safeParse(body);
    if (!parsed.success)
      throw new InvalidRequestError(`Invalid request: ${describeMessagesIssues(parsed.error as z.ZodError)}`);
    const { tokens, source } = await counter.count(parsed.data, req.headers);
    res.setHeader(TOKEN_COUNT_HEADER, source);
    res.json({ input_tokens: tokens });
  });
  return router;
}
