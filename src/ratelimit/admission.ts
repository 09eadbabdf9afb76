/**
 * Proof that a request's rate-limit decision is in and let it through. The
 * rule "a throttled request has no effect" (nothing cached, queued or sent
 * upstream) is kept by the types: the dispatcher takes an {@link Admission}
 * for every enqueue, and only the rate-limit module makes one, once the
 * decision allowed the request.
 */
declare const admitted: unique symbol;

export interface Admission {
  readonly [admitted]: true;
}

const ADMISSION = Object.freeze({}) as Admission;

/** For the rate limiter alone: the request was let through (or is not limited at all). */
export function admit(): Admission {
  return ADMISSION;
}
