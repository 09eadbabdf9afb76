import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ChatRequest, Usage } from '../chat/types.ts';
import {
  UpstreamProtocolError,
  type ParsedCompletion,
  type ProviderAdapter,
  type ProviderEndpoint,
  type StreamEvent,
  type UpstreamHttpRequest,
} from '../providers/types.ts';
import { AttemptTimeout, UpstreamFailure, isRetryableStatus, parseRetryAfter } from './upstream-failure.ts';
import type { UpstreamResponse, UpstreamSend } from './upstream-http.ts';

/** Everything one upstream attempt needs. */
export interface AttemptContext {
  adapter: ProviderAdapter;
  endpoint: ProviderEndpoint;
  request: ChatRequest;
  /** Aborted when the client went away. */
  cancel: AbortSignal;
  /** Time to the first byte (and, not streamed, to the whole body), ms. */
  timeoutMs: number;
  /** Longest silence between streamed chunks, ms. */
  idleTimeoutMs: number;
  send: UpstreamSend;
  /**
   * Every provider key this process knows (not only this endpoint's), removed
   * from upstream text before it leaves the attempt. Called on failures only.
   */
  secrets: () => readonly string[];
}

/** Thrown when the client cancelled; never retried, nothing is written. */
export class CancelledError extends Error {
  constructor() {
    super('cancelled by the client');
    this.name = 'CancelledError';
  }
}

/** One non-streamed call. Throws {@link UpstreamFailure} or {@link CancelledError}. */
export function attemptCompletion(ctx: AttemptContext): Promise<ParsedCompletion> {
  return attemptJson(
    ctx,
    () => ctx.adapter.buildRequest(ctx.request, ctx.endpoint, { stream: false }),
    (body) => ctx.adapter.parseResponse(body, ctx.request),
  );
}

/**
 * One non-streamed call (a chat completion, or another API such as
 * embeddings): the request `build` makes, the reply body read by `parse` (its
 * UpstreamProtocolError is a protocol failure), failures classified and
 * scrubbed the same way.
 */
export async function attemptJson<T>(
  ctx: AttemptContext,
  build: () => UpstreamHttpRequest,
  parse: (body: unknown) => T,
): Promise<T> {
  const timer = new AttemptTimer(ctx.timeoutMs, ctx.cancel);
  try {
    const res = await ctx.send(build(), timer.signal);
    const text = await res.text();
    if (!res.ok) throw statusFailure(res, text, ctx);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new UpstreamFailure('the reply body is not JSON', 'protocol', false);
    }
    return parse(body);
  } catch (err) {
    throw classify(err, ctx, timer);
  } finally {
    timer.clear();
  }
}

/** Receives decoded stream events of one streamed call. */
export interface StreamSink {
  delta(event: Extract<StreamEvent, { kind: 'delta' }>): void;
  /** True once anything reached the reply stream: from then on no retry. */
  emitted(): boolean;
}

/** One streamed call. Resolves with the last usage seen. */
export async function attemptStream(ctx: AttemptContext, sink: StreamSink): Promise<Usage | undefined> {
  const decoder = ctx.adapter.createStreamDecoder(ctx.request);
  let usage: Usage | undefined;
  const build = () => ctx.adapter.buildRequest(ctx.request, ctx.endpoint, { stream: true });
  await attemptSse(ctx, build, sink.emitted, (event) => {
    for (const out of decoder.push(event)) {
      if (out.kind === 'delta') sink.delta(out);
      else if (out.kind === 'usage') usage = out.usage;
      else throw new UpstreamFailure(`reported an error mid-stream: ${out.message}`, 'stream', !sink.emitted());
    }
    return decoder.finished;
  });
  return usage;
}

/**
 * One streamed call of any SSE API (a chat completion through its adapter's
 * decoder, or a native Responses stream): each event goes to `onEvent`,
 * which answers true once the upstream's own end marker arrived. A stream
 * that ends before it is a failure; a silence or a dropped connection after
 * it is not. `emitted` tells whether anything reached the reply stream (no
 * retry from then on).
 */
export async function attemptSse(
  ctx: AttemptContext,
  build: () => UpstreamHttpRequest,
  emitted: () => boolean,
  onEvent: (event: EventSourceMessage) => boolean,
): Promise<void> {
  const timer = new AttemptTimer(ctx.timeoutMs, ctx.cancel);
  let finished = false;
  try {
    const res = await ctx.send(build(), timer.signal);
    if (!res.ok) throw statusFailure(res, await res.text(), ctx);

    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => events.push(event) });
    const text = new TextDecoder();
    for await (const bytes of res.body) {
      timer.restart(ctx.idleTimeoutMs, 'idle');
      parser.feed(text.decode(bytes, { stream: true }));
      for (const event of events.splice(0)) finished = onEvent(event) || finished;
    }
    if (!finished) throw new UpstreamFailure('ended the stream before it finished', 'stream', !emitted());
  } catch (err) {
    // A silence or a dropped connection after the upstream's own end marker is not a failure.
    if (finished && !ctx.cancel.aborted && !(err instanceof UpstreamFailure)) return;
    throw classify(err, ctx, timer, emitted());
  } finally {
    timer.clear();
  }
}

function statusFailure(res: UpstreamResponse, text: string, ctx: AttemptContext): UpstreamFailure {
  let upstreamMessage: string | undefined;
  try {
    upstreamMessage = ctx.adapter.extractErrorMessage(JSON.parse(text));
  } catch {
    upstreamMessage = undefined;
  }
  const options: { status: number; retryAfterMs?: number; upstreamMessage?: string } = { status: res.status };
  const retryAfterMs = parseRetryAfter(res.header('retry-after') ?? null);
  if (retryAfterMs !== undefined) options.retryAfterMs = retryAfterMs;
  if (upstreamMessage) options.upstreamMessage = upstreamMessage;
  return new UpstreamFailure(`HTTP ${res.status}`, 'status', isRetryableStatus(res.status), options);
}

/**
 * Every error of an attempt leaves through here: as {@link CancelledError},
 * or as an {@link UpstreamFailure} scrubbed of the process's provider keys and
 * of anything shaped like a credential (src/execution/upstream-text.ts). This
 * is the one place upstream text passes on its way to the client, the logs
 * and Redis.
 */
function classify(err: unknown, ctx: AttemptContext, timer: AttemptTimer, emitted = false): Error {
  const failure = toFailure(err, ctx.cancel, timer, emitted);
  return failure instanceof UpstreamFailure ? failure.scrubbed(ctx.secrets()) : failure;
}

function toFailure(
  err: unknown,
  cancel: AbortSignal,
  timer: AttemptTimer,
  emitted: boolean,
): UpstreamFailure | CancelledError {
  if (err instanceof UpstreamFailure) return err;
  if (cancel.aborted) return new CancelledError();
  if (timer.timeout) {
    const what = timer.timeout.phase === 'idle' ? 'the stream went silent' : 'no answer before the timeout';
    return new UpstreamFailure(what, 'timeout', false);
  }
  if (err instanceof UpstreamProtocolError) return new UpstreamFailure(err.message, 'protocol', false);
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const detail = e?.code ?? e?.cause?.code ?? e?.cause?.message ?? e?.message ?? 'unknown error';
  return new UpstreamFailure(
    emitted ? `connection lost mid-stream: ${detail}` : detail,
    emitted ? 'stream' : 'network',
    !emitted,
  );
}

/**
 * The signal of one attempt: aborted when the current phase's time runs out
 * ({@link timeout} then says which) or when `cancel` aborts. One controller
 * and one listener instead of `AbortSignal.any`, whose weak references and
 * finalizers showed in the worker's profile on every call.
 */
class AttemptTimer {
  private readonly controller = new AbortController();
  private readonly cancel: AbortSignal;
  private readonly onCancel = () => this.controller.abort(this.cancel.reason);
  private timer: NodeJS.Timeout;
  /** Set when a phase ran out of time. */
  timeout: AttemptTimeout | undefined;

  constructor(ms: number, cancel: AbortSignal) {
    this.cancel = cancel;
    if (cancel.aborted) this.onCancel();
    else cancel.addEventListener('abort', this.onCancel, { once: true });
    this.timer = this.start(ms, 'first_byte');
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  restart(ms: number, phase: 'first_byte' | 'idle'): void {
    clearTimeout(this.timer);
    this.timer = this.start(ms, phase);
  }

  clear(): void {
    clearTimeout(this.timer);
    this.cancel.removeEventListener('abort', this.onCancel);
  }

  private start(ms: number, phase: 'first_byte' | 'idle'): NodeJS.Timeout {
    return setTimeout(() => {
      this.timeout = new AttemptTimeout(phase);
      this.controller.abort(this.timeout);
    }, ms);
  }
}
