import type { Response } from 'express';

/** A signal aborted when the client leaves before its reply is complete. */
export function abortOnClose(res: Response): AbortSignal {
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  return abort.signal;
}
