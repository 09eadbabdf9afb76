import type { Request } from 'express';
import { InvalidRequestError } from '../../errors/catalog.ts';

/** `after` and `limit` of a cursor-paged list (OpenAI's list parameters); 400 for a limit out of range. */
export function pageQuery(
  req: Request,
  bounds: { defaultLimit: number; maxLimit: number },
): { after?: string; limit: number } {
  const { after, limit } = req.query;
  let n = bounds.defaultLimit;
  if (limit !== undefined) {
    n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > bounds.maxLimit)
      throw new InvalidRequestError(`limit: must be an integer from 1 to ${bounds.maxLimit}.`);
  }
  return typeof after === 'string' && after !== '' ? { after, limit: n } : { limit: n };
}
