import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest stretch of synchronous work between two yields, ms. */
const SLICE_MS = 8;

/**
 * Cuts a long loop (validating or storing tens of thousands of batch lines)
 * into slices of a few milliseconds, yielding to the event loop between
 * them, so the process keeps answering requests while it works. Call
 * {@link TurnSlices.tick} once per item; it only reads the clock every few
 * items.
 */
export class TurnSlices {
  private started = performance.now();
  private count = 0;

  /** Resolves at once while the slice lasts, else after the pending I/O has run. */
  async tick(): Promise<void> {
    if (++this.count % 64 !== 0 || performance.now() - this.started < SLICE_MS) return;
    await nextTurn();
    this.started = performance.now();
  }
}
