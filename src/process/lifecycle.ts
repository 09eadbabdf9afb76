import { ShutdownDeadline } from './shutdown-deadline.ts';

/** One part of a process with background work or resources to let go of. */
export interface LifecyclePart {
  /** Named in what a deadline left unfinished. */
  name: string;
  /** Starts its background work (timers, subscriptions, consumers, loops). A promise it returns is not awaited. @defaultValue nothing to start */
  start?: () => unknown;
  /** Lets it go; awaited until it settles or its time is up. @defaultValue nothing to close */
  close?: () => unknown;
  /** The latest its close may run until (epoch ms), given the process's deadline. @defaultValue the deadline's end */
  closeUntil?: (deadline: ShutdownDeadline) => number;
}

/**
 * The parts of a process in the order they were built. A composition root
 * builds everything first, registering each part as it builds it, and only
 * then starts them, in that order; nothing runs in the background of a
 * process that failed to build. Closing goes the other way round under one
 * deadline, so a part is closed before the parts it uses, and no step can
 * hold the process past its grace.
 */
export class Lifecycle {
  private readonly parts: LifecyclePart[] = [];
  private readonly onStartError: (name: string, err: unknown) => void;
  private started = false;

  /** `onStartError` hears of a start that failed later (a promise it returned rejected). */
  constructor(onStartError: (name: string, err: unknown) => void = () => {}) {
    this.onStartError = onStartError;
  }

  /** Registers a part built now. */
  add(part: LifecyclePart): void {
    if (this.started) throw new Error(`lifecycle: '${part.name}' was built after the process started`);
    this.parts.push(part);
  }

  /** Starts every part, in the order they were built. */
  start(): void {
    this.started = true;
    for (const part of this.parts) {
      const started = part.start?.();
      if (started instanceof Promise) started.catch((err: unknown) => this.onStartError(part.name, err));
    }
  }

  /** Closes every part in reverse order, each until it settles or its time is up; resolves with those still unfinished. */
  async close(deadline: ShutdownDeadline): Promise<string[]> {
    for (const part of [...this.parts].reverse()) {
      if (part.close) await deadline.step(part.name, part.close, part.closeUntil?.(deadline));
    }
    return deadline.unfinished;
  }
}
