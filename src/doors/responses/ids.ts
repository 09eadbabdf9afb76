import { randomFillSync } from 'node:crypto';

/**
 * Ids of the Responses door: `resp_` for a response, `msg_`, `fc_`, `fco_`,
 * `rs_` for its items. 24 random bytes: an id is the only thing a caller needs to
 * read a stored response besides its key, so it must not be guessable.
 */
export function newResponseId(): string {
  return `resp_${randomHex(24)}`;
}

export function newItemId(prefix: 'msg' | 'fc' | 'fco' | 'rs'): string {
  return `${prefix}_${randomHex(12)}`;
}

/**
 * Bytes of the system's secure generator, drawn 4 KiB at a time and each used
 * once (as `crypto.randomUUID` does): one call to the generator per id cost
 * more than all the rest of a streamed reply's encoding.
 */
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}

/** A new id of the same kind as `id`: its prefix before the first `_` kept (`msg_`, `rs_`, `fc_`, `ws_` ...), the rest random. */
export function newIdLike(id: string): string {
  const cut = id.indexOf('_');
  return `${cut > 0 ? id.slice(0, cut) : 'item'}_${randomHex(16)}`;
}
