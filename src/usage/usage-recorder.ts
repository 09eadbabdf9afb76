import type { KeyStore } from '../auth/key-store.ts';
import type { UsageDelta } from './key-usage.ts';

/** Options of {@link UsageRecorder}. */
export interface UsageRecorderOptions {
  store: Pick<KeyStore, 'addUsage'>;
  /**
   * How often the summed usage is written to the key store, ms.
   * @defaultValue 1000
   */
  flushMs?: number;
  /** Called when a write fails; the usage is kept and written with the next one. */
  onError?: (err: Error) => void;
}

/**
 * Usage of issued keys on its way to the key store. A finished request adds
 * to an in-memory row per key, model and day (no I/O on the request path);
 * every `flushMs` the rows are written in one transaction. A failed write
 * keeps them for the next attempt, so a database outage delays usage but
 * does not lose it (a process killed hard loses at most one interval).
 */
export class UsageRecorder {
  private pending = new Map<string, UsageDelta>();
  private readonly options: UsageRecorderOptions;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(options: UsageRecorderOptions) {
    this.options = options;
  }

  add(delta: UsageDelta): void {
    const id = `${delta.keyId}\u0000${delta.day}\u0000${delta.model}`;
    const row = this.pending.get(id);
    if (row) {
      row.requests += delta.requests;
      row.promptTokens += delta.promptTokens;
      row.completionTokens += delta.completionTokens;
      row.cachedTokens = (row.cachedTokens ?? 0) + (delta.cachedTokens ?? 0);
      row.cacheWriteTokens = (row.cacheWriteTokens ?? 0) + (delta.cacheWriteTokens ?? 0);
      row.reasoningTokens = (row.reasoningTokens ?? 0) + (delta.reasoningTokens ?? 0);
      row.costNanoUsd += delta.costNanoUsd;
    } else {
      this.pending.set(id, { ...delta });
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.flushMs ?? 1_000);
    this.timer.unref();
  }

  /** Writes what is pending now; concurrent calls share one write. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.options.store.addUsage([...batch.values()]);
    } catch (err) {
      for (const row of batch.values()) this.add(row);
      this.options.onError?.(err as Error);
    }
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
