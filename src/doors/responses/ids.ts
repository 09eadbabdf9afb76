import { randomBytes } from 'node:crypto';

/**
 * Ids of the Responses door: `resp_` for a response, `msg_`, `fc_`, `fco_`,
 * `rs_` for its items. 24 random bytes: an id is the only thing a caller needs to
 * read a stored response besides its key, so it must not be guessable.
 */
export function newResponseId(): string {
  return `resp_${randomBytes(24).toString('hex')}`;
}

export function newItemId(prefix: 'msg' | 'fc' | 'fco' | 'rs'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}
