/**
 * One deadline for a process's whole shutdown (`SHUTDOWN_GRACE_MS` from the
 * signal). Each step is awaited until it settles or its time is up, whichever
 * comes first; a step still running then is left behind and named in
 * {@link ShutdownDeadline.unfinished}, and the process exits anyway. So no
 * command waiting in an offline queue, reconnect loop or blocked connection
 * can hold a stopping process past its grace, whatever Redis does.
 */
export class ShutdownDeadline {
  /** Epoch ms at which the grace is over. */
  readonly endsAt: number;
  private readonly pending = new Set<string>();

  constructor(graceMs: number, now: number = Date.now()) {
    this.endsAt = now + graceMs;
  }

  /** Ms left before the grace is over (0 once it is). */
  get remainingMs(): number {
    return Math.max(0, this.endsAt - Date.now());
  }

  /** Steps that had not settled when their time was up, in the order they started. */
  get unfinished(): string[] {
    return [...this.pending];
  }

  /**
   * Runs `work` and waits for it until `until` (epoch ms, default and at most
   * {@link endsAt}). Resolves true when it settled in time (a rejection counts
   * as settled: a failed step is over, not pending); false when time ran out,
   * and the step stays in {@link unfinished}. Never rejects.
   */
  async step(name: string, work: () => unknown, until: number = this.endsAt): Promise<boolean> {
    this.pending.add(name);
    let timer: NodeJS.Timeout | undefined;
    const settled = Promise.resolve()
      .then(work)
      .then(
        () => true,
        () => true,
      );
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, Math.min(until, this.endsAt) - Date.now()));
    });
    const inTime = await Promise.race([settled, timedOut]);
    clearTimeout(timer);
    if (inTime) this.pending.delete(name);
    return inTime;
  }
}
