import type { TraceCarrier } from '../observability/tracing/trace-span.ts';
import { randomBytes } from 'node:crypto';
import type { ChatRequest } from '../chat/types.ts';
import type { Logger } from '../observability/logger.ts';
import { validateBatchInput } from './batch-input.ts';
import type { BatchState } from './batch-rows.ts';
import type { BatchStore, LineRow } from './batch-store.ts';
import type { JobRows } from './job-rows.ts';
import { notRun, type LineAbort, type LineExecutor } from './line-executor.ts';

/** Options of {@link BatchRunner}. */
export interface BatchRunnerOptions {
  store: BatchStore;
  executor: LineExecutor;
  /** Throws the client's error when a request cannot run (unknown model, unsupported parameters). */
  check: (request: ChatRequest) => void;
  /** Most lines per input file (`BATCH_MAX_LINES`). */
  maxLines: number;
  /** Largest line, bytes (`MAX_REQUEST_BYTES`). */
  maxLineBytes: number;
  /** Lines of one batch in flight at once (`BATCH_CONCURRENCY`). */
  concurrency: number;
  /**
   * Lines of all the batches of one key in flight at once in this process
   * (`BATCH_KEY_CONCURRENCY`), shared evenly by its batches: a key with many
   * batches gets no more of the queues than a key with one.
   */
  keyConcurrency: number;
  /** How often the runner looks for work, ms (`BATCH_POLL_MS`). */
  pollMs: number;
  /** How long a claim on a batch lasts unless renewed, ms (`BATCH_LEASE_MS`). */
  leaseMs: number;
  /** Asynchronous jobs: one-line batches finished and expired by these rows. */
  jobs: JobRows;
  /** The Redis record a job's worker marks `in_progress`. */
  jobRecord: (id: string) => { key: string; ttlSeconds: number };
  logger: Logger;
}

interface Running {
  /** The key (issued key id, else owner) of a batch, once known; undefined for a job. */
  key?: string;
  /** Lines in flight, by index. */
  lines: Map<number, AbortController>;
  /** Epoch ms before which lines that said "try later" are not retried. */
  retryAt: number;
  busy: boolean;
  /** A line finished while a step was running: step again at once, so its slot does not idle until the next poll. */
  again: boolean;
  /** Callers of {@link BatchRunner.startNow} waiting for a line to be enqueued. */
  waiters: Array<() => void>;
  /** Trace context of the request that started it now (a job's POST), carried by its line's job; lost with the process. */
  trace?: TraceCarrier | undefined;
}

/** How often a runner deletes expired uploaded files, ms (more often when files live shorter than that). */
const FILE_PURGE_MS = 60_000;

/** Longest a new job's POST waits for its line to be enqueued before answering anyway (it runs regardless). */
const START_WAIT_MS = 2_000;

/**
 * Runs batches: every API process has one, and each batch is held by one of
 * them at a time through a lease in the database (renewed every poll; a dead
 * process's batches are taken over once its lease lapses). A held batch is
 * validated, then its open lines run up to the concurrency cap; when all are
 * answered it is finalized with its output and error files. Cancelling and
 * expiry stop the lines in flight. Everything a batch is lives in the
 * database, so any runner resumes it where it stood.
 */
export class BatchRunner {
  readonly id = `runner_${randomBytes(6).toString('hex')}`;
  private readonly options: BatchRunnerOptions;
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private stopped = false;
  private filesPurgedAt = 0;

  constructor(options: BatchRunnerOptions) {
    this.options = options;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.options.pollMs);
    this.timer.unref();
    void this.tick();
  }

  /** One pass: claim what is free, renew what is held, advance each held batch, let go of the others. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      // Expired jobs go first; the ones that never finished stop their work (nobody may read their answer any more).
      for (const id of await this.options.jobs.purgeExpired()) this.drop(id, 'stop');
      if (Date.now() - this.filesPurgedAt >= Math.min(FILE_PURGE_MS, this.options.store.fileTtlSeconds * 1000)) {
        this.filesPurgedAt = Date.now();
        await this.options.store.purgeExpiredFiles();
      }
      const ids = await this.options.store.claimAll(this.id, this.options.leaseMs);
      for (const id of ids) {
        const run = this.runOf(id);
        if (!run.busy) void this.advance(id, run);
      }
      const held = new Set(ids);
      for (const id of this.running.keys()) if (!held.has(id)) this.drop(id);
    } catch (err) {
      this.options.logger.warn(
        { err: (err as Error).message },
        'batch runner: the database is not reachable; batches wait',
      );
    } finally {
      this.ticking = false;
    }
  }

  /**
   * Takes a new job at once instead of at the next poll, and resolves once
   * its line is on its queue (or answered, or could not start: it is then
   * retried by the polls), so a job's 202 normally means "queued".
   */
  async startNow(id: string, trace?: TraceCarrier): Promise<void> {
    if (this.stopped || !(await this.options.store.claim(id, this.id, this.options.leaseMs))) return;
    const run = this.runOf(id);
    run.trace = trace;
    const started = new Promise<void>((resolve) => {
      run.waiters.push(resolve);
      setTimeout(resolve, START_WAIT_MS).unref();
    });
    if (run.busy) run.again = true;
    else void this.advance(id, run);
    await started;
  }

  private runOf(id: string): Running {
    let run = this.running.get(id);
    if (!run) this.running.set(id, (run = { lines: new Map(), retryAt: 0, busy: false, again: false, waiters: [] }));
    return run;
  }

  private async advance(id: string, run: Running): Promise<void> {
    run.busy = true;
    try {
      do {
        run.again = false;
        await this.step(id, run);
      } while (run.again && !this.stopped);
    } finally {
      run.busy = false;
      // Nothing of it in flight: whoever waits for an enqueue will not get one from this pass.
      if (run.lines.size === 0) wake(run);
    }
  }

  private async step(id: string, run: Running): Promise<void> {
    try {
      const state = await this.options.store.state(id);
      if (!state) return;
      if (state.kind === 'job') await this.stepJob(id, state, run);
      else if (state.status === 'validating') await this.validate(id, state.input_file_id);
      else if (state.status === 'cancelling') await this.cancel(id, run);
      else if (state.status === 'finalizing')
        await this.options.store.finish(id, 'finalizing', 'completed', 'completed_at');
      else if (state.status === 'in_progress') {
        if (Date.now() / 1000 >= state.expires_at) await this.expire(id, run);
        else await this.fill(id, state, run);
      }
    } catch (err) {
      this.options.logger.warn(
        { err: (err as Error).message, batch: id },
        'batch runner: step failed; retried next poll',
      );
    }
  }

  /** A job runs its one line, then takes its outcome; cancel and delete are settled by the API (the line's answer is then ignored). */
  private async stepJob(id: string, state: BatchState, run: Running): Promise<void> {
    if (state.status !== 'in_progress') return;
    const lines =
      run.lines.size > 0 || Date.now() < run.retryAt ? [] : await this.options.store.openLines(id, 1, new Set());
    if (lines.length === 0 && run.lines.size === 0 && Date.now() >= run.retryAt) {
      await this.options.jobs.finish(id);
      return;
    }
    for (const line of lines) this.runLine(id, state, run, line);
  }

  private async validate(id: string, fileId: string): Promise<void> {
    const content = await this.options.store.inputContent(fileId);
    if (content === undefined) {
      await this.options.store.failValidation(id, [
        {
          code: 'file_not_found',
          message: `Input file '${fileId}' no longer exists.`,
          param: 'input_file_id',
          line: null,
        },
      ]);
      return;
    }
    const checked = await validateBatchInput(content, {
      endpoint: '/v1/chat/completions',
      maxLines: this.options.maxLines,
      maxLineBytes: this.options.maxLineBytes,
      check: this.options.check,
    });
    if ('errors' in checked) await this.options.store.failValidation(id, checked.errors);
    else await this.options.store.start(id, checked.lines);
  }

  /** Starts open lines up to the caps (the batch's, and its share of its key's); finalizes once none is open and none in flight. */
  private async fill(id: string, state: BatchState, run: Running): Promise<void> {
    run.key = state.keyId ?? `owner:${state.owner}`;
    const free = Math.min(this.options.concurrency - run.lines.size, this.keyRoom(run));
    if (free <= 0 || Date.now() < run.retryAt) return;
    const lines = await this.options.store.openLines(id, free, new Set(run.lines.keys()));
    if (lines.length === 0 && run.lines.size === 0) {
      if (await this.options.store.setStatus(id, ['in_progress'], 'finalizing', 'finalizing_at'))
        await this.options.store.finish(id, 'finalizing', 'completed', 'completed_at');
      return;
    }
    for (const line of lines) this.runLine(id, state, run, line);
  }

  /**
   * Lines `run` may start for its key: what the key's cap leaves, and no more
   * than an even share of it among the key's batches held here, so they take
   * turns rather than the first one taking it all.
   */
  private keyRoom(run: Running): number {
    let batches = 0;
    let inFlight = 0;
    for (const other of this.running.values()) {
      if (other.key !== run.key) continue;
      batches += 1;
      inFlight += other.lines.size;
    }
    const cap = this.options.keyConcurrency;
    return Math.min(cap - inFlight, Math.ceil(cap / batches) - run.lines.size);
  }

  private runLine(batchId: string, state: BatchState, run: Running, line: LineRow): void {
    const abort = new AbortController();
    run.lines.set(line.line_index, abort);
    const store = this.options.store;
    this.options.executor
      .run({
        batchId,
        owner: state.owner,
        keyId: state.keyId,
        line,
        signal: abort.signal,
        ...(run.trace ? { trace: run.trace } : {}),
        markDispatched: async (jobId) => {
          if (!(await store.markDispatched(batchId, line.line_index, jobId)))
            throw new Error('stopped before its line was queued');
        },
        ...(state.priority !== undefined ? { priority: state.priority } : {}),
        ...(state.kind === 'job' ? { record: this.options.jobRecord(batchId) } : {}),
        onEnqueued: () => wake(run),
      })
      .then((outcome) => store.finishLine(batchId, line.line_index, outcome.status, JSON.stringify(outcome.output)))
      .catch((err: unknown) => {
        if (abort.signal.aborted) return;
        // The line stays open; the batch pauses briefly rather than spinning against an unavailable Redis or a full queue.
        run.retryAt = Date.now() + this.options.pollMs * 2;
        this.options.logger.warn(
          { err: (err as Error).message, batch: batchId, line: line.line_index + 1 },
          'batch line not answered; retried later',
        );
      })
      .finally(() => {
        run.lines.delete(line.line_index);
        wake(run);
        // The next line starts now, not at the next poll.
        if (abort.signal.aborted || this.running.get(batchId) !== run) return;
        if (run.busy) run.again = true;
        else void this.advance(batchId, run);
      });
  }

  private async expire(id: string, run: Running): Promise<void> {
    this.abortLines(run);
    await this.options.store.failUnanswered(id, (line) =>
      JSON.stringify(notRun(line.custom_id, 'batch_expired', 'This line was not answered before the batch expired.')),
    );
    await this.options.store.finish(id, 'in_progress', 'expired', 'expired_at');
  }

  /**
   * Lines answered so far make the output file; every other line goes to the
   * error file as `batch_cancelled`, saying whether it never ran or was
   * stopped in flight (its job queued, maybe already at the upstream).
   */
  private async cancel(id: string, run: Running): Promise<void> {
    this.abortLines(run);
    await this.options.store.failUnanswered(id, (line) =>
      JSON.stringify(
        notRun(
          line.custom_id,
          'batch_cancelled',
          line.status === 'pending'
            ? 'This line never ran: the batch was cancelled first.'
            : 'This line was in flight when the batch was cancelled (queued, or already sent upstream); its answer, if any, was dropped.',
        ),
      ),
    );
    await this.options.store.finish(id, 'cancelling', 'cancelled', 'cancelled_at');
  }

  /** `stop`: the lines' jobs are cancelled too (cancel, expiry); `leave`: they run on for whoever resumes the batch. */
  private abortLines(run: Running, reason: LineAbort = 'stop'): void {
    for (const abort of run.lines.values()) abort.abort(reason);
    run.lines.clear();
  }

  /** Lets go of a batch another runner took over, or that needs nothing more (`stop`: nobody wants its lines' answers). */
  private drop(id: string, reason: LineAbort = 'leave'): void {
    const run = this.running.get(id);
    if (!run) return;
    this.abortLines(run, reason);
    wake(run);
    this.running.delete(id);
  }

  /** Stops running: lines in flight are left as they are (their jobs finish; the next runner follows them), leases are given back. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    const ids = [...this.running.keys()];
    for (const run of this.running.values()) this.abortLines(run, 'leave');
    this.running.clear();
    await Promise.allSettled(ids.map((id) => this.options.store.release(id, this.id)));
  }
}

function wake(run: Running): void {
  for (const resolve of run.waiters.splice(0)) resolve();
}
